"""``session/setMode`` and ``session/setThoughtLevel``: a settings change, as ``session/set_config_option``.

Both paths alike: ``Controls.set_setting`` checks the value against the session's choices and
asks the ``EnginePath`` for its call (legacy) or command (v4).
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.extension_calls import Setting

from zcode_acp.actors.session.extensions.handler import ExtensionRequest, SamePath


class SetMode(SamePath[Setting]):
    name = "session/setMode"

    def validate(self, params: dict[str, Any]) -> Setting:
        return extension_calls.set_mode(params)

    def both(self, call: Setting, request: ExtensionRequest) -> None:
        request.controls.set_setting(call.config_id, call.value, request.on_result, request.failed)


class SetThoughtLevel(SetMode):
    name = "session/setThoughtLevel"

    def validate(self, params: dict[str, Any]) -> Setting:
        return extension_calls.set_thought_level(params)
