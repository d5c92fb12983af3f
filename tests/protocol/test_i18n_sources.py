"""No string a person reads bypasses the catalog (docs/architecture.md, "Strings a person reads").

The rule, checked over every module of the bridge's folders by default (``SCANNED``), less the
few in ``NOT_FOR_A_PERSON`` (each group with why): a string literal that is prose — two words of
two or more letters, separated by a space or punctuation — is a violation unless it is

* a docstring (a bare string statement: a function's, a class's or an attribute's), or inside a
  logging call (``log.info(...)``: logs are for developers, in English), or inside
  ``Setting(...)`` (a setting's English meaning: the README's table, compared with the catalog's
  ``setting.NAME`` by tests/cli/test_chinese.py);
* listed in ``EXEMPT`` below with why: the words go to the engine (a decline's ``reason``), not to
  a person; or they are the English source the catalog is compared with.

There is no list of modules still to word (issue 30 emptied it): a module is worded, or its group
in ``NOT_FOR_A_PERSON`` says why no person reads its English.

Every other literal a person reads is a catalog key passed to ``t``/``Translator``; and every key a
call names exists in the catalog. The bridge's own errors too (issue 29): ``invalid_params(field,
"invalid.…")``, ``worded(code, "error.…")`` and ``Unfit("invalid.mcp.…")`` name a key that both
languages hold, never English words.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from zcode_acp.protocol import air, quota_failure
from zcode_acp.protocol.i18n import CATALOG, EN

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("actors", "protocol", "cli", "config", "net", "hub")
NOT_FOR_A_PERSON: dict[str, tuple[str, ...]] = {
    "the catalog itself": ("protocol/i18n/",),
    "a developer's tool (recording and replaying traces, docs/traces.md), in English like the logs": (
        "protocol/trace.py", "protocol/trace_compare.py", "protocol/trace_redaction.py", "cli/replay.py",
        "cli/replay_driver.py"),
    "the actor runtime's own errors: a bug's, for the bug report": (
        "actors/base.py", "actors/message_class.py", "actors/on_demand.py"),
    "checks of the engine's v4 frames: what they find goes to the log and the bug report": (
        "protocol/v4/frames.py", "protocol/v4/wire.py", "protocol/v4/reassembly.py", "protocol/v4/topic.py",
        "protocol/v4/conversation_apply.py", "protocol/v4/sessions_index_apply.py",
        "protocol/v4/workspace_config_apply.py", "protocol/v4/commands.py", "protocol/v4/attachments.py"),
    "network plumbing and the hub's HTTP answers: read by programs (the web page words its own, "
    "hub/web/js/i18n.js; a WebSocket's close reason it never shows, hub/web/js/rpc.js)": (
        "net/", "hub/server.py", "hub/registry.py", "hub/proxy.py", "hub/spawner.py", "hub/static.py",
        "actors/transport/remote.py"),
}


def scanned_modules() -> list[str]:
    """Every module of the scanned folders, less those ``NOT_FOR_A_PERSON`` names (a file or a folder/)."""
    skipped = tuple(entry for group in NOT_FOR_A_PERSON.values() for entry in group)
    return sorted(path for folder in SCANNED for path in (str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.py"))
                  if not path.startswith(skipped))


PROSE = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")
EXEMPT_CALLS = {"debug", "info", "warning", "error", "exception", "critical", "Setting"}
TO_THE_ENGINE = "a reason or error sent to the engine, not shown to a person"
FOR_THE_BUG_REPORT = "an internal error's detail, for the bug report"
ENGINE_WORDS_STAND_IN = "stands in for the engine's own words (an answer without them), which pass untranslated"
FOR_THE_LOG = "a reason only the log records (the message's readers log it, or nobody reads it)"
TO_BE_PASTED = "a configuration to paste, in the editor's own language (docs/editors.md shows the same)"
TO_BE_TYPED = "a command to type"
EDITOR_NAME = "an editor's own name"
EXEMPT: dict[str, dict[str, str]] = {
    "actors/session/legacy/path.py": {"no session id in the answer": ENGINE_WORDS_STAND_IN},
    "actors/session/core.py": {"no session in the answer": ENGINE_WORDS_STAND_IN},
    "actors/backend.py": {"no client can answer": TO_THE_ENGINE, "Method not found: ": TO_THE_ENGINE},
    "actors/client_connection.py": {
        "client connection closed": "the failure of the bridge's own request to the client (a dialog), which the "
                                    "InteractionRouter turns into a decline to the engine"},
    "actors/lazy_store.py": {" is held by another process": "a StoreLocked's text, which only the log records "
                                                            "(the save retries)"},
    "actors/messages/client.py": {"end of input": FOR_THE_LOG},
    "actors/transport/stdio.py": {"end of input": FOR_THE_LOG},
    "actors/messages/session.py": {"the session was closed": TO_THE_ENGINE},
    "actors/supervisor.py": {"session deleted": TO_THE_ENGINE},
    "actors/session/prompting.py": {"cancelled by user": TO_THE_ENGINE, "superseded by a new prompt": TO_THE_ENGINE},
    "actors/supervisor_registry.py": {"the editor closed the connection": FOR_THE_LOG,
                                      "the editor disconnected": TO_THE_ENGINE},
    "actors/transport/backend_process.py": {
        "import os, sys\nsys.stdin.buffer.read()\ntry:\n    os.killpg(int(sys.argv[1]), 9)\nexcept OSError:\n    pass\n":
            "the watchdog's program (python -c), not words"},
    "actors/webhook_post.py": {
        "the webhook URL is not an http(s):// address": "why a post failed, which only the log records (notifier.py)",
        " (redirects are not followed)": "why a post failed, which only the log records (notifier.py)"},
    "cli/editors.py": {
        "JetBrains IDEs": EDITOR_NAME, "Neovim: CodeCompanion": EDITOR_NAME, "Neovim: avante.nvim": EDITOR_NAME,
        "Emacs: agent-shell": EDITOR_NAME,
        '        return require("codecompanion.adapters").extend("gemini_cli", {': TO_BE_PASTED,
        "(defun zcode-agent-config ()": TO_BE_PASTED, "                    :context-buffer buffer))))": TO_BE_PASTED,
        "(defun zcode ()": TO_BE_PASTED, '  "Start a ZCode shell."': TO_BE_PASTED,
        "  (agent-shell-start :config (zcode-agent-config)))": TO_BE_PASTED,
        "acpx zcode sessions new": TO_BE_TYPED, "acpx zcode sessions close": TO_BE_TYPED, "acpx zcode exec ": TO_BE_TYPED,
        "acpx zcode ": TO_BE_TYPED, "acpx --approve-all zcode exec ": TO_BE_TYPED},
    "actors/session/v4/engine.py": {"no session id in the answer": ENGINE_WORDS_STAND_IN},
    "protocol/session_config.py": {
        "Default model": "the placeholder model's name in the settings; the selector shows the catalog's",
    },
    "protocol/interactions.py": {"cancelled by user": TO_THE_ENGINE},
    "protocol/content.py": {"[Context from ": "frames an attached file's text for the model, in the prompt",
                            "\n[End of ": "frames an attached file's text for the model, in the prompt"},
    "protocol/errors.py": {"prompt is running": "matched in the engine's error", "already running":
                           "matched in the engine's error", "unknown backend error":
                           "stands in for the engine's own words, which pass untranslated (decisions: Chinese throughout)"},
    "protocol/air.py": {word: "matched in an engine error, naming its kind" for _, words in air._KIND_WORDS
                        for word in words},
    "protocol/quota_failure.py": {word: "matched in the provider's answer, naming why the plan stopped"
                                  for _, words in quota_failure._QUOTA_WORDS for word in words},
    "protocol/quota.py": {"coding plan": "matched in the provider's answer"},
    "protocol/sessions.py": {"ZCode Protocol": "the engine's name for its protocol, matched in its answer"},
    "protocol/lazy_sessions.py": {"top level is not an object": "why a file does not parse, beside ujson's own words"},
    "protocol/handshake.py": {
        "Method not found: logout (the ZCode CLI keeps its own credentials; sign out with the ZCode CLI itself)":
            "a -32601 for a client developer",
    },
    "actors/turn.py": {
        "internal error while handling the turn": "a bridge bug's -32603, for the bug report",
    },
    "actors/session/controls.py": {
        "FOREIGN KEY": "matched in the engine's message, not written",
        "the backend did not name the forked session": "an internal error's detail, for the bug report",
        "the engine did not take the text (": "wraps the engine's own reason code",
    },
    "actors/interaction_router.py": {
        "no client is connected": TO_THE_ENGINE, "the clients asked left": TO_THE_ENGINE,
        "the client could not show the request": TO_THE_ENGINE, "skipped by user": TO_THE_ENGINE,
        "no answer in time": TO_THE_ENGINE,
    },
    "cli/doctor.py": {
        "zcode-acp doctor supplies no provider headers": TO_THE_ENGINE,
        "not supported by zcode-acp doctor": TO_THE_ENGINE,
        "export ZCODE_ACP_REMOTE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')":
            "a command to type",
        "pip install -U ": "a command to type",
    },
    "cli/demo.py": {"not supported by the demo": TO_THE_ENGINE},
    "cli/help_format.py": {"env var: {var}": "typer's own msgid, matched to answer with the catalog's words"},
    "cli/serve.py": {"idle for ": "the reason of a Shutdown, which the log records",
                     " minute(s): no client, no running turn": "the reason of a Shutdown, which the log records"},
    "cli/app.py": {"serve the page from this folder": "the help of a hidden option (developers only)"},
    "actors/session/v4/attachments.py": {"the engine's upload answer: ": FOR_THE_BUG_REPORT,
                                        "the engine's commit named no ref": FOR_THE_BUG_REPORT},
    "actors/session/v4/extras.py": {"the session's conversation is not subscribed yet": FOR_THE_BUG_REPORT},
    "protocol/v4/work_cards.py": {"tuple[str, bool] | None": "a type annotation"},
    "protocol/v4/file_changes.py": {"fileChanges needs the conversation's log epoch (no snapshot yet)":
                                    FOR_THE_BUG_REPORT},
    "actors/session/v4/subscription.py": {
        "createSession named no session": "an internal error's detail, for the bug report"},
    "protocol/notifications.py": {
        "application/json; charset=utf-8": "an HTTP header value", "text/plain; charset=utf-8": "an HTTP header value",
    },
}


def _skipped(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # an attribute's docstring
            skipped.add(id(node.value))
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in EXEMPT_CALLS:
                skipped.update(id(sub) for sub in ast.walk(node))
    return skipped


def prose_literals(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    skipped = _skipped(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
            and PROSE.search(node.value)]


def prose_found(path: str) -> list[tuple[int, str]]:
    exempt = EXEMPT.get(path, {})
    return [(line, text) for line, text in prose_literals((ROOT / path).read_text()) if text not in exempt]


@pytest.mark.parametrize("path", scanned_modules())
def test_no_prose_reaches_a_person_without_the_catalog(path):
    found = prose_found(path)
    assert not found, f"{path}: prose literals that bypass protocol/i18n: {found}"


def test_the_scan_walks_every_module_and_the_lists_stay_true():
    """A new module is scanned without being named; an entry naming nothing leaves its list."""
    modules = scanned_modules()
    assert "actors/turn.py" in modules and "cli/app.py" in modules and len(modules) > 100, "the walk is broken"
    skipped = [entry for group in NOT_FOR_A_PERSON.values() for entry in group]
    assert all((ROOT / entry).exists() for entry in skipped), "NOT_FOR_A_PERSON names a path that is gone"
    assert set(EXEMPT) <= set(modules), sorted(set(EXEMPT) - set(modules))
    source = {path: {text for _, text in prose_literals((ROOT / path).read_text())} for path in EXEMPT}
    stale = sorted((path, text) for path, texts in EXEMPT.items() for text in texts
                   if PROSE.search(text) and text not in source[path])  # (a single word is never prose)
    assert not stale, f"EXEMPT names literals its module no longer holds: {stale}"


def test_the_rule_catches_a_literal_notice_and_spares_a_key_a_docstring_and_a_log():
    source = '''
def notice(translator, log, lang):
    """Tell the user something."""
    log.info("the session is busy")
    translator.notice(t(lang, "notice.busy"))
    translator.notice("Your prompt waits for the previous turn.")
'''
    assert prose_literals(source) == [(6, "Your prompt waits for the previous turn.")]


def _named_keys(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Keys named by ``t(lang, "key")`` / ``tr("key")`` / ``self.tr("key")`` calls: (exact, f-string prefixes)."""
    exact, prefixes = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        index = 1 if name == "t" else 0 if name == "tr" else None
        if index is None or len(node.args) <= index:
            continue
        arg = node.args[index]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            exact.add(arg.value)
        elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
            prefixes.add(str(arg.values[0].value))
    return exact, prefixes


def test_every_key_the_code_names_is_in_the_catalog():
    exact, prefixes = set(), set()
    for folder in ("actors", "protocol", "cli", "config", "net"):
        for path in (ROOT / folder).rglob("*.py"):
            found, starts = _named_keys(ast.parse(path.read_text()))
            exact |= found
            prefixes |= starts
    assert exact, "no catalog lookups found: the scan is broken"
    missing = sorted(key for key in exact if "." in key and key not in CATALOG[EN])
    assert not missing, missing
    assert all(any(key.startswith(prefix) for key in CATALOG[EN]) for prefix in prefixes), sorted(prefixes)


# The calls that word an error the bridge writes itself, and which argument is the catalog key.
ERROR_WORDING = {"invalid_params": 1, "invalid_request_value": 1, "_value_error": 1, "_frame_error": 1, "worded": 1, "Unfit": 0}
ERROR_FOLDERS = ("actors", "protocol", "cli", "config", "net", "hub")


def _error_keys(tree: ast.AST) -> tuple[list[str], list[int]]:
    """The keys the error-wording calls name, and the lines of any that names no literal key."""
    keys, unnamed = [], []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        index = ERROR_WORDING.get(name)
        if index is None or len(node.args) <= index:
            continue
        arg = node.args[index]
        choices = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
        for choice in choices:
            if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                keys.append(choice.value)
            elif not ((isinstance(choice, ast.Attribute) and choice.attr == "key")  # Unfit's key, passed on
                      or (isinstance(choice, ast.Name) and choice.id == "problem")):  # a helper's, whose calls are scanned
                unnamed.append(node.lineno)
    return keys, unnamed


def test_every_error_the_bridge_words_has_its_key_in_both_languages():
    keys: list[str] = []
    unnamed: list[str] = []
    for folder in ERROR_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            found, lines = _error_keys(ast.parse(path.read_text()))
            keys += found
            unnamed += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
    assert len(keys) > 40, "the scan found too few error sites: it is broken"
    assert not unnamed, f"an error worded without a catalog key: {unnamed}"
    for lang in CATALOG:
        missing = sorted({key for key in keys if key not in CATALOG[lang]})
        assert not missing, f"{lang} lacks {missing}"


def test_the_error_scan_catches_english_words_and_a_missing_key():
    keys, unnamed = _error_keys(ast.parse('''
raise invalid_params("cwd", "must be an absolute path")
raise invalid_params("cwd", f"is not a directory: {cwd}")
raise invalid_params("value", "invalid.a" if model else "invalid.b", value=v)
'''))
    assert keys == ["must be an absolute path", "invalid.a", "invalid.b"] and unnamed == [3]
    assert "must be an absolute path" not in CATALOG[EN]
