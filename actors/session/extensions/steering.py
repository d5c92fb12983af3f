"""Text into the running turn: ``session/steer {content}`` and ``session/steering {prompt}``.

Both paths alike: ``Controls.steer`` sends ``session/steer`` or, on an engine that speaks the
ZCode Protocol, ``v4/command sendText`` with ``requestedDelivery: "guide"``. The AIR name
answers in the reference adapters' ``{outcome}`` shape (air.py).
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.extension_calls import Steer

from zcode_acp.actors.session.extensions.air import steering_answers
from zcode_acp.actors.session.extensions.handler import ExtensionRequest, SamePath


class SteerText(SamePath[Steer]):
    name = "session/steer"

    def validate(self, params: dict[str, Any]) -> Steer:
        return extension_calls.steer(params)

    def both(self, call: Steer, request: ExtensionRequest) -> None:
        request.controls.steer(call.text, request.on_result, request.failed)


class Steering(SteerText):
    name = "session/steering"

    def validate(self, params: dict[str, Any]) -> Steer:
        return extension_calls.steering(params)

    def both(self, call: Steer, request: ExtensionRequest) -> None:
        super().both(call, request.answered(*steering_answers(call.prompt_required_when_idle, request.on_result,
                                                              request.on_error)))
