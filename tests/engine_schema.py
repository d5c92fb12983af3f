"""Validation of bridge↔engine frames against the engine's JSON Schemas (``schemas/``).

Two schema sets: ``schemas/engine/`` (the 0.16 engine, written from its official zod
definitions) and ``schemas/classic/`` (the seed's app-server, written from
docs/backend-protocol.md). ``schemas/engine/README.md`` lists them and their sources.

``check_conversation(frames, dialect)`` checks the ordered frames of one conversation,
both directions: the envelope of every frame; a request's params by its method (the
table of the direction it travels in); a response against the result schema of the
request it answers (ids correlated per direction); an error's shape; a notification by
its method (``session/event`` by the event's ``type``). A frame no schema covers is a
finding, not a pass. Each finding names the frame, its direction, the schema and the
JSON path. Schemas are loaded once per process.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, relevance
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
BASE = "https://zcode-acp.invalid/schemas/"
HOST_TO_ENGINE = "host->engine"
ENGINE_TO_HOST = "engine->host"
DIRECTIONS = (HOST_TO_ENGINE, ENGINE_TO_HOST)
# Which folder holds the requests that travel in each direction.
REQUEST_FOLDERS = {HOST_TO_ENGINE: ("methods", "v4"), ENGINE_TO_HOST: ("host-requests",)}
NOTIFICATION_FOLDERS = {HOST_TO_ENGINE: (), ENGINE_TO_HOST: ("notifications", "v4")}
DIALECT_SETS = {"cli016": "engine", "engine": "engine", "classic": "classic"}
MAX_ERRORS_PER_FRAME = 3
CHUNK_LIMIT = 512 * 1024
"""Decoded bytes of one ``v4/attachment/chunk`` (``core.ts`` PROTOCOL_V4_LIMITS): a length bound in the
schema cannot say it exactly, so the check decodes."""


@dataclass(frozen=True)
class Finding:
    """One frame that failed: where it is, what it is, which schema refused it and why."""

    index: int
    direction: str
    what: str
    schema: str
    path: str
    message: str
    conversation: str = ""

    def __str__(self) -> str:
        where = f"{self.conversation} " if self.conversation else ""
        return (f"{where}frame {self.index} ({self.direction}, {self.what}): {self.schema} "
                f"at {self.path}: {self.message}")

    def as_dict(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "index": self.index, "direction": self.direction,
                "what": self.what, "schema": self.schema, "path": self.path, "message": self.message}


class SchemaSet:
    """Every schema of one set, registered under a URI made from its path, with the method tables."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.root = SCHEMAS / name
        registry: Registry[Any] = Registry()
        documents: list[tuple[str, dict[str, Any]]] = []
        self.requests: dict[str, dict[str, str]] = {direction: {} for direction in DIRECTIONS}
        self.notifications: dict[str, dict[str, str]] = {direction: {} for direction in DIRECTIONS}
        self.event_types: dict[str, str] = {}
        for path in sorted(self.root.rglob("*.json")):
            relative = path.relative_to(SCHEMAS).as_posix()
            document = json.loads(path.read_text(encoding="utf-8"))
            uri = BASE + relative
            document["$id"] = uri
            registry = registry.with_resource(uri, Resource.from_contents(document, default_specification=DRAFT202012))
            documents.append((uri, document))
            self._index(path.relative_to(self.root).parts[0], uri, document)
            if path.parent.name == "events" and path.stem not in ("envelope", "session-event"):
                self.event_types[path.stem] = uri
        self.registry = registry.crawl()
        self._validators: dict[str, Draft202012Validator] = {}
        # The verdict comes from jsonschema-rs, tens of times faster on the process suite's large
        # recordings (a stalled client's run holds ~100k frames); the findings' paths and messages
        # from the reference implementation, asked only about a frame the first one refused
        # (tests/sim/test_engine_schema.py checks that the two agree on what they refuse).
        self._fast_registry = jsonschema_rs.Registry(documents, draft=jsonschema_rs.Draft202012)
        self._fast: dict[str, Any] = {}

    def _index(self, folder: str, uri: str, document: dict[str, Any]) -> None:
        method = document.get("x-method")
        if not isinstance(method, str):
            return
        params = "params" in document.get("$defs", {})
        for direction in DIRECTIONS:
            if params and folder in REQUEST_FOLDERS[direction]:
                self.requests[direction][method] = uri
            elif not params and folder in NOTIFICATION_FOLDERS[direction]:
                self.notifications[direction][method] = uri

    def uri(self, relative: str) -> str:
        return f"{BASE}{self.name}/{relative}"

    def errors(self, uri: str, instance: Any) -> list[ValidationError]:
        fast = self._fast.get(uri)
        if fast is None:
            fast = self._fast[uri] = jsonschema_rs.Draft202012Validator({"$ref": uri}, registry=self._fast_registry)
        if fast.is_valid(instance):
            return []
        return self.reference_errors(uri, instance)

    def reference_errors(self, uri: str, instance: Any) -> list[ValidationError]:
        """The reference implementation's findings, sorted by relevance (the first is the best)."""
        validator = self._validators.get(uri)
        if validator is None:
            validator = Draft202012Validator({"$ref": uri}, registry=self.registry)
            self._validators[uri] = validator
        return sorted(validator.iter_errors(instance), key=relevance)

    def short(self, uri: str) -> str:
        return uri.removeprefix(BASE)


@functools.cache
def schema_set(dialect: str) -> SchemaSet:
    return SchemaSet(DIALECT_SETS[dialect])


def _path(error: ValidationError) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)


def _message(error: ValidationError) -> str:
    # The error deepest in a tagged union says what is wrong; the top one only "does not match".
    leaf = error
    while leaf.context:
        leaf = min(leaf.context, key=relevance)
    text = leaf.message if leaf is error else f"{error.message} — {_path(leaf)}: {leaf.message}"
    return text if len(text) <= 400 else text[:400] + "…"


class Conversation:
    """The state of one conversation while its frames are checked in order."""

    def __init__(self, dialect: str, label: str = "") -> None:
        self.schemas = schema_set(dialect)
        self.label = label
        # (direction the request travelled, its id) -> its method, until answered.
        self.pending: dict[tuple[str, Any], str] = {}
        self.answered: set[tuple[str, Any]] = set()
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}
        # v4 subscriptions whose subscribe answer (the ack) has arrived, and the first frame of any
        # subscription seen before its ack: the engine writes the first snapshot after the ack.
        self.acked: set[str] = set()
        self.early_frames: dict[str, int] = {}
        # The 0.16 engine only (its order is part of what the evidence records): a send is answered after
        # the state.updated that started its prompt; a closed session emits no session.closed.
        self.ordered = self.schemas.name == "engine"
        self.sends: dict[Any, tuple[str, bool]] = {}  # request id -> (session, prompt_started seen since)
        self.closed: set[str] = set()

    def _finding(self, index: int, direction: str, what: str, uri: str, path: str, message: str) -> None:
        self.findings.append(Finding(index, direction, what, self.schemas.short(uri) if uri else "(no schema)",
                                     path, message, self.label))

    def _check(self, index: int, direction: str, what: str, uri: str, instance: Any, prefix: str = "$") -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        for error in self.schemas.errors(uri, instance)[:MAX_ERRORS_PER_FRAME]:
            self._finding(index, direction, what, uri, prefix + _path(error)[1:], _message(error))

    def feed(self, index: int, direction: str, frame: Any) -> None:
        if not isinstance(frame, dict):
            self._finding(index, direction, "not a JSON object", "", "$", f"the line is {frame!r:.200}")
            return
        envelope = self.schemas.uri("envelope.json")
        method = frame.get("method")
        if isinstance(method, str) and "id" in frame:
            self._request(index, direction, frame, method, envelope)
        elif isinstance(method, str):
            self._notification(index, direction, frame, method, envelope)
        elif "id" in frame and ("result" in frame or "error" in frame):
            self._response(index, direction, frame, envelope)
        else:
            self._check(index, direction, "frame of no kind", envelope + "#/$defs/request", frame)

    def _request(self, index: int, direction: str, frame: dict[str, Any], method: str, envelope: str) -> None:
        what = f"request {method}"
        self._check(index, direction, what, envelope + "#/$defs/request", frame)
        self.pending[(direction, _key(frame["id"]))] = method
        params = frame.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        if self.ordered and direction == HOST_TO_ENGINE and isinstance(session, str):
            if method == "session/send":
                self.sends[_key(frame["id"])] = (session, False)
            elif method == "session/close":
                self.closed.add(session)
            elif method in ("session/resume", "session/subscribe"):
                self.closed.discard(session)  # open again: its events may include a later close
        uri = self.schemas.requests[direction].get(method)
        if uri is None:
            self._finding(index, direction, what, "", "$.method",
                          f"no schema for {method!r} sent {direction} in the {self.schemas.name} set")
            return
        self._check(index, direction, what, uri + "#/$defs/params", frame.get("params", {}), "$.params")
        if method == "v4/attachment/chunk":
            self._refine_chunk(index, direction, what, frame.get("params"))

    def _notification(self, index: int, direction: str, frame: dict[str, Any], method: str, envelope: str) -> None:
        what = f"notification {method}"
        params = frame.get("params")
        if method == "session/event" and isinstance(params, dict):
            what = f"event {params.get('type')}"
        self._check(index, direction, what, envelope + "#/$defs/notification", frame)
        uri = self.schemas.notifications[direction].get(method)
        if method == "session/event" and isinstance(params, dict) and isinstance(params.get("type"), str):
            # Name the event type's own schema in a finding; a type outside the union keeps the union.
            uri = self.schemas.event_types.get(params["type"], uri)
        if uri is None:
            self._finding(index, direction, what, "", "$.method",
                          f"no schema for the notification {method!r} sent {direction} in the {self.schemas.name} set")
            return
        self._check(index, direction, what, uri, params, "$.params")
        if self.ordered and isinstance(params, dict):
            self._order(index, direction, what, method, params)
        if method == "v4/conversation/frame" and isinstance(params, dict):
            self._refine_frame(index, direction, what, params)
            subscription = params.get("subscriptionId")
            if isinstance(subscription, str) and subscription not in self.acked:
                self.early_frames.setdefault(subscription, index)

    def _refine_frame(self, index: int, direction: str, what: str, params: dict[str, Any]) -> None:
        """What the wire schema (``wire.ts`` superRefine) says beyond JSON Schema: a complete frame names the
        same topic and subscription outside and inside, and a fragment's index is below its count."""
        inner = params.get("frame")
        if params.get("kind") == "complete" and isinstance(inner, dict):
            for key in ("topic", "subscriptionId"):
                if key in inner and key in params and inner[key] != params[key]:
                    self._finding(index, direction, what, "", f"$.params.frame.{key}",
                                  f"{key} {inner[key]!r} inside the frame, {params[key]!r} outside it")
        if params.get("kind") == "fragment":
            position, count = params.get("fragmentIndex"), params.get("fragmentCount")
            if isinstance(position, int) and isinstance(count, int) and position >= count:
                self._finding(index, direction, what, "", "$.params.fragmentIndex",
                              f"fragmentIndex {position} is not below fragmentCount {count}")

    def _refine_chunk(self, index: int, direction: str, what: str, params: Any) -> None:
        data = params.get("dataBase64") if isinstance(params, dict) else None
        if not isinstance(data, str):
            return
        try:
            size = len(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            return  # the schema's pattern already reports it
        if size > CHUNK_LIMIT:
            self._finding(index, direction, what, "", "$.params.dataBase64",
                          f"the chunk decodes to {size} bytes, over the {CHUNK_LIMIT}-byte limit")

    def _order(self, index: int, direction: str, what: str, method: str, params: dict[str, Any]) -> None:
        session = params.get("sessionId")
        if method == "state.updated" and params.get("reason") == "prompt_started":
            for request_id, (sent_to, _) in list(self.sends.items()):
                if sent_to == session:
                    self.sends[request_id] = (sent_to, True)
        elif method == "session/event" and params.get("type") == "session.closed" and session in self.closed:
            self._finding(index, direction, what, "", "$.params.type",
                          f"session.closed after the bridge closed {session!r}: session/close unsubscribes first")

    def _acked(self, index: int, direction: str, result: Any) -> None:
        ack = result.get("ack") if isinstance(result, dict) else None
        subscription = ack.get("subscriptionId") if isinstance(ack, dict) else None
        if not isinstance(subscription, str):
            return
        self.acked.add(subscription)
        early = self.early_frames.pop(subscription, None)
        if early is not None:
            self._finding(early, ENGINE_TO_HOST, "notification v4/conversation/frame", "", "$.params.subscriptionId",
                          f"a frame of subscription {subscription!r} came before the subscribe answer that opened "
                          f"it (frame {index})")

    def _response(self, index: int, direction: str, frame: dict[str, Any], envelope: str) -> None:
        asked = ENGINE_TO_HOST if direction == HOST_TO_ENGINE else HOST_TO_ENGINE
        key = (asked, _key(frame["id"]))
        method = self.pending.pop(key, None)
        error = "error" in frame
        what = f"{'error' if error else 'response'} to {method or '?'}"
        self._check(index, direction, what, envelope + ("#/$defs/error" if error else "#/$defs/response"), frame)
        if method is None:
            duplicate = key in self.answered
            self._finding(index, direction, what, "", "$.id",
                          f"{'a second answer to' if duplicate else 'no request'} {frame['id']!r} sent {asked}")
            return
        self.answered.add(key)
        send = self.sends.pop(key[1], None) if method == "session/send" else None
        if error:
            return
        if send is not None and not send[1]:
            self._finding(index, direction, what, "", "$.result",
                          f"session/send to {send[0]!r} answered before the state.updated (reason prompt_started) "
                          "that starts its prompt")
        uri = self.schemas.requests[asked].get(method)
        if uri is not None:  # a request with no schema was already reported
            self._check(index, direction, what, uri + "#/$defs/result", frame.get("result"), "$.result")
        if method in ("v4/conversation/subscribe", "v4/conversation/resync"):
            self._acked(index, direction, frame.get("result"))


def _key(request_id: Any) -> Any:
    # JSON ids: 1 and 1.0 are one id; a string id stays a string.
    return request_id if not isinstance(request_id, float) or not request_id.is_integer() else int(request_id)


def check_conversation(frames: Iterable[tuple[str, Any]], dialect: str, label: str = "") -> list[Finding]:
    """Check ``(direction, frame)`` pairs in the order they travelled; return every finding."""
    conversation = Conversation(dialect, label)
    for index, (direction, frame) in enumerate(frames):
        conversation.feed(index, direction, frame)
    return conversation.findings


def read_recording(path: Path) -> dict[int, list[tuple[str, Any]]]:
    """The frames a simulator recorded (sim/frames_log.py), one conversation per process."""
    conversations: dict[int, list[tuple[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if "frame" in entry:
            frame = entry["frame"]
        else:
            try:
                frame = json.loads(entry["raw"])
            except ValueError:
                frame = entry["raw"]
        conversations.setdefault(entry["pid"], []).append((entry["dir"], frame))
    return conversations


def check_recording(path: Path, dialect: str) -> list[Finding]:
    findings: list[Finding] = []
    for pid, frames in read_recording(path).items():
        findings.extend(check_conversation(frames, dialect, label=f"sim pid {pid}"))
    return findings


MODES = ("strict", "report", "off")
REPORT = SCHEMAS.parent / "build" / "engine-schema-report.jsonl"
SHOWN = 20


def mode_from_env() -> str:
    """``ZCODE_TEST_ENGINE_SCHEMA``: strict (the default), report or off."""
    mode = os.environ.get("ZCODE_TEST_ENGINE_SCHEMA", "strict").strip().lower() or "strict"
    if mode not in MODES:
        raise ValueError(f"ZCODE_TEST_ENGINE_SCHEMA={mode!r}: one of {', '.join(MODES)}")
    return mode


def conclude(frames: Path, dialect: str, mode: str, test: str, report: Path = REPORT) -> str | None:
    """The end of one test's check: the text to fail it with (strict), or None (clean, or reported)."""
    if mode == "off" or not frames.exists():
        return None
    findings = check_recording(frames, dialect)
    if mode == "report":
        report.parent.mkdir(parents=True, exist_ok=True)
        with report.open("a", encoding="utf-8") as handle:
            for finding in findings:
                handle.write(json.dumps({"test": test, "dialect": dialect, **finding.as_dict()}) + "\n")
        return None
    if not findings:
        return None
    shown = "\n".join(str(finding) for finding in findings[:SHOWN])
    more = f"\n… and {len(findings) - SHOWN} more" if len(findings) > SHOWN else ""
    return f"{len(findings)} bridge↔engine frame(s) break schemas/ ({dialect}):\n{shown}{more}"


def summarize(findings: list[Finding]) -> Iterator[str]:
    for finding in findings:
        yield str(finding)


def group_report(lines: Iterable[str]) -> list[tuple[int, str]]:
    """Findings of a report file grouped by dialect, direction, frame kind, path and message, most first."""
    counts: dict[str, int] = {}
    for line in lines:
        if not line.strip():
            continue
        item = json.loads(line)
        # Ids and numbers in a message (a session id, a frame number) would split one kind of finding.
        message = re.sub(r"'[^']*\d[^']*'|\(frame \d+\)", "…", item["message"])[:160]
        key = " | ".join((item["dialect"], item["direction"], item["what"], item["path"], message))
        counts[key] = counts.get(key, 0) + 1
    return sorted(((count, key) for key, count in counts.items()), key=lambda pair: (-pair[0], pair[1]))


def main(argv: list[str]) -> int:
    """``python -m tests.engine_schema report [FILE]`` groups a report (build/engine-schema-report.jsonl);
    ``python -m tests.engine_schema check FILE DIALECT`` checks a recording of ZCODE_SIM_FRAMES."""
    if argv[:1] == ["report"]:
        path = Path(argv[1]) if len(argv) > 1 else SCHEMAS.parent / "build" / "engine-schema-report.jsonl"
        for count, key in group_report(path.read_text(encoding="utf-8").splitlines()):
            print(f"{count:6d}  {key}")
        return 0
    if argv[:1] == ["check"] and len(argv) == 3:
        findings = check_recording(Path(argv[1]), argv[2])
        for line in summarize(findings):
            print(line)
        return 1 if findings else 0
    print(main.__doc__)
    return 2


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
