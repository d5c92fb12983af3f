"""The page's Markdown renderer and line diff, run in chromium on tricky inputs.

The browser serializes the DOM the renderer built; raw HTML in model text must
come back escaped (it stayed text), and links only for http(s)/mailto.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import require_browser

REPO = Path(__file__).resolve().parents[2]

MARKDOWN = {
    "# Title\n\nSome <b>html</b> & `a<b>`":
        '<h3 class="md-h">Title</h3><p>Some &lt;b&gt;html&lt;/b&gt; &amp; <code>a&lt;b&gt;</code></p>',
    "<script>alert(1)</script>\n<img src=x onerror=alert(2)>":
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>&lt;img src=x onerror=alert(2)&gt;</p>",
    "```html\n<script>x()</script>\n```":
        '<pre class="md-code"><code data-language="html">&lt;script&gt;x()&lt;/script&gt;</code></pre>',
    "```\nstill streaming":
        '<pre class="md-code"><code>still streaming</code></pre>',
    "[a](javascript:alert(1)) [b](data:text/html,hi) [c](/relative) [d](https://ok.test/a?q=1) <mailto:x@y.test>":
        '<p><span class="md-link-refused">a</span> <span class="md-link-refused">b</span> '
        '<span class="md-link-refused">c</span> '
        '<a href="https://ok.test/a?q=1" target="_blank" rel="noopener noreferrer nofollow">d</a> '
        '<a href="mailto:x@y.test" target="_blank" rel="noopener noreferrer nofollow">mailto:x@y.test</a></p>',
    "See https://bare.test/path. ![logo](https://img.test/x.png)":
        '<p>See <a href="https://bare.test/path" target="_blank" rel="noopener noreferrer nofollow">https://bare.test/path</a>. '
        '<a href="https://img.test/x.png" target="_blank" rel="noopener noreferrer nofollow">🖼 logo</a></p>',
    "**bold** *it* ~~gone~~ snake_case_name \\*literal\\*":
        "<p><strong>bold</strong> <em>it</em> <del>gone</del> snake_case_name *literal*</p>",
    "- one\n- two\n  - nested\n\n3. three\n4. four":
        "<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>"
        '<ol start="3"><li>three</li><li>four</li></ol>',
    "> quoted **text**\n> more":
        "<blockquote><p>quoted <strong>text</strong><br>more</p></blockquote>",
    "| a | b |\n|---|--:|\n| 1 | <i>2</i> |":
        '<div class="md-table"><table><thead><tr><th>a</th><th class="align-right">b</th></tr></thead>'
        '<tbody><tr><td>1</td><td class="align-right">&lt;i&gt;2&lt;/i&gt;</td></tr></tbody></table></div>',
    "---\ntext": "<hr><p>text</p>",
}

# The CommonMark 0.31.2 specification's code-span examples (section 6.1), by number, with the
# spec's HTML as the browser serializes it. Left out: 333 (a no-break space), 334 and 336
# (a line ending between or inside spans: the page keeps line breaks as <br>, like GFM's
# chat renderers), 344-346 (raw HTML and autolinks, which the page never renders as such).
COMMONMARK_CODE_SPANS = {
    328: ("`foo`", "<p><code>foo</code></p>"),
    329: ("`` foo ` bar ``", "<p><code>foo ` bar</code></p>"),
    330: ("` `` `", "<p><code>``</code></p>"),
    331: ("`  ``  `", "<p><code> `` </code></p>"),
    332: ("` a`", "<p><code> a</code></p>"),
    335: ("` `", "<p><code> </code></p>"),
    337: ("`foo   bar \nbaz`", "<p><code>foo   bar  baz</code></p>"),
    338: ("`foo\\`bar`", "<p><code>foo\\</code>bar`</p>"),
    339: ("``foo`bar``", "<p><code>foo`bar</code></p>"),
    340: ("` foo `` bar `", "<p><code>foo `` bar</code></p>"),
    341: ("*foo`*`", "<p>*foo<code>*</code></p>"),
    342: ("[not a `link](/foo`)", "<p>[not a <code>link](/foo</code>)</p>"),
    343: ('`<a href="`">`', '<p><code>&lt;a href="</code>"&gt;`</p>'),
    347: ("```foo``", "<p>```foo``</p>"),
    348: ("`foo", "<p>`foo</p>"),
    349: ("`foo``bar``", "<p>`foo<code>bar</code></p>"),
}
MARKDOWN.update({source: html for source, html in COMMONMARK_CODE_SPANS.values()})
# What a model writes: inline triple backticks (stray ones were left before), spans in a sentence.
MARKDOWN.update({
    "Run ```npm test``` then `make` and ``a ` b``.":
        "<p>Run <code>npm test</code> then <code>make</code> and <code>a ` b</code>.</p>",
})

DIFFS: list[tuple[str | None, str, list[list[str]]]] = [
    ("a\nb\nc\n", "a\nB\nc\n", [[" ", "a"], ["-", "b"], ["+", "B"], [" ", "c"]]),
    (None, "new\nfile\n", [["+", "new"], ["+", "file"]]),
    ("".join(f"l{i}\n" for i in range(20)), "".join(f"l{i}\n" for i in range(19)) + "changed\n",
     [["…", "16 unchanged lines"], [" ", "l16"], [" ", "l17"], [" ", "l18"], ["-", "l19"], ["+", "changed"]]),
]


@pytest.fixture(scope="module")
def rendered() -> dict[str, Any]:
    require_browser()
    cases = {"markdown": list(MARKDOWN), "diff": [[old, new] for old, new, _ in DIFFS]}
    done = subprocess.run([sys.executable, "-m", "tests.web.render_units"], cwd=REPO, input=json.dumps(cases),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("index, source", list(enumerate(MARKDOWN)))
def test_markdown_builds_safe_dom(rendered: dict[str, Any], index: int, source: str) -> None:
    assert rendered["markdown"][index] == MARKDOWN[source]
    assert rendered["pwned"] is None and rendered["errors"] == []


@pytest.mark.parametrize("index", range(len(DIFFS)))
def test_line_diff(rendered: dict[str, Any], index: int) -> None:
    assert rendered["diff"][index] == DIFFS[index][2]
