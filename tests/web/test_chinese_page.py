"""The web page in Chinese (issue 24): tests/web/chinese_scenario.py in Debian's chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.web.browser import run_scenario

ARTIFACTS = Path(__file__).resolve().parent / "artifacts-chinese"
WEB_JS = Path(__file__).resolve().parents[2] / "hub" / "web" / "js"


@pytest.mark.timeout(150)
def test_the_page_follows_navigator_languages_and_the_switch_is_remembered():
    done = run_scenario("tests.web.chinese_scenario", ARTIFACTS, 120)
    assert done.returncode == 0 and "scenario passed" in done.stdout, done.stdout + done.stderr


def _catalog(language: str) -> dict[str, str]:
    source = (WEB_JS / "i18n.js").read_text()
    start = source.index(f'  {language if language == "en" else repr(language).replace(chr(39), chr(34))}: {{')
    block = source[start:source.index("\n  },", start)]
    return dict(re.findall(r'^    "([^"]+)": "((?:[^"\\]|\\.)*)",$', block, re.M))


def test_the_page_catalog_has_every_key_in_both_languages_with_the_same_placeholders():
    english, chinese = _catalog("en"), _catalog("zh-CN")
    assert len(english) > 40 and set(english) == set(chinese), sorted(set(english) ^ set(chinese))
    for key in english:
        assert set(re.findall(r"\{(\w+)\}", english[key])) == set(re.findall(r"\{(\w+)\}", chinese[key])), key


def test_every_key_the_page_names_is_in_its_catalog():
    english = _catalog("en")
    named = set()
    for path in WEB_JS.glob("*.js"):
        named |= set(re.findall(r'\bt\("([a-z_.]+)"', path.read_text()))
    assert named and not named - set(english), sorted(named - set(english))
