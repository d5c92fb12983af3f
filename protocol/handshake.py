"""``initialize`` and ``authenticate`` (docs/protocol-mapping.md), and client capabilities."""

from __future__ import annotations

from typing import Any

from . import air, framing, jsonrpc
from .errors import METHOD_NOT_FOUND, RpcError, invalid_params
from .i18n import EN, t
from .shapes import obj

PROTOCOL_VERSION = 1
AUTH_METHOD_ID = "zcode-credentials"


def initialize_result(requested_version: Any, version: str, lang: str = EN,
                      client_capabilities: Any = None) -> dict[str, Any]:
    if not isinstance(requested_version, int) or isinstance(requested_version, bool):
        raise invalid_params("protocolVersion", "invalid.must_be_integer")
    return {
        # Answer the client's version when it is lower (and still one we speak).
        "protocolVersion": min(PROTOCOL_VERSION, max(requested_version, 1)),
        "agentInfo": {"name": "zcode-acp", "title": "ZCode", "version": version},
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            # No "additionalDirectories": a ZCode workspace has one root (docs/protocol-mapping.md).
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}, "fork": {}},
            # No "logout": the CLI keeps its own account; the bridge holds no credentials to drop.
            "auth": {},
            # The Coding Plan's quota (the ACP "Quotas and Limits" RFD): quota/read, and quota_update
            # to clients declaring session.quota; {pools: []} without a key (docs/quota.md).
            "quota": {},
        },
        "authMethods": [
            {
                "id": AUTH_METHOD_ID,
                "name": t(lang, "auth.name"),
                "description": t(lang, "auth.description"),
            }
        ],
        # Steering for every client, the AIR extension set for a client that declares it (air.py).
        "_meta": air.initialize_meta(client_capabilities),
    }


def early_initialize_answer(first_bytes: bytes, version: str, lang: str = EN,
                            max_line: int = framing.DEFAULT_MAX_LINE) -> bytes | None:
    """The answer frame to an ``initialize`` that is the first line of ``first_bytes``, or None.

    The stdio path answers it from here before the actor runtime is imported
    (``cli/early_answer.py``), then hands every byte it read to the
    runtime, which handles the same request again (the client's capabilities)
    and whose answer, byte for byte this one, is then not written twice. So
    this reads the line exactly as the client connection would (the same
    splitter, decoder and envelope check) and builds the answer as the
    Supervisor does; whatever the runtime would answer otherwise (an error, a
    frame before it, a line still incomplete) is None: the runtime answers it.
    """
    splitter = framing.LineSplitter(max_line)
    lines = splitter.feed(first_bytes)
    if not lines or splitter.oversized:
        return None
    try:
        frame = framing.decode_object(lines[0])
        if jsonrpc.classify_acp(frame) is not jsonrpc.Kind.REQUEST or frame["method"] != "initialize":
            return None
        params = frame.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return None
        result = initialize_result(params.get("protocolVersion"), version, lang, params.get("clientCapabilities"))
    except RpcError:
        return None
    return framing.encode(jsonrpc.acp_result(frame["id"], result))


def authenticate_result(method_id: Any) -> dict[str, Any]:
    if method_id != AUTH_METHOD_ID:
        raise invalid_params("methodId", "invalid.unknown_auth_method", supported=AUTH_METHOD_ID)
    return {}


def logout_unsupported() -> RpcError:
    """``logout`` is not advertised (``agentCapabilities.auth.logout`` absent): refuse it by name.

    The ZCode CLI reads and keeps its own credentials; the bridge has no account
    state it could clear, so accepting ``logout`` would claim a sign-out that
    never happened.
    """
    return RpcError(METHOD_NOT_FOUND, "Method not found: logout (the ZCode CLI keeps its own credentials; "
                                      "sign out with the ZCode CLI itself)")


def supports_boolean_options(capabilities: dict[str, Any]) -> bool:
    """``clientCapabilities.session.configOptions.boolean`` (``{}`` opts in)."""
    session = capabilities.get("session")
    options = session.get("configOptions") if isinstance(session, dict) else None
    boolean = options.get("boolean") if isinstance(options, dict) else None
    return boolean is True or isinstance(boolean, dict)


def merge_capabilities(merged: dict[str, Any], new: Any) -> dict[str, Any]:
    """OR-merge client capabilities: booleans union, objects merged recursively.

    A capability that any attached client declares is enabled.
    """
    if not isinstance(new, dict):
        return merged
    out = dict(merged)
    for key, value in new.items():
        if isinstance(value, dict):
            out[key] = merge_capabilities(obj(out.get(key)), value)
        elif isinstance(value, bool):
            out[key] = bool(out.get(key)) or value
        elif key not in out:
            out[key] = value
    return out


def supports_terminal_output(capabilities: dict[str, Any]) -> bool:
    meta = capabilities.get("_meta")
    return isinstance(meta, dict) and bool(meta.get("terminal_output"))


def supports_elicitation_form(capabilities: dict[str, Any]) -> bool:
    elicitation = capabilities.get("elicitation")
    form = elicitation.get("form") if isinstance(elicitation, dict) else None
    return form is True or isinstance(form, dict)
