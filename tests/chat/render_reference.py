#!/usr/bin/env python3
"""Reference renderer for hadron's chat-template tests.

Renders chat templates the way Hugging Face transformers does (`render_jinja_template` in
transformers/utils/chat_template_utils.py): a jinja2 ImmutableSandboxedEnvironment with
trim_blocks and lstrip_blocks, the loopcontrols extension, a `{% generation %}` block that just
renders its body (transformers' AssistantTracker), transformers' own `tojson` filter and the
globals `raise_exception` and `strftime_now`. Only the standard library and jinja2 are needed.

Usage: render_reference.py CASES.json RESULTS.json
  CASES.json: [{"template": str, "context": {...}, "now": "YYYY-MM-DDTHH:MM:SS"}, ...]
  RESULTS.json: [{"ok": true, "output": str} | {"ok": false, "error": str}, ...] in the same order
"""

import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationBlock(Extension):
    """`{% generation %}...{% endgeneration %}`: renders the body (transformers tracks its span)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers replaces jinja's tojson (which HTML-escapes) with plain json.dumps.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def make_environment(now):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    return env


def render_case(case, compiled):
    now = datetime.fromisoformat(case["now"])
    key = (case["template"], case["now"])
    try:
        if key not in compiled:
            compiled[key] = make_environment(now).from_string(case["template"])
        template = compiled[key]
        if isinstance(template, Exception):
            raise template
        return {"ok": True, "output": template.render(**case["context"])}
    except Exception as e:  # every failure mode must fail in hadron too
        compiled.setdefault(key, e)
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    compiled = {}
    results = [render_case(case, compiled) for case in cases]
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
