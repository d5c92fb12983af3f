"""The browser test's driver: Debian's chromium (Playwright) against the fake hub.

Run as its own process (``python -m tests.web.scenario --artifacts DIR``) so
that Playwright's event loop never meets the gevent patching of the pytest
process (tests/conftest.py). Page and fake bridge share one asyncio loop and
take turns, so every step is deterministic: the page acts, the fake reads
exactly the frame it must send, answers, and the page is checked with
Playwright's waiting assertions. Exit status 0 = every step passed. The frames
of both directions are written to ``DIR/frames.json`` for the schema checks in
test_web_client.py; screenshots of a 390×844 phone viewport go to ``DIR``.
"""

from __future__ import annotations

import asyncio
import json
import re
import traceback
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright, expect

from tests.web.browser import open_phone_page, scenario_command
from tests.web.fake_hub import Connection, FakeHub
from zcode_acp.net.tokens import token_subprotocol

REPO = Path(__file__).resolve().parents[2]
WEB_ROOT = REPO / "hub" / "web"
TOKEN = "s3cret-token-0123456789"
WORKSPACE = "/home/dev/demo-project"
SESSION = "sess-1"
XSS_TEXT = "Here is <script>window.__pwned = 1</script> and <img src=x onerror=\"window.__pwned = 2\"> "
WAIT_MS = 10_000

# Console errors the browser prints for what the scenario provokes on purpose.
EXPECTED_CONSOLE = (
    re.compile(r"Failed to load resource: the server responded with a status of 401"),
    re.compile(r"WebSocket connection to 'ws://127\.0\.0\.1:\d+/acp\?.*' failed"),
)

INITIALIZE_RESULT = {
    "protocolVersion": 1,
    "agentInfo": {"name": "zcode-acp", "title": "ZCode", "version": "0.1.0"},
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
    },
    "authMethods": [{"id": "zcode-credentials", "name": "ZCode CLI credentials", "description": "no key needed"}],
}


def config_options(mode: str = "yolo", model: str = "default") -> list[dict[str, Any]]:
    return [
        {"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": mode,
         "options": [{"value": v, "name": n} for v, n in (("plan", "Plan"), ("build", "Build"), ("yolo", "YOLO"))]},
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": model,
         "options": [{"value": "default", "name": "Default model"}, {"value": "fast", "name": "Fast model"}]},
        {"id": "thought", "name": "Thought level", "category": "thought_level", "type": "select", "currentValue": "high",
         "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}]},
    ]


def session_state(mode: str = "yolo", model: str = "default") -> dict[str, Any]:
    return {
        "modes": {"currentModeId": mode, "availableModes": [
            {"id": "plan", "name": "Plan"}, {"id": "build", "name": "Build"}, {"id": "yolo", "name": "YOLO"}]},
        "configOptions": config_options(mode, model),
    }


def text(kind: str, body: str, message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": body}, "messageId": message_id}


HISTORY = [
    text("user_message_chunk", "Please fix the login bug", "u1"),
    text("agent_message_chunk", XSS_TEXT, "a1"),
    text("agent_message_chunk", "— **bold** claim, `code`, [a bad link](javascript:alert(1)) and "
                                "[a good one](https://example.com/docs).", "a1"),
    {"sessionUpdate": "tool_call", "toolCallId": "h1", "title": "Read: src/login.py", "kind": "read",
     "status": "completed", "rawInput": {"file_path": "src/login.py"}, "locations": [{"path": "src/login.py"}],
     "content": [{"type": "content", "content": {"type": "text", "text": "def login(user):\n    return False\n"}}],
     "_meta": {"claudeCode": {"toolName": "Read"}}},
    {"sessionUpdate": "usage_update", "used": 20000, "size": 200000},
]


def turn_updates() -> list[dict[str, Any]]:
    """A turn as the bridge streams it to a terminal_output client (docs/protocol-mapping.md)."""
    return [
        text("agent_thought_chunk", "The failing test is in tests/test_login.py; run it first.", "m1-thought"),
        text("agent_message_chunk", "I'll run ", "m1"),
        text("agent_message_chunk", "the tests.", "m1"),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Bash: pytest -q", "kind": "execute",
         "status": "pending", "rawInput": {"command": "pytest -q"}, "locations": [],
         "content": [{"type": "terminal", "terminalId": "t1"}],
         "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": "t1"}}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
         "_meta": {"terminal_output": {"terminal_id": "t1", "data": "collected 3 items\n"}}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
         "_meta": {"terminal_output": {"terminal_id": "t1", "data": "\x1b[32m3 passed\x1b[0m in 0.12s\n"}}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
         "content": [{"type": "terminal", "terminalId": "t1"}], "rawOutput": {"exitCode": 0},
         "_meta": {"terminal_exit": {"terminal_id": "t1", "exit_code": 0, "signal": None},
                   "claudeCode": {"toolName": "Bash"}}},
        {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Edit: src/login.py", "kind": "edit",
         "status": "pending", "rawInput": {"file_path": "src/login.py"}, "locations": [{"path": "src/login.py"}],
         "_meta": {"claudeCode": {"toolName": "Edit"}}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "completed",
         "content": [{"type": "diff", "path": "src/login.py", "oldText": "def login(user):\n    return False\n",
                      "newText": "def login(user):\n    return user.is_valid()\n"}],
         "_meta": {"claudeCode": {"toolName": "Edit"}}},
        text("agent_message_chunk", "All tests pass. **Fixed** the login check.", "m1-2"),
        {"sessionUpdate": "plan", "entries": [
            {"content": "Reproduce the failure", "priority": "high", "status": "completed"},
            {"content": "Fix the login check", "priority": "high", "status": "in_progress"},
            {"content": "Add a regression test", "priority": "medium", "status": "pending"}]},
        {"sessionUpdate": "usage_update", "used": 52000, "size": 200000},
    ]


def quota_update(updated_at: str, five_hour: float) -> dict[str, Any]:
    """What the bridge sends a client declaring session.quota (protocol/quota.py's snapshot)."""
    return {"sessionUpdate": "quota_update", "updatedAt": updated_at, "pools": [{
        "id": "plan", "label": "GLM Coding Plan", "state": "exhausted" if five_hour >= 100 else "available",
        "meters": [
            {"id": "five_hour", "label": "5-hour window", "usedPercent": five_hour, "window": "PT5H",
             "resetsAt": "2026-12-02T12:00:00.000Z", "status": "exceeded" if five_hour >= 100 else "warning"},
            {"id": "weekly", "label": "Weekly window", "usedPercent": 12.0, "window": "P7D",
             "resetsAt": "2026-12-06T09:00:00.000Z", "status": "ok"}]}]}


def permission(tool_call_id: str, title: str, command: str) -> dict[str, Any]:
    return {"sessionId": SESSION,
            "toolCall": {"toolCallId": tool_call_id, "title": title, "kind": "execute", "status": "pending",
                         "rawInput": {"command": command}},
            "options": [{"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
                        {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                        {"optionId": "deny", "name": "Deny", "kind": "reject_once"}]}


QUESTION_FORM = {
    "mode": "form", "sessionId": SESSION, "toolCallId": "q1", "message": "ZCode has some **questions** for you.",
    "requestedSchema": {"type": "object", "required": ["retries"], "properties": {
        "q_0": {"type": "string", "title": "File", "description": "Which file should I test?",
                "oneOf": [{"const": "auth.test.ts", "title": "auth.test.ts"},
                          {"const": "user.test.ts", "title": "user.test.ts"},
                          {"const": "__skip__", "title": "Skip this question"}]},
        "q_0_other": {"type": "string", "title": "↳ or type a custom value (overrides the selection)"},
        "q_1": {"type": "array", "title": "Suites", "description": "Which suites?",
                "items": {"anyOf": [{"const": "unit", "title": "Unit"}, {"const": "e2e", "title": "End to end"}]}},
        "retries": {"type": "integer", "title": "Retries", "minimum": 0, "maximum": 5},
        "verbose": {"type": "boolean", "title": "Verbose output"},
    }},
}


class Steps:
    def __init__(self, page: Page, hub: FakeHub, base: str, artifacts: Path, console: list[str]) -> None:
        self.page = page
        self.hub = hub
        self.base = base
        self.artifacts = artifacts
        self.console = console  # the page's errors, filled by open_phone_page's listeners

    async def step(self, name: str) -> None:
        print(f"step: {name}", flush=True)

    async def open_session(self, connection: Connection, session_id: str, history: list[dict[str, Any]],
                           **state: str) -> None:
        """What a bridge does on a (re)connection of this page: initialize, then the session's replay."""
        init = await connection.expect("initialize")
        params = init["params"]
        assert params["protocolVersion"] == 1, params
        assert params["clientCapabilities"]["elicitation"] == {"form": {}}, params
        assert params["clientCapabilities"]["_meta"]["terminal_output"] is True, params
        await connection.respond(init, INITIALIZE_RESULT)
        load = await connection.expect("session/load")
        assert load["params"] == {"sessionId": session_id, "cwd": WORKSPACE, "mcpServers": []}, load
        for update in history:
            await connection.update(session_id, update)
        await connection.respond(load, session_state(**state))

    async def run(self) -> None:
        page, hub = self.page, self.hub
        transcript = page.locator(".transcript")

        await self.step("token entry: a wrong token is refused, the right one lists the instances")
        await page.goto(self.base + "/")
        await page.fill("#token", "wrong-token")
        await page.click(".token-form button[type=submit]")
        await expect(page.locator(".banner")).to_contain_text("Wrong token")
        assert ("GET", "/api/instances", 401) in hub.http
        await page.fill("#token", TOKEN)
        await page.click(".token-form button[type=submit]")
        instance = page.locator('.instance[data-instance-id="inst-1"]')
        await expect(instance.locator("h2")).to_have_text("demo-project")
        await expect(instance.locator(".session-row")).to_have_count(2)
        await expect(instance.locator(".session-row").first).to_contain_text("Fix the login bug")
        assert await page.evaluate("localStorage.getItem('zcode-acp.token')") == TOKEN

        await self.step("open a session: initialize, session/load, the history replayed")
        await instance.locator(f'.session-row[data-session-id="{SESSION}"]').click()
        conn = await hub.next_connection()
        # The token travels in the subprotocol list, never in the URL the page builds.
        assert "token" not in conn.http_request.query and conn.http_request.query["instance"] == "inst-1"
        assert token_subprotocol(TOKEN) in conn.http_request.headers["Sec-WebSocket-Protocol"]
        await self.open_session(conn, SESSION, HISTORY)
        await expect(page.locator(".session-view")).to_have_attribute("data-loaded", "true")
        await expect(transcript.locator(".message.user")).to_have_text(["Please fix the login bug"])
        await expect(page.locator(".conn-state")).to_have_text("live")
        await expect(page.locator(".usage")).to_have_text("10%")

        await self.step("model text with <script> renders as text")
        agent = transcript.locator(".message.agent").first
        await expect(agent).to_contain_text("<script>window.__pwned = 1</script>")
        await expect(agent).to_contain_text('<img src=x onerror="window.__pwned = 2">')
        assert await page.evaluate("window.__pwned") is None
        assert await transcript.locator("script, img, iframe, [onerror]").count() == 0
        await expect(agent.locator("strong")).to_have_text("bold")
        await expect(agent.locator("code")).to_have_text("code")
        assert await agent.locator('a[href^="javascript"]').count() == 0
        await expect(agent.locator("a")).to_have_attribute("href", "https://example.com/docs")
        await expect(agent.locator("a")).to_have_attribute("rel", "noopener noreferrer nofollow")
        await expect(transcript.locator('.tool-card[data-tool-call-id="h1"] .tool-status')).to_have_text("done")

        await self.step("send a prompt; the answer streams with thoughts, a terminal, a diff, the plan, usage")
        await page.fill(".prompt-input", "Run the `tests`")
        await page.click("button.send")
        prompt = await conn.expect("session/prompt")
        assert prompt["params"] == {"sessionId": SESSION, "prompt": [{"type": "text", "text": "Run the `tests`"}]}
        await expect(page.locator("button.cancel")).to_be_enabled()
        for update in turn_updates():
            await conn.update(SESSION, update)
        # The user's own message is Markdown too: the backticks make a code span, not stray marks.
        await expect(transcript.locator(".message.user").last).to_have_text("Run the tests")
        await expect(transcript.locator(".message.user").last.locator("code")).to_have_text("tests")
        await expect(transcript.locator(".message.agent").last).to_have_text("All tests pass. Fixed the login check.")
        await expect(transcript.locator(".thought")).to_contain_text("The failing test is in tests/test_login.py")
        bash = transcript.locator('.tool-card[data-tool-call-id="t1"]')
        await expect(bash.locator(".tool-status")).to_have_text("done")
        await expect(bash.locator(".tool-title")).to_have_text("Bash: pytest -q")
        await expect(bash.locator(".terminal")).to_have_text("collected 3 items\n3 passed in 0.12s\n")
        await expect(bash.locator(".terminal-exit")).to_have_text("exit 0")
        edit = transcript.locator('.tool-card[data-tool-call-id="t2"]')
        await expect(edit.locator(".diff-line.del")).to_have_text(["-     return False"])
        await expect(edit.locator(".diff-line.add")).to_have_text(["+     return user.is_valid()"])
        await expect(page.locator(".plan summary")).to_have_text("Plan 1/3 · Fix the login check")
        await expect(page.locator(".usage")).to_have_text("26%")

        await self.step("the plan's quota: one bar per window, the newest snapshot wins (docs/quota.md)")
        assert (await page.locator(".quota").count()) == 1 and not await page.locator(".quota").is_visible()
        await conn.update(SESSION, quota_update("2026-12-02T09:00:00.000Z", 86.0))
        quota = page.locator(".quota")
        await expect(quota.locator("summary")).to_have_text("GLM Coding Plan · 5-hour window: 86%")
        await expect(quota).to_have_class(re.compile(r"\bwarning\b"))
        await quota.locator("summary").click()
        await expect(quota.locator(".quota-label")).to_have_text(["5-hour window", "Weekly window"])
        await expect(quota.locator(".quota-figure")).to_have_text(["86% used", "12% used"])
        assert await quota.locator('.quota-meter[data-meter-id="five_hour"] meter').get_attribute("value") == "86"
        await expect(quota.locator(".quota-reset")).to_have_count(2)
        await page.screenshot(path=str(self.artifacts / "phone-quota.png"))
        await conn.update(SESSION, quota_update("2026-12-02T08:00:00.000Z", 10.0))  # older: ignored
        await conn.update(SESSION, quota_update("2026-12-02T09:05:00.000Z", 100.0))
        await expect(quota.locator("summary")).to_have_text("GLM Coding Plan · 5-hour window: 100%")
        await expect(quota).to_have_class(re.compile(r"\bexceeded\b"))
        await quota.locator("summary").click()

        await self.step("the project's files, read-only: a folder, a highlighted file, the changes (docs/web-client.md)")
        await page.click("button.files-button")
        listed = await conn.expect("_zcode/files/list")
        assert listed["params"] == {"sessionId": SESSION}, listed
        await conn.respond(listed, {"roots": [WORKSPACE], "path": WORKSPACE, "truncated": False, "entries": [
            {"name": "src", "kind": "dir"}, {"name": "app.py", "kind": "file", "size": 61},
            {"name": "escape", "kind": "other"}]})
        panel = page.locator(".files-panel")
        await expect(panel.locator(".files-name")).to_have_text(["src", "app.py", "escape"])
        assert await panel.locator('.files-entry[data-name="escape"] button').count() == 0  # shown, not opened
        await panel.locator('.files-entry[data-name="app.py"] button').click()
        read = await conn.expect("_zcode/files/read")
        assert read["params"] == {"sessionId": SESSION, "path": f"{WORKSPACE}/app.py"}, read
        await conn.respond(read, {"path": f"{WORKSPACE}/app.py", "size": 61,
                                  "text": "def login(user):\n    return '<script>window.__pwned = 3</script>'\n"})
        code = panel.locator("pre.files-code")
        await expect(code).to_have_attribute("data-language", "python")
        await expect(code.locator(".token.keyword").first).to_have_text("def")
        await expect(code).to_contain_text("<script>window.__pwned = 3</script>")
        assert await panel.locator("script").count() == 0 and await page.evaluate("window.__pwned") is None
        await page.screenshot(path=str(self.artifacts / "phone-files.png"))
        await panel.locator("button.files-tab").nth(1).click()
        diff = await conn.expect("_zcode/files/changes")
        assert diff["params"] == {"sessionId": SESSION}, diff
        await conn.respond(diff, {"git": True, "truncated": False, "untracked": ["notes.txt"], "diff": (
            "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def login(user):\n"
            "-    return False\n+    return user.is_valid()\n")})
        await expect(panel.locator(".diff-line.add")).to_have_text(["+    return user.is_valid()"])
        await expect(panel.locator(".diff-line.del")).to_have_text(["-    return False"])
        await expect(panel.locator(".files-untracked li")).to_have_text(["notes.txt"])
        await page.screenshot(path=str(self.artifacts / "phone-changes.png"))
        await panel.locator("button.files-close").click()
        await expect(panel).to_be_hidden()

        await self.step("a permission dialog: Allow once")
        asked = await conn.request("session/request_permission", permission("t3", "Bash: rm -rf build/", "rm -rf build/"))
        dialog = page.locator(f'.dialog.permission[data-request-id="{asked}"]')
        await expect(dialog.locator(".dialog-title")).to_have_text("Bash: rm -rf build/")
        await expect(dialog.locator("button")).to_have_text(["Allow once", "Always allow", "Deny"])
        await page.screenshot(path=str(self.artifacts / "phone-permission.png"))
        await dialog.get_by_role("button", name="Allow once").click()
        answer = await conn.expect(response_to=asked)
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}, answer
        await expect(page.locator(".dialog")).to_have_count(0)

        await self.step("a dialog answered elsewhere disappears on $/cancel_request")
        withdrawn = await conn.request("session/request_permission", permission("t4", "Bash: git push", "git push"))
        await expect(page.locator(f'.dialog.permission[data-request-id="{withdrawn}"]')).to_be_visible()
        await conn.notify("$/cancel_request", {"requestId": withdrawn})
        await expect(page.locator(".dialog")).to_have_count(0)
        cancelled = await conn.expect(response_to=withdrawn)
        assert cancelled["error"]["code"] == -32800, cancelled

        await self.step("an elicitation form: choices, multi-select, integer, boolean")
        asked = await conn.request("elicitation/create", QUESTION_FORM)
        form = page.locator(f'.dialog.elicitation[data-request-id="{asked}"]')
        await expect(form.locator(".dialog-message strong")).to_have_text("questions")
        await form.get_by_label("auth.test.ts").check()
        await page.screenshot(path=str(self.artifacts / "phone-form.png"))
        await form.get_by_label("Unit").check()
        await form.get_by_label("Verbose output").check()
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".dialog-error")).to_have_text("“Retries” needs an answer.")
        await form.get_by_label("Retries").fill("7")
        await form.get_by_role("button", name="Submit").click()
        await expect(form.locator(".dialog-error")).to_have_text("“Retries” must be at most 5.")
        await form.get_by_label("Retries").fill("2")
        await form.get_by_role("button", name="Submit").click()
        answer = await conn.expect(response_to=asked)
        assert answer["result"] == {"action": "accept", "content": {
            "q_0": "auth.test.ts", "q_1": ["unit"], "retries": 2, "verbose": True}}, answer
        await expect(page.locator(".dialog")).to_have_count(0)

        await conn.update(SESSION, text("agent_message_chunk", "Done.", "m1-3"))
        await conn.respond(prompt, {"stopReason": "end_turn", "usage": {
            "inputTokens": 1200, "outputTokens": 340, "totalTokens": 1540}})
        await expect(page.locator(".composer-status")).to_have_text("last turn: 1.2k in · 340 out")
        await expect(page.locator("button.cancel")).to_be_disabled()
        await expect(page.locator(".notice")).to_have_count(0)
        width = await page.evaluate("[document.documentElement.scrollWidth, document.querySelector('.scroller').scrollWidth]")
        assert max(width) <= 390, f"horizontal overflow on a 390 px screen: {width}"
        await page.locator(".scroller").evaluate("el => el.scrollTop = el.scrollHeight")
        await page.screenshot(path=str(self.artifacts / "phone-session.png"))

        await self.step("mode and model selectors from configOptions")
        await page.select_option('select[data-config-id="model"]', "fast")
        change = await conn.expect("session/set_config_option")
        assert change["params"] == {"sessionId": SESSION, "configId": "model", "value": "fast"}, change
        await conn.respond(change, {"configOptions": config_options(model="fast")})
        await expect(page.locator('select[data-config-id="model"]')).to_have_value("fast")
        await page.select_option('select[data-config-id="mode"]', "plan")
        change = await conn.expect("session/set_config_option")
        assert change["params"] == {"sessionId": SESSION, "configId": "mode", "value": "plan"}, change
        await conn.respond(change, {"configOptions": config_options(mode="plan", model="fast")})
        await expect(page.locator('select[data-config-id="mode"]')).to_have_value("plan")
        await conn.update(SESSION, {"sessionUpdate": "current_mode_update", "currentModeId": "build"})
        await expect(page.locator('select[data-config-id="mode"]')).to_have_value("build")

        await self.step("cancel a long turn")
        await page.fill(".prompt-input", "Write a long essay")
        await page.click("button.send")
        prompt = await conn.expect("session/prompt")
        await conn.update(SESSION, text("agent_message_chunk", "Once upon a time", "m2"))
        await expect(transcript.locator(".message.agent").last).to_have_text("Once upon a time")
        await page.click("button.cancel")
        cancel = await conn.expect("session/cancel")
        assert cancel["params"] == {"sessionId": SESSION} and "id" not in cancel, cancel
        await conn.respond(prompt, {"stopReason": "cancelled"})
        await expect(transcript.locator(".notice").last).to_have_text("Cancelled.")
        await expect(page.locator("button.cancel")).to_be_disabled()

        await self.step("the server drops the socket: the page reconnects (after one refusal) and reloads")
        hub.refuse_next_sockets = 1
        conn.drop()
        await expect(page.locator(".session-view")).to_have_attribute("data-connection", "waiting")
        await expect(page.locator(".conn-state")).to_contain_text("offline")
        await expect(page.locator("button.send")).to_be_disabled()
        conn = await hub.next_connection()
        assert hub.refused_sockets == 1, "the page should have retried after the refused attempt"
        await self.open_session(conn, SESSION, HISTORY + [text("agent_message_chunk", "Replayed after reconnect", "a9")],
                                mode="build", model="fast")
        await expect(page.locator(".conn-state")).to_have_text("live")
        await expect(transcript.locator(".message.agent").last).to_have_text("Replayed after reconnect")
        await expect(transcript.locator(".message.user")).to_have_text(["Please fix the login bug"])
        await expect(transcript.locator(".notice")).to_have_text(["Reconnected. History reloaded."])
        await expect(page.locator("button.send")).to_be_enabled()

        await self.step("another client's prompt is echoed and its turn can be cancelled from here")
        await conn.update(SESSION, text("user_message_chunk", "Also update the docs", "echo-1"))
        await conn.update(SESSION, text("agent_message_chunk", "Updating docs", "m3"))
        await expect(transcript.locator(".message.user").last).to_have_text("Also update the docs")
        await expect(page.locator("button.cancel")).to_be_enabled()
        await page.click("button.cancel")
        cancel = await conn.expect("session/cancel")
        assert cancel["params"] == {"sessionId": SESSION}, cancel

        await self.step("new session in a known project")
        await page.click("button.back")
        await asyncio.wait_for(conn.closed.wait(), 10)  # leaving the session closes its socket
        await page.locator('.instance[data-instance-id="inst-1"] .new-session').click()
        conn = await hub.next_connection()
        init = await conn.expect("initialize")
        await conn.respond(init, INITIALIZE_RESULT)
        new = await conn.expect("session/new")
        assert new["params"] == {"cwd": WORKSPACE, "mcpServers": []}, new
        # An agent that offers modes but no configOptions: the selector uses session/set_mode.
        await conn.respond(new, {"sessionId": "sess-new", "modes": session_state()["modes"]})
        await conn.update("sess-new", {"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "compact", "description": "Compact the context"}, {"name": "mode", "description": "Set the mode"}]})
        await expect(page.locator(".session-view")).to_have_attribute("data-loaded", "true")
        assert page.url.endswith("#/s/inst-1/sess-new"), page.url
        await page.select_option('select[data-config-id="mode"]', "plan")
        change = await conn.expect("session/set_mode")
        assert change["params"] == {"sessionId": "sess-new", "modeId": "plan"}, change
        await conn.respond(change, {})
        await expect(page.locator('select[data-config-id="mode"]')).to_have_value("plan")
        await expect(page.locator('select[data-config-id="model"]')).to_have_count(0)
        await page.fill(".prompt-input", "/co")
        await expect(page.locator(".commands .command")).to_have_text(["/compact"])
        await conn.update(SESSION, text("agent_message_chunk", "for the other session", "x1"))
        await conn.update("sess-new", {"sessionUpdate": "session_info_update", "title": "Fresh start"})
        await expect(page.locator(".session-title")).to_have_text("Fresh start")
        assert await transcript.locator(".message").count() == 0, "an update for another session was shown"

        await self.step("open a project: POST /api/instances")
        await page.click("button.back")
        await page.fill("#project-path", "/home/dev/other")
        await page.click(".start-form button[type=submit]")
        await expect(page.locator(".instance h2")).to_have_text(["demo-project", "other"])
        await expect(page.locator("#project-path")).to_have_value("")
        assert hub.started_projects == ["/home/dev/other"]
        assert ("POST", "/api/instances", 200) in hub.http
        await page.screenshot(path=str(self.artifacts / "phone-list.png"))

        await self.step("the bridge restarts under a new instance id: the page finds the session there")
        await page.locator(f'.instance[data-instance-id="inst-1"] .session-row[data-session-id="{SESSION}"]').click()
        conn = await hub.next_connection()
        await self.open_session(conn, SESSION, HISTORY)
        await expect(page.locator(".conn-state")).to_have_text("live")
        hub.instances[0]["id"] = "inst-9"  # the old id now answers 404
        conn.drop()
        conn = await hub.next_connection(timeout=20)
        assert conn.http_request.query["instance"] == "inst-9", conn.http_request.query
        await self.open_session(conn, SESSION, HISTORY)
        await expect(page.locator(".conn-state")).to_have_text("live")

        await self.step("the token is rotated: the page asks for the new one")
        hub.token = "rotated-token"
        conn.drop()
        await expect(page.locator(".banner")).to_contain_text("Wrong token", timeout=20_000)
        await page.fill("#token", "rotated-token")
        await page.click(".token-form button[type=submit]")
        await expect(page.locator('.instance[data-instance-id="inst-9"] h2')).to_have_text("demo-project")


async def main(artifacts: Path) -> int:
    artifacts.mkdir(parents=True, exist_ok=True)
    instances = [{"id": "inst-1", "pid": 4242, "port": 8378, "origin": "editor", "workspace": WORKSPACE,
                  "startedAt": "2025-01-01T00:00:00Z", "version": "0.1.0",
                  "sessions": [{"sessionId": SESSION, "title": "Fix the login bug", "updatedAt": "2099-01-01T00:00:00Z",
                                "status": "running"},
                               {"sessionId": "sess-0", "title": "Older work", "updatedAt": "2024-01-01T00:00:00Z",
                                "status": "idle"}]}]
    hub = FakeHub(WEB_ROOT, TOKEN, instances)
    port = await hub.start()
    failed = False
    try:
        async with async_playwright() as playwright:
            console: list[str] = []
            browser, page = await open_phone_page(playwright, WAIT_MS, console)
            steps = Steps(page, hub, f"http://127.0.0.1:{port}", artifacts, console)
            try:
                await steps.run()
            except BaseException:
                failed = True
                traceback.print_exc()
                await page.screenshot(path=str(artifacts / "failure.png"))
            unexpected = [m for m in steps.console if not any(p.search(m) for p in EXPECTED_CONSOLE)]
            if unexpected:
                failed = True
                print("unexpected console errors (CSP violations, script errors):", *unexpected, sep="\n  ")
            await browser.close()
    finally:
        await hub.stop()
        (artifacts / "frames.json").write_text(json.dumps(hub.log, indent=1))
    print("scenario failed" if failed else "scenario passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    scenario_command(main)
