"""Validation of frames against the official ACP schema models (PyPI ``agent-client-protocol``).

The SDK's models "salvage" some malformed optional fields to None instead of
failing; ``assert_valid_update`` therefore also checks that validation kept
every field we sent (a salvaged field would silently disappear).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import schema

from tests.acp_schema import assert_valid_acp_frame, assert_valid_acp_update

_UPDATE_MODELS = {
    "user_message_chunk": schema.UserMessageChunk,
    "agent_message_chunk": schema.AgentMessageChunk,
    "agent_thought_chunk": schema.AgentThoughtChunk,
    "tool_call": schema.ToolCallStart,
    "tool_call_update": schema.ToolCallProgress,
    "plan": schema.AgentPlanUpdate,
    "available_commands_update": schema.AvailableCommandsUpdate,
    "current_mode_update": schema.CurrentModeUpdate,
    "config_option_update": schema.ConfigOptionUpdate,
    "session_info_update": schema.SessionInfoUpdate,
    "usage_update": schema.UsageUpdate,
}

_RESULT_MODELS = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/resume": schema.ResumeSessionResponse,
    "session/list": schema.ListSessionsResponse,
    "session/prompt": schema.PromptResponse,
    "session/set_mode": schema.SetSessionModeResponse,
    "session/set_config_option": schema.SetSessionConfigOptionResponse,
    "session/close": schema.CloseSessionResponse,
    "session/delete": schema.DeleteSessionResponse,
    "session/fork": schema.ForkSessionResponse,
    "logout": schema.LogoutResponse,
    "authenticate": schema.AuthenticateResponse,
}


# Fields of ACP drafts the SDK's models do not know yet, each checked against its own schema instead
# (schemas/acp-drafts/): the "Quotas and Limits" RFD's agent capability.
DRAFT_FIELDS = {".agentCapabilities.quota": "Marker",
                "initialize.clientCapabilities.session.quota": "Marker"}  # the web page declares it
_DRAFTS = Path(__file__).parent.parent / "schemas" / "acp-drafts" / "quota.json"


def assert_valid_draft(definition: str, value: Any) -> None:
    """``value`` against ``definition`` of the quota RFD's schema (schemas/acp-drafts/quota.json)."""
    import jsonschema

    document = json.loads(_DRAFTS.read_text())
    jsonschema.validate(value, {**document, "$ref": f"#/$defs/{definition}"})


def _kept_everything(sent: Any, dumped: Any, path: str = "") -> None:
    if isinstance(sent, dict):
        assert isinstance(dumped, dict), f"{path}: became {dumped!r}"
        for key, value in sent.items():
            if value is None:
                continue
            if f"{path}.{key}" in DRAFT_FIELDS:
                assert_valid_draft(DRAFT_FIELDS[f"{path}.{key}"], value)
                continue
            assert key in dumped, f"{path}.{key} was dropped by schema validation (malformed?)"
            if key != "_meta":
                _kept_everything(value, dumped[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(dumped, list) and len(dumped) == len(sent), f"{path}: list items dropped"
        for index, (a, b) in enumerate(zip(sent, dumped, strict=True)):
            _kept_everything(a, b, f"{path}[{index}]")


def assert_renderable_tool_card(update: dict[str, Any]) -> None:
    """The schema allows any JSON as ``rawOutput``, but clients do not: Toad drops a
    whole ``tool_call_update`` whose ``rawOutput`` is a bare string (issue 21), so the
    bridge sends a JSON object or nothing."""
    if "rawOutput" in update:
        assert isinstance(update["rawOutput"], dict), (
            f"rawOutput must be a JSON object or absent, got {update['rawOutput']!r}")


# Stable since schema 1.19, so the Python SDK 0.12 has no model for them: the vendored
# ACP v1 schemas (tests/acp_schema.py) hold them instead.
NEWER_THAN_THE_PYTHON_SDK = frozenset({"notice", "compaction_update", "compaction_summary_chunk"})


def assert_valid_update(update: dict[str, Any]) -> None:
    if update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
        assert_renderable_tool_card(update)
    if update.get("sessionUpdate") == "quota_update":  # the RFD's, sent only to clients declaring session.quota
        assert_valid_draft("QuotaUpdate", update)
        return
    if update.get("sessionUpdate") in NEWER_THAN_THE_PYTHON_SDK:
        assert_valid_acp_update(update)
        return
    model = _UPDATE_MODELS.get(update.get("sessionUpdate"))
    assert model is not None, f"unknown sessionUpdate {update.get('sessionUpdate')!r}"
    parsed = model.model_validate(update)
    _kept_everything(update, parsed.model_dump(by_alias=True, mode="json"))


def assert_valid_notification(params: dict[str, Any]) -> None:
    if (params.get("update") or {}).get("sessionUpdate") == "quota_update":  # a draft the SDK's union lacks
        assert set(params) <= {"sessionId", "update", "_meta"} and isinstance(params.get("sessionId"), str), params
        assert_valid_update(params["update"])
        return
    schema.SessionNotification.model_validate(params)
    assert_valid_update(params["update"])


def assert_valid_unstable_models(models: Any) -> None:
    """The unstable ``SessionModelState`` (older ACP schemas; SDK 0.12 no longer models it):
    ``{currentModelId, availableModels: [{modelId, name, description?, _meta?}]}``."""
    assert isinstance(models, dict) and set(models) <= {"currentModelId", "availableModels", "_meta"}, models
    assert isinstance(models.get("currentModelId"), str) and isinstance(models.get("availableModels"), list)
    for entry in models["availableModels"]:
        assert isinstance(entry, dict) and set(entry) <= {"modelId", "name", "description", "_meta"}, entry
        assert isinstance(entry.get("modelId"), str) and isinstance(entry.get("name"), str), entry


def assert_valid_result(method: str, result: Any) -> None:
    model = _RESULT_MODELS.get(method)
    if model is None or result is None:
        return
    if isinstance(result, dict) and "models" in result and method in (
            "session/new", "session/load", "session/resume", "session/fork"):
        assert_valid_unstable_models(result["models"])
        result = {key: value for key, value in result.items() if key != "models"}
    parsed = model.model_validate(result)
    _kept_everything(result, parsed.model_dump(by_alias=True, mode="json"))


def is_draft_update(frame: dict[str, Any]) -> bool:
    params = frame.get("params") if frame.get("method") == "session/update" else None
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") == "quota_update"


def assert_valid_frame(frame: dict[str, Any], methods_by_id: dict[Any, str] | None = None) -> None:
    """One frame the bridge wrote: envelope shape, the payload against the Python SDK's
    models, and the whole frame against the ACP v1 schemas of the TypeScript SDK 2.4.0
    (``tests/acp_schema.py``)."""
    assert frame.get("jsonrpc") == "2.0", frame
    if not is_draft_update(frame):  # the quota RFD's update: no SDK schema has it (schemas/acp-drafts/)
        assert_valid_acp_frame(frame, methods_by_id)
    if "method" in frame:
        assert isinstance(frame["method"], str)
        if frame["method"] == "session/update":
            assert_valid_notification(frame["params"])
        elif frame["method"] == "session/request_permission":
            parsed = schema.RequestPermissionRequest.model_validate(frame["params"])
            _kept_everything(frame["params"], parsed.model_dump(by_alias=True, mode="json"))
        elif frame["method"] == "elicitation/create":
            from pydantic import TypeAdapter

            parsed = TypeAdapter(schema.CreateElicitationRequest).validate_python(frame["params"])
            _kept_everything(frame["params"], TypeAdapter(schema.CreateElicitationRequest).dump_python(
                parsed, by_alias=True, mode="json"))
        elif frame["method"] == "$/cancel_request":
            assert "requestId" in frame["params"]
        return
    assert "id" in frame and (("result" in frame) != ("error" in frame)), frame
    if "error" in frame:
        schema.Error.model_validate(frame["error"]) if hasattr(schema, "Error") else None
        assert isinstance(frame["error"].get("code"), int) and isinstance(frame["error"].get("message"), str)
    elif methods_by_id and frame["id"] in methods_by_id:
        assert_valid_result(methods_by_id[frame["id"]], frame["result"])
