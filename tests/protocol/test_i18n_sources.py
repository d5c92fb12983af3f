"""No string a person reads bypasses the catalog (docs/architecture.md, "Strings a person reads").

The rule, checked over the modules that build what a person reads (``USER_FACING``): a string
literal that is prose — two words of two or more letters, separated by a space or punctuation —
is a violation unless it is

* a docstring, or inside a logging call (``log.info(...)``: logs are for developers, in English),
  or inside ``Setting(...)`` (a setting's English meaning: the README's table, compared with the
  catalog's ``setting.NAME`` by tests/cli/test_chinese.py);
* listed in ``EXEMPT`` below with why: the words go to the engine (a decline's ``reason``), not to
  a person; or they are the English source the catalog is compared with.

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

from zcode_acp.protocol.i18n import CATALOG, EN

ROOT = Path(__file__).resolve().parents[2]
USER_FACING = (
    "protocol/session_config.py", "protocol/commands.py", "protocol/interactions.py", "protocol/turn_end.py",
    "protocol/recovery.py", "protocol/background.py", "protocol/handshake.py", "protocol/notifications.py",
    "actors/notifier.py", "actors/session/v4/path.py", "actors/session/v4/prompts.py", "protocol/v4/conversation.py",
    "actors/turn.py", "actors/session/held.py", "actors/session/extensions.py", "actors/interaction_router.py",
    "cli/doctor.py", "cli/demo.py", "cli/app.py", "config/settings.py",
    "actors/session/v4/subscription.py", "actors/session/v4/stopfallback.py", "actors/session/v4/settings.py",
    "actors/session/v4/attachments.py", "actors/session/v4/tasks.py", "actors/session/v4/notices.py",
    "actors/session/v4/mode.py", "actors/session/v4/opening.py", "actors/session/v4/workspace.py",
    "actors/session/v4/extras.py", "protocol/v4/work_cards.py", "protocol/v4/conversation_retry.py",
    "protocol/v4/file_changes.py",
)
PROSE = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")
EXEMPT_CALLS = {"debug", "info", "warning", "error", "exception", "critical", "Setting"}
TO_THE_ENGINE = "a reason or error sent to the engine, not shown to a person"
FOR_THE_BUG_REPORT = "an internal error's detail, for the bug report"
EXEMPT: dict[str, dict[str, str]] = {
    "protocol/session_config.py": {
        "Default model": "the placeholder model's name in the settings; the selector shows the catalog's",
    },
    "protocol/interactions.py": {"cancelled by user": TO_THE_ENGINE},
    "protocol/handshake.py": {
        "Method not found: logout (the ZCode CLI keeps its own credentials; sign out with the ZCode CLI itself)":
            "a -32601 for a client developer",
    },
    "actors/turn.py": {
        "internal error while handling the turn": "a bridge bug's -32603, for the bug report",
        " during the turn": "appended to the backend's own words for its death (backend.py)",
    },
    "actors/session/extensions.py": {
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
    "cli/app.py": {"serve the page from this folder": "the help of a hidden option (developers only)"},
    "actors/session/v4/attachments.py": {"the engine's upload answer: ": FOR_THE_BUG_REPORT,
                                        "the engine's commit named no ref": FOR_THE_BUG_REPORT},
    "actors/session/v4/extras.py": {"the session's conversation is not subscribed yet": FOR_THE_BUG_REPORT},
    "protocol/v4/work_cards.py": {"tuple[str, bool] | None": "a type annotation"},
    "protocol/v4/conversation_retry.py": {
        "Reason codes of an interrupted model stream (``sseDisconnected``, ``sseStalled``).": "a docstring"},
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
        if isinstance(node, ast.ClassDef):  # an attribute's docstring: a bare string after its field
            skipped.update(id(item.value) for item in node.body
                           if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))
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


@pytest.mark.parametrize("path", USER_FACING)
def test_no_prose_reaches_a_person_without_the_catalog(path):
    exempt = EXEMPT.get(path, {})
    found = [(line, text) for line, text in prose_literals((ROOT / path).read_text()) if text not in exempt]
    assert not found, f"{path}: prose literals that bypass protocol/i18n: {found}"


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
