"""README.md and README.zh-CN.md say the same things (issue 29: the Chinese one lacked four sections).

Compared section by section: the same headings' levels in the same order, and in each section the
same tables (their row counts), the same code blocks (their language and their lines, a shell
line's ``# comment`` aside, which is prose), the same number of list items and the same link
targets. A section added to one side only fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def sections(text: str) -> list[dict]:
    """The README cut at its headings, each section's comparable shape."""
    parts = re.split(r"^(#{1,6}) .*$", text, flags=re.M)
    found = [{"level": 0, "body": parts[0]}]
    for level, body in zip(parts[1::2], parts[2::2], strict=True):
        found.append({"level": len(level), "body": body})
    for section in found:
        body = section.pop("body")
        blocks = [(lang, [re.sub(r"\s+#\s.*$", "", line).rstrip() for line in code.splitlines()])
                  for lang, code in FENCE.findall(body)]
        prose = FENCE.sub("", body)
        tables, rows = [], 0
        for line in prose.splitlines() + [""]:
            if line.startswith("|"):
                rows += 1
            elif rows:
                tables.append(rows)
                rows = 0
        section.update(blocks=blocks, tables=tables,
                       items=len(re.findall(r"^\* ", prose, re.M)),
                       links=sorted(re.findall(r"\]\(([^)]+)\)", prose)))
    return found


ENGLISH = sections((ROOT / "README.md").read_text())
CHINESE = sections((ROOT / "README.zh-CN.md").read_text())


def test_the_same_sections_in_the_same_order():
    assert [s["level"] for s in CHINESE] == [s["level"] for s in ENGLISH]


@pytest.mark.parametrize("index", range(len(ENGLISH)))
def test_each_section_holds_the_same_tables_code_lists_and_links(index):
    english, chinese = ENGLISH[index], CHINESE[index] if index < len(CHINESE) else {}
    for key in ("tables", "blocks", "items"):
        assert chinese.get(key) == english[key], (index, key)
    # The language links point at each other: README.md ↔ README.zh-CN.md.
    swap = {"README.md": "README.zh-CN.md", "README.zh-CN.md": "README.md"}
    assert chinese.get("links") == sorted(swap.get(link, link) for link in english["links"]), index


def test_a_section_on_one_side_only_is_caught():
    extra = sections((ROOT / "README.zh-CN.md").read_text() + "\n## 新的一节\n\n正文\n")
    assert [s["level"] for s in extra] != [s["level"] for s in ENGLISH]
