"""The extension methods' handlers (actors/session/extensions/): one table, each read once, the
v4-only ones refused on the legacy path."""

from __future__ import annotations

from typing import Any

import pytest

from zcode_acp.actors.session.extensions.handler import ExtensionRequest, V4Only
from zcode_acp.actors.session.extensions.table import HANDLERS, extension_name
from zcode_acp.protocol.errors import METHOD_NOT_FOUND

v4_only_names = sorted(name for name, handler in HANDLERS.items() if isinstance(handler, V4Only))


def test_each_handler_is_listed_under_its_name_and_with_a_leading_underscore():
    for name, handler in HANDLERS.items():
        assert handler.name == name
        assert extension_name(name) == name and extension_name("_" + name) == name
    assert extension_name("session/nope") is None and extension_name("_session/nope") is None


def test_the_v4_only_methods_are_the_ones_the_mapping_lists():
    listed = ["session/queue", "session/queueEdit", "session/queueRemove", "session/queueSendNow", "session/retry",
              "session/editPrompt", "session/fileChanges"]  # docs/protocol-mapping.md, "Only on the v4 path"
    assert v4_only_names == sorted(listed)


@pytest.mark.parametrize("name", v4_only_names)
def test_a_v4_only_method_on_the_legacy_path_is_method_not_found_in_the_users_words(name):
    handler = HANDLERS[name]
    params: dict[str, Any] = {"queueItemId": "q1", "text": "t"}
    errors: list[Any] = []
    for lang, words in (("en", "needs the engine"), ("zh-CN", "需要引擎")):
        errors.clear()
        handler.on_legacy(handler.validate(params), ExtensionRequest(
            name, None, None, 1, pytest.fail, errors.append, lang))  # type: ignore[arg-type]
        [error] = errors
        assert error.code == METHOD_NOT_FOUND and name in error.message and words in error.message
