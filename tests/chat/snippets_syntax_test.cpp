// Whitespace control, expressions and statements, one feature per snippet.
#include <gtest/gtest.h>

#include "snippet_cases.h"

namespace hadron::chat::testing {
namespace {

const std::vector<std::string> kWhitespace = {
    "a\n  {% if true %}\n  b\n  {% endif %}\nc",
    "{% for i in [1,2] -%}\n {{ i }}\n{%- endfor %}",
    "  {%+ if true %}x{% endif %}\n  {% if true +%}\ny{% endif %}",
    "{%- if true -%}   x   {%- endif -%}",
    "{# comment #}\nline\n  {#- c -#}  next\n{# c2 #}\n  tail",
    "{% raw %}{{ not }} {% if %}{% endraw %}\n{%- raw -%}  y  {%- endraw -%}  z",
    "text\n",
    "text\n\n",
    "a\r\nb{% if true %}\r\nc{% endif %}\rd",
    "{{ 'x' }}\n{{ 'y' }}\n  {{ 'z' }}",
    "  {{- 'x' -}}  \n y",
    "{% if true %}  \t{% endif %}\n",
    "\t{% for x in [1] %}\n\t{{ x }}\n\t{% endfor %}\n",
    "x {% if true %}y{% endif %} z",
    "line\n    {%- if true %}\nA{% endif %}",
    "{%- set a = 1 -%}\n\n  {{ a }}",
    "{{ 'a' -}}\n  {#- x #}\n b",
};

const std::vector<std::string> kExpressions = {
    "{{ none }}{{ true }}{{ false }}{{ 1.0 }}{{ 1e20 }}{{ 0.1 + 0.2 }}{{ 1/3 }}{{ 10/2 }}{{ -0.0 "
    "}}",
    "{{ 1e-7 }}|{{ 123456789012345678.0 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 0.0001 }}|{{ 2.5e-5 }}|{{ big "
    "}}",
    "{{ [1, 'a', none, true, 1.5, {'k': 'v'}] }}{{ ('a',) }}{{ () }}{{ {'a': [1, (2, 3)]} }}",
    "{{ \"it's\" }}|{{ ['it\\'s', 'say \"hi\"', 'both \\' \"'] }}",
    "{{ ['\\n\\t\\\\', 'é', '\\x7f', '\\u00a0', '\\u2028', '\\x01', '日本'] }}",
    "{{ messages[0] }}|{{ d }}|{{ nested }}",
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ 2 ** 10 }} {{ 2 ** -1 "
    "}}",
    "{{ 7 / 2 }} {{ 1 + 2 * 3 - 4 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 7.0 % "
    "2.5 }}",
    "{{ 'ab' * 3 }}{{ [1] * 2 }}{{ 3 * 'x' }}{{ 1 + true }}{{ true + true }}{{ x + y }}",
    "{{ 'a' + 1 }}",
    "{{ 1 / 0 }}",
    "{{ 1 // 0 }}",
    "{{ [1] + (2,) }}",
    "{{ undefined_v + 1 }}",
    "{{ 'a' ~ 1 ~ none ~ undefined_v ~ [1] ~ 1.5 }}",
    "{{ -(3) }} {{ +3 }} {{ - 1 | abs }} {{ -x }} {{ -y }}",
    "{{ '%s and %d' % ('x', 3) }}|{{ 'v=%s' % 5 }}|{{ '%(a)s' % {'a': 1} }}|{{ '100%%' % () }}",
    "{{ 1 == 1.0 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ [1,2] < [1,3] }}",
    "{{ 'a' in 'cat' }} {{ 2 not in [1,2] }} {{ 'k' in {'k': 1} }} {{ none == none }} {{ x == y }}",
    "{{ 1 < 'a' }}",
    "{{ 'a' in none }}",
    "{{ 1 in 'abc' }}",
    "{{ x in undefined_v }}",
    "{{ 0 or 'b' }} {{ 'a' and 'b' }} {{ '' and 'b' }} {{ not 0 }} {{ none or [] }} {{ not not 'x' "
    "}}",
    "{{ 'yes' if 1 else 'no' }} {{ 'yes' if 0 }}|{{ 'x' if false else 'y' if true else 'z' }}",
    "{{ messages[0].role }} {{ messages[-1]['content'] }} {{ messages[10] }} {{ messages.0.role }}",
    "{{ d['items'] }} {{ d.z }} {{ d['z'] is none }} {{ nested.k.v[1].w }} {{ nested['k']['v'][-1] "
    "}}",
    "{{ undefined_v.attr }}",
    "{{ messages[0].nope }}|{{ n.attr }}|{{ x.attr }}",
    "{{ messages[0].nope.deeper }}",
    "{{ 'abc'[1] }} {{ 'abc'[-1] }} {{ 'abc'[5] }} {{ 'héllo'[1] }}",
    "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ 'hello'[::2] }} {{ [1,2,3,4][1:] }} {{ "
    "[1,2,3,4][:-1] }}",
    "{{ [1,2,3,4][::-2] }} {{ [1,2,3][5:] }} {{ 'héllo'[1:3] }} {{ [1,2,3][-10:10] }} {{ "
    "[1,2,3,4,5][4:1:-1] }}",
    "{{ 'abc'[::0] }}",
    "{{ 1_000 }} {{ 1e3 }} {{ 0.5e-3 }} {{ 'a' 'b' }} {{ \"\\u00e9\\x41\\101\\q\" }}",
    "{{ 1, 2 }}|{{ (1) }}|{{ [1, 2,] }}|{{ {'a': 1,} }}",
    "{{ {'a': 1, 'a': 2} }}",
    "{{ (messages | length) - 1 }} {{ messages|length - 1 }} {{ not messages|length }}",
    "{{ x is defined and x > 3 }} {{ undefined_v is defined and undefined_v.a }}",
    "{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|{{ 1_000_000 }}|{{ 0_0 }}|{{ 007.5 }}|{{ 1E3 }}|{{ 0XfF "
    "}}|{{ [[1,2]].0.1 }}",
    "{{ 07 }}",
    "{{ 0x }}",
    "{{ 1__0 }}",
    "{{ '%5s|%-5s|%.2f|%x|%05d|%+d|%.1s|%e|%g|%o|%X|%#x' % ('a', 'b', 3.14159, 255, 42, 3, 'xyz', "
    "12345.678, 0.0001, 8, 255, 255) }}",
    "{{ '%d' % 3.7 }}|{{ '%s %s' % ('a', ['b']) }}|{{ '%r' % 'q' }}|{{ '%(x)05d' % {'x': 7} }}",
    "{{ '%d' % 'a' }}",
    "{{ 'ǆa'.title() }}|{{ 'ǆa' | title }}|{{ 'ǆa'.capitalize() }}|{{ 'ǆa' | capitalize }}",
};

const std::vector<std::string> kStatements = {
    "{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
    "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}"
    "{{ loop.nextitem }}|{% endfor %}",
    "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in [1] %}{{ x }}{% else %}no{% endfor "
    "%}",
    "{% for x in range(10) if x is odd %}{{ x }}{{ loop.length }},{% endfor %}",
    "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}",
    "{% for k, v in {'a': 1} | items %}{{ k }}{{ v }}{% endfor %}{% for k in {'x': 1, 'y': 2} %}{{ "
    "k }}{% endfor %}",
    "{% for c in 'héy' %}[{{ c }}]{% endfor %}{% for (a, b) in [(1, 2)] %}{{ a + b }}{% endfor %}",
    "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% "
    "endif %}{{ i }}{% endfor %}",
    "{% for a in [1,2] %}{% set outer = loop %}{% for b in [3,4] %}{{ outer.index }}{{ loop.index "
    "}} {% endfor %}{% endfor %}",
    "{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}",
    "{% for i in range(3) %}{% if i == 0 %}{% set x = 'a' %}{% endif %}[{{ x }}]{% endfor %}",
    "{% set ns = namespace(a=1, items=[]) %}{% for i in [1,2,3] %}{% set ns.a = ns.a + i %}"
    "{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.a }} {{ ns.items }} {{ ns }}",
    "{{ loop }}|{% for x in undefined_v %}x{% else %}e{% endfor %}",
    "{% for x in none %}{% endfor %}",
    "{% for x in 5 %}{% endfor %}",
    "{% for a, b in [[1,2],[3]] %}{% endfor %}",
    "{% for i in range(4) %}{{ loop.cycle('a','b','c') }}{% endfor %}",
    "{% if 0 %}a{% elif '' %}b{% elif [1] %}c{% else %}d{% endif %}{% if n %}{% else %}E{% endif "
    "%}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}",
    "{% set x %}block {{ 1 + 1 }}{% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }}",
    "{% set x = 5 %}{% set x = x + 1 %}{{ x }}",
    "{% set ns = 3 %}{% set ns.a = 1 %}",
    "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}"
    "{{ greet('Ann') }} {{ greet('Bob', greeting='Hi') }} {{ greet(name='Cy', greeting='Yo') }}",
    "{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}{{ m(1) | length }}",
    "{% macro m() %}x{% endmacro %}{{ m(1) }}",
    "{% macro m(a) %}{% endmacro %}{{ m(b=1) }}",
    "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}",
    "{% set g = 'G' %}{% macro m() %}{{ g }}{{ x }}{% endmacro %}{{ m() }}{% set g = 'H' %}{{ m() "
    "}}",
    "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inner{% endcall %}",
    "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}"
    "{% call(item) each([1,2]) %}({{ item }}){% endcall %}",
    "{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }}",
    "{% filter upper %}abc{{ 'd' }}{% endfilter %}{% filter replace('a', 'b') | upper %}aa{% "
    "endfilter %}",
    "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]",
    "{% generation %}gen {{ 1 }}{% endgeneration %}",
    "{% if true %}{% for i in [1] %}{{ i }}{% endfor %}{% endif %}",
};

TEST(ChatTemplateSnippets, SyntaxMatchesJinja2) {
  std::vector<RenderCase> cases = snippet_cases("whitespace", kWhitespace);
  for (auto& c : snippet_cases("expressions", kExpressions)) cases.push_back(std::move(c));
  for (auto& c : snippet_cases("statements", kStatements)) cases.push_back(std::move(c));
  EXPECT_EQ(compare_with_reference(cases), 0);
}

}  // namespace
}  // namespace hadron::chat::testing
