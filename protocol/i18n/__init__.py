"""The bridge's message catalog: every string a person reads, in English and Chinese (issue 24).

Pure: the language is passed in (``Config.lang``, resolved once at start from
``ZCODE_ACP_LANG`` or the locale by :func:`language_from_env`, which is given
the environment, never reads it). Keys are stable dotted names
(``notice.busy``, ``mode.plan.name``); a template's placeholders are
``str.format`` fields, the same in both languages (``tests/protocol/test_i18n.py``).
A key a language lacks falls back to English, so a user never reads a key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .en import MESSAGES as _EN

EN = "en"
ZH_CN = "zh-CN"
LANGUAGES = (EN, ZH_CN)


class _Catalogs(Mapping[str, Mapping[str, str]]):
    """Each language's messages. English is always loaded (every other language falls back to it);
    another language's module is imported at its first use, so a bridge that speaks English never
    loads the Chinese catalog (docs/performance.md, "Time to a first session")."""

    def __getitem__(self, lang: str) -> Mapping[str, str]:
        if lang == EN:
            return _EN
        if lang == ZH_CN:
            from .zh_cn import MESSAGES

            return MESSAGES
        raise KeyError(lang)

    def __iter__(self) -> Iterator[str]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)


CATALOG: Mapping[str, Mapping[str, str]] = _Catalogs()
# The locale variables, most specific first (POSIX: the first one set decides the messages' language).
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def normalize(tag: str) -> str | None:
    """A language tag or locale name → one of :data:`LANGUAGES`, or None when it names neither.

    ``zh_CN.UTF-8``, ``zh-CN``, ``zh``, ``zh_TW``, ``zh-Hans`` → ``zh-CN`` (the only Chinese the
    catalog has); ``en``, ``en_US.UTF-8`` → ``en``; ``C``, ``POSIX``, ``fr_FR`` → None.
    """
    base = tag.strip().split(".", 1)[0].split("@", 1)[0].replace("_", "-").lower()
    language = base.split("-", 1)[0]
    if language == "zh":
        return ZH_CN
    if language == "en":
        return EN
    return None


def language_from_env(env: Mapping[str, str]) -> str:
    """``ZCODE_ACP_LANG`` if it names a language, else the locale's messages language, else English."""
    chosen = normalize(env.get("ZCODE_ACP_LANG", ""))
    if chosen is not None:
        return chosen
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return normalize(value) or EN
    return EN


def t(lang: str, key: str, **params: Any) -> str:
    """The message ``key`` in ``lang`` (English when ``lang`` lacks it), with ``params`` filled in."""
    template = (_EN if lang == EN else CATALOG.get(lang, _EN)).get(key)
    if template is None:
        template = _EN[key]  # a key nobody defined is a bug: KeyError, caught by the tests
    return template.format(**params)


class Translator:
    """``t`` bound to one language: ``tr = Translator("zh-CN"); tr("notice.busy")``."""

    __slots__ = ("lang",)

    def __init__(self, lang: str = EN) -> None:
        self.lang = lang if lang in CATALOG else EN

    def __call__(self, key: str, **params: Any) -> str:
        return t(self.lang, key, **params)
