"""What the user does to the conversation: fork, goal, compact, rewind, rename.

Both paths alike, through ``Controls`` (which the slash commands share); where the paths differ
(the fork, the compaction, the rename) ``Controls`` ask the ``EnginePath``.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.extension_calls import EngineCall, Rename

from zcode_acp.actors.session.extensions.handler import ExtensionRequest, SamePath


class Fork(SamePath[EngineCall]):
    """Answered by the Supervisor with the new session, once it has given it an id."""

    name = "session/fork"

    def validate(self, params: dict[str, Any]) -> EngineCall:
        return extension_calls.fork(params)

    def both(self, call: EngineCall, request: ExtensionRequest) -> None:
        request.controls.fork(call, request.conn, request.request_id, as_command=False, on_error=request.failed)


class Goal(SamePath[EngineCall]):
    name = "session/goal"

    def validate(self, params: dict[str, Any]) -> EngineCall:
        return extension_calls.goal(params)

    def both(self, call: EngineCall, request: ExtensionRequest) -> None:
        request.controls.goal(call.params, request.on_result, request.failed)


class Compact(SamePath[EngineCall]):
    """Minutes long; prompts sent meanwhile wait for it."""

    name = "session/compact"

    def validate(self, params: dict[str, Any]) -> EngineCall:
        return extension_calls.compact(params)

    def both(self, call: EngineCall, request: ExtensionRequest) -> None:
        request.controls.compact(call, request.on_result, request.failed)


class Rewind(SamePath[EngineCall]):
    """Gone from 0.16: refused there by ``Controls.call``, never sent."""

    name = "session/rewind"

    def validate(self, params: dict[str, Any]) -> EngineCall:
        return extension_calls.rewind(params)

    def both(self, call: EngineCall, request: ExtensionRequest) -> None:
        request.controls.call(call, request.on_result, request.failed)


class RenameSession(SamePath[Rename]):
    """The engine's ``renameSession`` command where it has one, else the bridge keeps the title."""

    name = "session/rename"

    def validate(self, params: dict[str, Any]) -> Rename:
        return extension_calls.rename(params)

    def both(self, call: Rename, request: ExtensionRequest) -> None:
        request.controls.rename(call.title, request.on_result, request.failed)
