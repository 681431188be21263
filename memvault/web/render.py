"""HTML: the pages' Jinja templates (autoescaped, so a note holding `<script>` is shown as text) and a
small Markdown reading of a note (headings, list items, fences, paragraphs), every piece of its text
escaped: the panel shows a note, it never runs one."""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.responses import HTMLResponse

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_SAVED = re.compile(r"[ \t]*<!--[ \t]*saved[ \t]+\d{4}-\d{2}-\d{2}[ \t]*-->")
_FIELD = re.compile(r"\[(\w+)::[ \t]*([^\]\n]*)\]")
_TAG = re.compile(r"(?<!\S)#([\w/-]+)")


@cache
def environment() -> Environment:
    env = Environment(loader=PackageLoader("memvault.web", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.globals["query"] = lambda **kw: urlencode({k: v for k, v in kw.items() if v not in (None, "")})
    env.filters["note_html"] = note_html
    env.filters["summary_html"] = summary_html
    return env


def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(environment().get_template(name).render(**context), status)


def _inline(text: str) -> Markup:
    """One line's text, escaped, its inline fields and tags marked up (the escaped text is what is split)."""
    out = escape(_SAVED.sub("", text))
    out = Markup(_FIELD.sub(lambda m: f'<span class="field">[{m[1]}:: {m[2]}]</span>', str(out)))
    return Markup(_TAG.sub(lambda m: f'<span class="tag">#{m[1]}</span>', str(out)))


def summary_html(summary: str | None) -> Markup:
    """A day's summary, escaped, each clause struck when its fact was corrected or forgotten
    (`vault.struck`) shown struck through, with why and when."""
    from memvault.vault.days import STRUCK

    out, at = [], 0
    for found in STRUCK.finditer(summary or ""):
        out += [str(escape(found.string[at : found.start()])), f"<del>{escape(found['clause'])}</del> "
                f'<span class="struck">({escape(found["why"])} {escape(found["day"])})</span>']  # fmt: skip
        at = found.end()
    return Markup("".join([*out, str(escape((summary or "")[at:]))]))


def note_html(text: str) -> Markup:
    """A note's Markdown as HTML, enough to read it: frontmatter as a block, headings, list items (nested
    by indentation), fenced code, paragraphs. Every piece of text passes `escape` first."""
    lines = text.split("\n")
    out: list[str] = []
    if lines and lines[0].strip() == "---" and "---" in (x.strip() for x in lines[1:]):
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        out.append(f'<pre class="frontmatter">{escape(chr(10).join(lines[1:end]))}</pre>')
        lines = lines[end + 1 :]
    fence: list[str] | None = None
    for line in lines:
        if fence is not None:
            if line.strip().startswith(("```", "~~~")):
                out.append(f"<pre>{escape(chr(10).join(fence))}</pre>")
                fence = None
            else:
                fence.append(line)
            continue
        if line.strip().startswith(("```", "~~~")):
            fence = []
        elif heading := _HEADING.match(line):
            level = len(heading[1])
            out.append(f"<h{level + 1}>{_inline(heading[2])}</h{level + 1}>")
        elif item := _ITEM.match(line):
            depth = len(item[1].expandtabs(4)) // 2
            out.append(f'<div class="item" data-depth="{min(depth, 6)}">• {_inline(item[2])}</div>')
        elif line.strip():
            out.append(f'<div class="line">{_inline(line.strip())}</div>')
    if fence is not None:
        out.append(f"<pre>{escape(chr(10).join(fence))}</pre>")
    return Markup("\n".join(out))
