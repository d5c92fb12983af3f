"""The 0.16 engine checks params as its zod ``.strict()`` schemas do (docs/simulator.md, Dialects).

An unknown key, a missing required one or a value outside an enum is refused
``-32602`` with the engine's wording (``parseParams`` of its app-server):
``Invalid params — <path>: <problem>`` (paths joined with dots, ``(root)`` for the
object itself, at most five problems). Only the session-level methods are listed
here; a method without an entry is not checked.
"""

from __future__ import annotations

from typing import Any

from .model import SimError

# A field's spec: "str" (a non-empty string), "int", "bool", "list", "any", an enum (a tuple of
# strings) or a nested object (a dict of specs). A "?" suffix on the key marks it optional.
Spec = Any

WORKSPACE: dict[str, Spec] = {"workspacePath": "str", "workspaceIdentity?": "str", "remoteSessionId?": "str",
                              "workspaceKey": "str"}
MODEL: dict[str, Spec] = {"providerId": "str", "modelId": "str", "options?": {"reasoningLevel?": "str"}}
MODES = ("plan", "build", "edit", "yolo", "auto")
DELIVERY = ("desktop-continuous", "web-remote-replayable")

SCHEMAS: dict[str, dict[str, Spec]] = {
    "session/create": {
        "sessionId?": "str", "workspace": WORKSPACE, "parentSessionId?": "str", "mode?": MODES, "model?": MODEL,
        "persistence?": ("immediate", "deferred"), "thoughtLevel?": "str", "titleGenerationEnabled?": "bool",
        "mcpServers?": "list", "toolAllowlist?": "list", "toolDenylist?": "list", "importedHistory?": "any",
        "offPeakToolEnabled?": "bool", "dynamicWorkflowEnabled?": "bool", "dynamicWorkflowMode?": "str",
    },
    "session/resume": {
        "sessionId": "str", "workspace?": WORKSPACE, "thoughtLevel?": "str", "mcpServers?": "list",
        "toolAllowlist?": "list", "toolDenylist?": "list", "offPeakToolEnabled?": "bool",
        "dynamicWorkflowEnabled?": "bool", "dynamicWorkflowMode?": "str",
    },
    "session/subscribe": {"sessionId": "str", "deliveryKind": DELIVERY, "afterSeq?": "int", "includeSnapshot?": "bool"},
    "session/read": {"sessionId": "str", "deliveryKind?": DELIVERY, "messageLimit?": "int", "afterSeq?": "int",
                     "contentProfile?": ("full", "index")},
    "session/list": {"workspace?": WORKSPACE, "sessionIds?": "list", "includeArchived?": "bool", "limit?": "int"},
    "session/close": {"sessionId": "str", "expectedPersistence?": ("immediate", "deferred")},
    "session/setMode": {"sessionId": "str", "mode": MODES, "expectedRevision?": "int"},
    "session/setModel": {"sessionId": "str", "model": MODEL, "expectedRevision?": "int",
                         "persistAsWorkspaceLastUsed?": "bool"},
    "session/setThoughtLevel": {"sessionId": "str", "thoughtLevel?": "str", "expectedRevision?": "int",
                                "persistAsWorkspaceLastUsed?": "bool"},
    "session/goal": {"sessionId": "str", "action": ("show", "set", "replace", "pause", "resume", "clear"),
                     "objective?": "str", "tokenBudget?": "any"},
    "workspace/readPresentation": {"workspace": WORKSPACE},
    "mcp/list": {"workspace": WORKSPACE, "mcpServers?": "list", "mode?": ("connect", "status")},
    "runtime/capabilities": {},
}


def _problems(value: Any, spec: Spec, path: list[str]) -> list[tuple[str, str]]:
    where = ".".join(path) or "(root)"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return [(where, f"Expected object, received {_kind(value)}")]
        found: list[tuple[str, str]] = []
        known = {key.rstrip("?") for key in spec}
        unknown = [key for key in value if key not in known]
        if unknown:
            found.append((where, "Unrecognized key(s) in object: " + ", ".join(f"'{key}'" for key in unknown)))
        for key, inner in spec.items():
            name = key.rstrip("?")
            if name not in value:
                if not key.endswith("?"):
                    found.append((".".join([*path, name]), "Required"))
                continue
            found += _problems(value[name], inner, [*path, name])
        return found
    if isinstance(spec, tuple):
        if value not in spec:
            expected = " | ".join(f"'{option}'" for option in spec)
            return [(where, f"Invalid enum value. Expected {expected}, received '{value}'")]
        return []
    checks = {"str": lambda v: isinstance(v, str) and bool(v.strip()), "list": lambda v: isinstance(v, list),
              "bool": lambda v: isinstance(v, bool),
              "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0}
    check = checks.get(spec)
    if check is not None and not check(value):
        if spec == "str" and isinstance(value, str):
            return [(where, "String must contain at least 1 character(s)")]
        return [(where, f"Expected {'string' if spec == 'str' else spec}, received {_kind(value)}")]
    return []


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def check(method: str, params: Any) -> None:
    """Refuse ``params`` the engine's schema for ``method`` refuses (-32602, its wording)."""
    schema = SCHEMAS.get(method)
    if schema is None:
        return
    problems = _problems(params if params is not None else {}, schema, [])
    if problems:
        detail = "; ".join(f"{path}: {problem}" for path, problem in problems[:5])
        if len(problems) > 5:
            detail += f" (+{len(problems) - 5} more)"
        raise SimError(-32602, f"Invalid params — {detail}")
