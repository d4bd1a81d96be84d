// Filters, tests, str/dict methods, globals, the sandbox and syntax errors, one per snippet.
#include <gtest/gtest.h>

#include "snippet_cases.h"

namespace hadron::chat::testing {
namespace {

const std::vector<std::string> kFilters = {
    "{{ messages | tojson }}",
    "{{ tools | tojson(indent=2) }}",
    "{{ {'b': 1, 'a': [1, 2.5, none, true]} | tojson(sort_keys=true) }}",
    "{{ 'é\"\\n<>&\\u2028\\x01' | tojson }}{{ 'é😀' | tojson(ensure_ascii=true) }}",
    "{{ {'a': 1, 'b': [2]} | tojson(separators=(',', ':')) }}{{ [] | tojson(indent=2) }}{{ {} | "
    "tojson(indent=4) }}",
    "{{ {'a': {'b': [], 'c': [1, {'d': none}]}} | tojson(indent='\\t') }}",
    "{{ [1, [2, []]] | tojson(indent=0) }}",
    "{{ 1.0 | tojson }}{{ 1e100 | tojson }}{{ (1, 2) | tojson }}{{ none | tojson }}",
    "{{ undefined_v | tojson }}",
    "{{ {1: 'a', none: 'b', true: 'c', 1.5: 'd'} | tojson }}",
    "{{ d.items() | tojson }}",
    "{{ messages | map(attribute='role') | tojson }}",
    "{{ '  x  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ none | trim }}|{{ undefined_v | trim }}|{{ "
    "5 | trim }}",
    "{{ 'héllo' | length }} {{ [1,2] | count }} {{ {'a':1} | length }} {{ undefined_v | length }}",
    "{{ 5 | length }}",
    "{{ messages | selectattr('role') | length }}",
    "{{ [1,2,3] | first }}{{ [1,2,3] | last }}{{ 'abc' | first }}{{ [] | first }}{{ {'a':1,'b':2} "
    "| last }}",
    "{{ [1, 'a', none] | join(', ') }}|{{ messages | join('-', attribute='role') }}|{{ 'abc' | "
    "join('.') }}",
    "{{ 'hELLo wORLD' | capitalize }} {{ 'hello-world (foo) [bar]' | title }} {{ 'ÉCOLE' | lower "
    "}} {{ 'éa' | upper }}",
    "{{ 'aaa' | replace('a', 'b', 2) }} {{ 'abc' | replace('', '-') }} {{ 5 | replace('5', 'five') "
    "}}",
    "{{ undefined_v | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 "
    "| d(5, boolean=true) }}",
    "{{ 5 | string }}{{ '42' | int }}{{ ' 7 ' | int }}{{ '3.9' | int }}{{ 'x' | int }}{{ 'x' | "
    "int(9) }}",
    "{{ 4.7 | int }}{{ '1.5' | float }}{{ 'a' | float }}{{ 3 | float }}{{ true | int }}{{ none | "
    "int }}{{ '1_0' | int }}",
    "{{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 1.23456 | round(3, 'floor') }} "
    "{{ 1.2 | round(0, 'ceil') }} {{ 7 | round }}",
    "{{ -3 | abs }}{{ -2.5 | abs }}{{ [3,1,2] | min }}{{ [3,1,2] | max }}{{ [1,2,3] | sum }}{{ [] "
    "| sum }}",
    "{{ messages | map(attribute='role') | list }} {{ ['a','b'] | map('upper') | join }} {{ "
    "messages | map(attribute='nope', default='x') | list }}",
    "{{ [1,2] | map('string') | join }}{{ ['a', 'bb'] | map('length') | list }}{{ [1.5] | "
    "map('round') | list }}",
    "{{ [1,2,3,4] | select('odd') | list }} {{ [1,2,3,4] | reject('even') | list }} {{ [0,1,'',2] "
    "| select | list }}",
    "{{ [1,2,3] | select('in', [2,3]) | list }} {{ ['a','b'] | reject('equalto', 'a') | list }} {{ "
    "[1, 5] | select('gt', 2) | list }}",
    "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}",
    "{{ tools | selectattr('function.name') | list | length }} {{ messages | rejectattr('role', "
    "'eq', 'user') | list | length }}",
    "{{ messages | selectattr('reasoning_content', 'defined') | list | length }}",
    "{{ ['a','A','b','a'] | unique | list }} {{ ['a','A'] | unique(case_sensitive=true) | list }}",
    "{{ [3,1,2] | sort }} {{ ['b','A','c'] | sort }} {{ ['b','A','c'] | sort(case_sensitive=true) "
    "}} {{ [3,1,2] | sort(reverse=true) }}",
    "{{ messages | sort(attribute='role') | map(attribute='role') | join(',') }} {{ [1, 'a'] | "
    "sort }}",
    "{{ {'b': 1, 'a': 2} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} {{ {'b': 1, "
    "'A': 2} | dictsort(reverse=true) }}",
    "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(width='> "
    "', blank=true) }}|{{ '' | indent }}",
    "{{ 'hello big world, ok_x 42' | wordcount }}{{ '<b>' | safe }}{{ '<a href=\"x\">&\\'' | "
    "escape }}{{ '<' | e }}",
    "{{ messages | map(attribute='role') | list | max }}{{ ['b', 'A'] | min }}{{ [] | max }}",
    "{{ 'abc' | reverse }}{{ [1,2,3] | reverse | list }}{{ {'a': 1} | items | list }}{{ 'ab' | "
    "list }}{{ {'a':1} | list }}",
    "{{ '%s-%s' | format('a', 'b') }}|{{ 'ab' | center(7) }}|{{ messages[0] | attr('role') }}",
    "{{ x | nosuchfilter }}",
    "{% if false %}{{ x | nosuchfilter }}{% endif %}ok{{ x | nosuch if false else 1 }}",
    "{% if true %}{{ x | nosuchfilter }}{% endif %}",
    "{{ x | nosuchfilter if true }}",
    "{% for i in [1] %}{% if false %}{{ x | nosuch }}{% endif %}{% endfor %}",
    "{% if true %}{% for i in [1] %}{{ x | nosuch }}{% endfor %}{% endif %}",
    "{% if true %}{% macro m() %}{{ x | nosuch }}{% endmacro %}{% endif %}",
    "{% if true %}{% set v = x | nosuch %}{% endif %}",
    "{% if x is nosuchtest %}{% endif %}",
};

const std::vector<std::string> kTests = {
    "{{ 1 is odd }}{{ 2 is even }}{{ 6 is divisibleby 3 }}{{ x is defined }}{{ messages is defined "
    "}}{{ none is none }}",
    "{{ 1 is number }}{{ true is number }}{{ 1.0 is integer }}{{ 1 is float }}{{ true is boolean "
    "}}{{ false is false }}",
    "{{ 'a' is string }}{{ {} is mapping }}{{ [] is sequence }}{{ 'a' is iterable }}{{ 3 is "
    "iterable }}{{ d.items() is sequence }}",
    "{{ 'abc' is lower }}{{ 'ABC' is upper }}{{ 2 is in [1,2] }}{{ 1 is eq 1 }}{{ 1 is ne 2 }}{{ 1 "
    "is lt 2 }}{{ 3 is ge 3 }}",
    "{{ 1 is greaterthan 0 }}{{ 'upper' is filter }}{{ 'odd' is test }}{{ none is sameas none }}{{ "
    "x is undefined }}",
    "{{ 1 is not string }}{{ messages[0] is mapping }}{{ range is callable }}{{ undefined_v is "
    "iterable }}{{ x is equalto 5 }}",
    "{{ 1 is nosuchtest }}",
    "{{ x is defined and x is number or x is none }}",
    "{{ undefined_v is lt 3 }}",
};

const std::vector<std::string> kMethods = {
    "{{ '  x y  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '  a'.lstrip() }}|{{ 'a  '.rstrip() "
    "}}|{{ 'a\\n'.rstrip('\\n') }}",
    "{{ 'a,b,,c'.split(',') }} {{ '  a  b  '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ "
    "'a,b,c'.rsplit(',', 1) }}",
    "{{ ' a b c '.split(none, 1) }} {{ ''.split(',') }} {{ ''.split() }} {{ ' a b c '.rsplit(none, "
    "1) }} {{ 'a::b'.split('::') }}",
    "{{ 'hello'.startswith('he') }}{{ 'hello'.endswith(('x', 'lo')) }}{{ 'hello'.replace('l', 'L') "
    "}}{{ 'hello'.replace('l', 'L', 1) }}",
    "{{ 'Hello World'.upper() }}{{ 'Hello'.lower() }}{{ 'hello world'.title() }}{{ "
    "'hELLO'.capitalize() }}{{ \"they're\".title() }}",
    "{{ '{} + {} = {sum}'.format(1, 2, sum=3) }} {{ '{0}{1}{0}'.format('a', 'b') }} {{ "
    "'{{literal}}'.format() }} {{ '{!r}'.format('q') }}",
    "{{ 'héllo'.find('l') }}{{ 'hello'.find('z') }}{{ 'hello'.rfind('l') }}{{ 'hello'.count('l') "
    "}}{{ ', '.join(['a', 'b']) }}",
    "{{ '123'.isdigit() }}{{ 'abc'.isalpha() }}{{ ' '.isspace() }}{{ 'abc'.islower() }}{{ "
    "'ABC'.isupper() }}{{ ''.isdigit() }}",
    "{{ ', '.join([1, 2]) }}",
    "{{ 'a'.split('') }}",
    "{{ 'abc'.nosuchmethod() }}",
    "{{ 'abc'.nosuchmethod }}",
    "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dflt') }} {{ d.keys() | list }} {{ "
    "d.values() | list }}",
    "{{ d.items() | list }} {{ d.items() | length }} {{ d.keys() }} {{ d.values() }} {{ d.items() "
    "}} {{ 'a' in d.keys() }}",
    "{{ [1, 2, 2].count(2) }}{{ [1, 2].index(2) }}{{ (1, 2).index(1) }}{{ messages[0].get('role') "
    "}}",
};

const std::vector<std::string> kSandboxAndGlobals = {
    "{% set l = [1] %}{{ l.append(2) }}",
    "{% set l = [1] %}[{{ l.append }}]",
    "{{ d.update({'a': 1}) }}",
    "{{ d.pop('a') }}",
    "{{ ''.__class__ }}|",
    "{{ ''.__class__.__mro__ }}",
    "{{ x.__class__() }}",
    "{{ range(100001) | length }}",
    "{{ range(3) | list }}{{ range(1, 10, 3) | list }}{{ range(5, 0, -2) | list }}",
    "{{ raise_exception('boom') }}",
    "before{{ raise_exception('Message ' ~ x) }}after",
    "{{ strftime_now('%Y-%m-%d %H:%M %A %j %b %d') }}",
    "{{ dict(a=1, b=2) }} {{ namespace(x=1) }} {{ dict({'z': 0}, y=1) }}",
    "{% set j = joiner('|') %}{% for i in [1,2,3] %}{{ j() }}{{ i }}{% endfor %}",
    "{{ undefined_fn() }}",
    "{{ x() }}",
    "{{ namespace(a=1).a }}",
    "{{ lipsum is defined }}{{ cycler is defined }}",
};

const std::vector<std::string> kSyntaxErrors = {
    "{% if %}",
    "{% endif %}",
    "{{ 1 + }}",
    "{% for x in %}",
    "{{ 'unterminated }}",
    "{% nosuchtag %}",
    "{{ (1 }}",
    "{{ 1 ] }}",
    "{# unclosed",
    "{% raw %}no end",
    "{% macro m( %}{% endmacro %}",
    "{{ }}",
    "{% if true %}no end",
    "{% for x in [1] %}{% endif %}",
    "{{ 1 is }}",
    "{{ x | }}",
    "{% set %}",
    "{% else %}",
    "{{ a.b. }}",
    "{{ {'a' 1} }}",
    "{% for %}",
    "{{ 'a' if }}",
    "{%- if true -%}",
    "{{ @ }}",
};

TEST(ChatTemplateSnippets, BuiltinsMatchJinja2) {
  std::vector<RenderCase> cases = snippet_cases("filters", kFilters);
  for (auto& c : snippet_cases("tests", kTests)) cases.push_back(std::move(c));
  for (auto& c : snippet_cases("methods", kMethods)) cases.push_back(std::move(c));
  for (auto& c : snippet_cases("sandbox+globals", kSandboxAndGlobals))
    cases.push_back(std::move(c));
  for (auto& c : snippet_cases("syntax errors", kSyntaxErrors)) cases.push_back(std::move(c));
  EXPECT_EQ(compare_with_reference(cases), 0);
}

}  // namespace
}  // namespace hadron::chat::testing
