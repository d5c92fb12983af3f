"""The message catalog (protocol/i18n): complete in both languages, the same placeholders, the locale rules."""

from __future__ import annotations

import string

import pytest

from zcode_acp.protocol.i18n import CATALOG, EN, LANGUAGES, ZH_CN, Translator, language_from_env, normalize, t

# Keys whose Chinese is rightly the same as the English (a name, or nothing but placeholders).
SAME_IN_BOTH = {"mode.yolo.name", "help.option.log_level"}


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_every_key_has_a_translation_in_every_language():
    keys = set(CATALOG[EN])
    for lang in LANGUAGES:
        assert set(CATALOG[lang]) == keys, (lang, sorted(set(CATALOG[lang]) ^ keys))
        assert all(CATALOG[lang][key].strip() for key in keys), lang


def test_a_chinese_message_is_not_the_english_copied():
    copied = {key for key, text in CATALOG[ZH_CN].items() if text == CATALOG[EN][key]} - SAME_IN_BOTH
    assert not copied, sorted(copied)


@pytest.mark.parametrize("key", sorted(CATALOG[EN]))
def test_placeholders_are_the_same_in_both_languages(key):
    assert placeholders(CATALOG[ZH_CN][key]) == placeholders(CATALOG[EN][key]), key


def test_every_template_formats_with_its_own_placeholders():
    for lang in LANGUAGES:
        for key, template in CATALOG[lang].items():
            t(lang, key, **{name: "x" for name in placeholders(template)})


@pytest.mark.parametrize(("tag", "expected"), [
    ("zh_CN.UTF-8", ZH_CN), ("zh-CN", ZH_CN), ("zh", ZH_CN), ("zh_TW.UTF-8", ZH_CN), ("zh-Hans", ZH_CN),
    ("en_US.UTF-8", EN), ("en", EN), ("C", None), ("POSIX", None), ("fr_FR.UTF-8", None), ("", None),
])
def test_normalize(tag, expected):
    assert normalize(tag) == expected


@pytest.mark.parametrize(("env", "expected"), [
    ({}, EN),
    ({"LANG": "zh_CN.UTF-8"}, ZH_CN),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, EN),  # LC_ALL decides, even when it names no language we have
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, ZH_CN),
    ({"LC_ALL": "", "LANG": "zh_TW.UTF-8"}, ZH_CN),  # an empty variable is unset
    ({"ZCODE_ACP_LANG": "en", "LANG": "zh_CN.UTF-8"}, EN),
    ({"ZCODE_ACP_LANG": "zh-CN", "LANG": "en_US.UTF-8"}, ZH_CN),
    ({"ZCODE_ACP_LANG": "klingon", "LANG": "zh_CN.UTF-8"}, ZH_CN),
])
def test_language_from_env(env, expected):
    assert language_from_env(env) == expected


def test_translator_fills_in_and_falls_back_to_english_for_an_unknown_language():
    assert Translator(ZH_CN)("command.goal_is", objective="发版") == "目标：发版"
    assert Translator("fr")("command.no_goal") == CATALOG[EN]["command.no_goal"]
    with pytest.raises(KeyError):
        t(EN, "no.such.key")
