"""Text a person reads in a list or a heading (a session's title): nothing in it may change how
the text around it is shown.

A bidi control (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) makes "\\u202etxt.exe" show as
"exe.txt", in the hub's listing, the web page, an editor's session list. Titles come from the
engine, from prompts and from other bridges, so every title is passed through ``shown_title``
where it is produced (issue 29). Pure: no I/O.
"""

from __future__ import annotations

# Embeddings and overrides, isolates, the marks, and Arabic's letter mark.
BIDI_CONTROLS = frozenset({*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)),
                           "\u200e", "\u200f", "\u061c"})


def _hidden(char: str) -> bool:
    code = ord(char)
    return char in BIDI_CONTROLS or code < 0x20 or 0x7F <= code <= 0x9F


def shown_title(text: str) -> str:
    """``text`` without bidi controls and control characters (a title is one line)."""
    if text.isprintable() and not BIDI_CONTROLS.intersection(text):
        return text  # the common case: nothing to drop
    return "".join(char for char in text if not _hidden(char))
