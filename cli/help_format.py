"""``--help`` in any language: text wrapped by display width, and typer's own words translated.

click wraps by ``len``: a Chinese character is one there but two columns on a terminal, and
Chinese has no spaces to break at, so Chinese help ran past 80 columns (issue 29). This formatter
measures columns (East Asian wide and full-width characters are two) and may break between two
wide characters. typer's few words of its own (``[default: …]``, ``[required]``) come from
``gettext`` at call time; :func:`translate_typer` points them at the catalog.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from typer._click.formatting import HelpFormatter

from zcode_acp.protocol.i18n import Translator

# A run of narrow non-space characters stays whole; each wide character is a token of its own.
_TOKEN = re.compile(r"\s+|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
                    r"|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]+")
# Closing punctuation never starts a line (it stays with what it closes).
_NO_LINE_START = set("，。、；：！？）》」』】〉,.;:!?)")


def width_of(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """``text`` (one paragraph) in lines of at most ``width`` columns, where the words allow."""
    lines: list[str] = []
    line, used = initial_indent, width_of(initial_indent)
    fresh = True  # nothing but the indent on this line yet
    for token in _TOKEN.findall(" ".join(text.split())):
        if token.isspace():
            if not fresh:
                line, used = line + " ", used + 1
            continue
        size = width_of(token)
        if used + size > width and not fresh and token[0] not in _NO_LINE_START:
            lines.append(line.rstrip())
            line, used = subsequent_indent, width_of(subsequent_indent)
        line, used, fresh = line + token, used + size, False
    if not fresh:
        lines.append(line.rstrip())
    return lines


class DisplayWidthFormatter(HelpFormatter):
    """click's formatter, with paragraphs and definition lists wrapped by display width."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        for index, paragraph in enumerate(p for p in text.split("\n\n") if p.strip()):
            if index:
                self.write("\n")
            for line in wrap(paragraph, self.width, indent, indent):
                self.write(line + "\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((width_of(term) for term, _ in rows), default=0), col_max)
        indent = " " * self.current_indent
        text_indent = " " * (self.current_indent + first + col_spacing)
        for term, definition in rows:
            self.write(indent + term)
            if not definition:
                self.write("\n")
                continue
            lines = wrap(definition, self.width, text_indent, text_indent)
            if width_of(term) <= first:
                self.write(" " * (first - width_of(term) + col_spacing) + lines[0].lstrip() + "\n")
                lines = lines[1:]
            else:
                self.write("\n")
            for line in lines:
                self.write(line + "\n")


# typer's own msgids (typer/core.py) and the catalog key of each.
TYPER_WORDS = {"default: {default}": "help.typer.default", "required": "help.typer.required",
               "env var: {var}": "help.typer.env_var", "(dynamic)": "help.typer.dynamic"}


def translate_typer(tr: Translator, modules: Iterable[Any]) -> None:
    """Make typer's ``_`` (the stdlib's ``gettext``, bound at import) answer from the catalog."""
    def words(message: str) -> str:
        key = TYPER_WORDS.get(message)
        if key is None:
            return message
        return tr(key).replace("{{", "{").replace("}}", "}")

    for module in modules:
        module._ = words
