"""Validation of the frames a bridge writes against the ACP v1 JSON Schemas (``schemas/acp-v1/``).

The Python SDK's models (``tests/schema.py``) are generated from an older schema; these are
the stable and unstable v1 schemas that the official TypeScript SDK 2.4.0 ships, vendored
(``schemas/acp-v1/README.md``). Every frame is checked against both:

* the whole frame against the schema's ``Agent`` branch (what an agent may send);
* a request or notification's ``params`` against the definition whose ``x-method`` names
  its method, and a result against the response definition of the request it answers.

A method or ``sessionUpdate`` that only the unstable schema defines (``session/fork``)
is checked by the unstable schema alone: the stable one has no definition to hold it to,
and sends it to its catch-all extension branch.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas" / "acp-v1"
SCHEMA_FILES = {"stable": "schema.json", "unstable": "schema.unstable.json"}
# The sides whose requests and notifications the bridge *receives* (an agent's methods)
# and *sends* (a client's methods), as the schema's ``x-side`` names them.
AGENT_SIDE = "agent"
CLIENT_SIDE = "client"


class AcpSchema:
    """One vendored schema file: its frame validator and its per-method validators."""

    def __init__(self, name: str, document: dict[str, Any]) -> None:
        self.name = name
        self.defs: dict[str, Any] = document["$defs"]
        self._compiled: dict[str, Any] = {}
        agent_branch = next(branch for branch in document["anyOf"] if branch.get("title") == "Agent")
        self.frame = self._validator(agent_branch)
        # (side, method) -> definition names: a request and its response share a method.
        self.by_method: dict[tuple[str, str], list[str]] = {}
        for def_name, definition in self.defs.items():
            method = definition.get("x-method")
            if method:
                self.by_method.setdefault((definition.get("x-side", ""), method), []).append(def_name)
        self.update_kinds = {
            variant["properties"]["sessionUpdate"]["const"]
            for variant in self.defs["SessionUpdate"]["oneOf"]}

    def _validator(self, schema: dict[str, Any]) -> Any:
        return jsonschema_rs.Draft202012Validator(
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": self.defs, **schema})

    def definition(self, def_name: str) -> Any:
        if def_name not in self._compiled:
            self._compiled[def_name] = self._validator({"$ref": f"#/$defs/{def_name}"})
        return self._compiled[def_name]

    def named(self, side: str, method: str, suffix: str) -> str | None:
        """The definition of ``method`` on ``side`` whose name ends in ``suffix``
        (``Request``, ``Response``, ``Notification``)."""
        for def_name in self.by_method.get((side, method), []):
            if def_name.endswith(suffix):
                return def_name
        return None


@functools.cache
def schemas() -> tuple[AcpSchema, ...]:
    return tuple(AcpSchema(name, json.loads((SCHEMAS / file).read_text(encoding="utf-8")))
                 for name, file in SCHEMA_FILES.items())


def _check(schema: AcpSchema, validator: Any, value: Any, what: str) -> list[str]:
    return [f"{schema.name} schema, {what} at {'/'.join(map(str, error.instance_path)) or '<root>'}: {error.message}"
            for error in validator.iter_errors(value)][:3]


# Text chunks are most of a long turn's frames (150,000 in one test): their text is any string to
# both schemas, so one check holds for every chunk of the same shape, whatever its text.
TEXT_CHUNKS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


Shape = tuple[tuple[tuple[str, Any], ...], ...]


def _flat(mapping: dict[str, Any], nested: str) -> tuple[tuple[str, Any], ...] | None:
    """``mapping``'s items but ``nested``, if each is a plain scalar (else None: no shared check)."""
    items = tuple(sorted((key, value) for key, value in mapping.items() if key != nested))
    return items if all(type(value) in (str, int, bool) or value is None for _, value in items) else None


def _text_free_shape(frame: dict[str, Any]) -> Shape | None:
    """A text chunk's frame without its text, as a hashable key; None for any other frame."""
    params = frame.get("params")
    update = params.get("update") if frame.get("method") == "session/update" and isinstance(params, dict) else None
    content = update.get("content") if isinstance(update, dict) else None
    if not (isinstance(content, dict) and update.get("sessionUpdate") in TEXT_CHUNKS
            and content.get("type") == "text" and isinstance(content.get("text"), str)):
        return None
    parts = (_flat(frame, "params"), _flat(params, "update"), _flat(update, "content"), _flat(content, "text"))
    return None if any(part is None for part in parts) else parts  # type: ignore[return-value]


def frame_findings(frame: dict[str, Any], methods_by_id: dict[Any, str] | None = None) -> list[str]:
    """What each vendored schema finds wrong with one frame the bridge wrote (empty: valid)."""
    shape = _text_free_shape(frame)
    if shape is not None:
        return list(_shape_findings(shape))
    return _frame_findings(frame, methods_by_id)


@functools.lru_cache(maxsize=4096)
def _shape_findings(shape: Shape) -> tuple[str, ...]:
    frame_items, params_items, update_items, content_items = shape
    frame = {**dict(frame_items), "params": {**dict(params_items), "update": {
        **dict(update_items), "content": {**dict(content_items), "text": ""}}}}
    return tuple(_frame_findings(frame, None))


def _frame_findings(frame: dict[str, Any], methods_by_id: dict[Any, str] | None = None) -> list[str]:
    findings: list[str] = []
    for schema in schemas():
        findings += _check(schema, schema.frame, frame, "frame")
        method = frame.get("method")
        if isinstance(method, str):
            kind = "Request" if "id" in frame else "Notification"
            def_name = schema.named(CLIENT_SIDE, method, kind) or schema.named("protocol", method, kind)
            if def_name is None or "params" not in frame:
                continue
            params = frame["params"]
            if method == "session/update" and isinstance(params, dict):
                kind_name = (params.get("update") or {}).get("sessionUpdate")
                if kind_name not in schema.update_kinds and schema.name == "stable":
                    continue  # an unstable-only update: the unstable schema holds it
            findings += _check(schema, schema.definition(def_name), params, f"{method} params")
        elif "result" in frame and methods_by_id and frame.get("id") in methods_by_id:
            def_name = schema.named(AGENT_SIDE, methods_by_id[frame["id"]], "Response")
            if def_name is not None:
                findings += _check(schema, schema.definition(def_name), frame["result"],
                                   f"{methods_by_id[frame['id']]} result")
    return findings


def assert_valid_acp_frame(frame: dict[str, Any], methods_by_id: dict[Any, str] | None = None) -> None:
    findings = frame_findings(frame, methods_by_id)
    assert not findings, "\n".join(findings)


def assert_valid_acp_update(update: dict[str, Any]) -> None:
    """One ``sessionUpdate`` against every vendored schema's ``SessionUpdate``."""
    findings = [finding for schema in schemas()
                for finding in _check(schema, schema.definition("SessionUpdate"), update, "update")]
    assert not findings, "\n".join(findings)
