"""The 0.16 engine asking its host: permissions, questions, plan approval, headers (docs/simulator.md).

Played from the engine's own source (its interaction broker, permission
options, provider-header and official-MCP-auth requests), in our words:

* ``interaction/requestPermission`` carries ``reason``, ``riskLevel``,
  ``turnId`` and the three official options ``allow_once``, ``allow_project``
  (kind ``allow_always``, whose ``response`` holds the ``permissionUpdates``
  that make "always" stick) and ``deny``, each with the ``response`` to send
  back. The answer is strict (``decision`` allow|deny|escalate|modify, optional
  ``reason``, ``modifiedInput``, ``permissionUpdates``); a deny without a reason
  becomes the engine's own stop-and-wait text. Rules an answer added make later
  asks for the same tool and input allowed by policy: no request, a
  ``permission.resolved`` event instead.
* an unanswered request is re-announced (same ``requestId``, a new ``server-N``
  id) after 1 s, then 2, 4, 8 and every 10 s (``ZCODE_SIM_REANNOUNCE`` scales it);
* the host's runtime preferences decide whether questions answer themselves:
  ``askUserQuestionAutoResolutionEnabled`` omitted means true, and then an
  unanswered question goes on after ``ZCODE_SIM_AUTO_RESOLVE`` seconds,
  accepted with no answers;
* ``interaction/requestUserInput``: AskUserQuestion (answers keyed by the
  question's text; an array is joined with ", ") and plan approval (a question
  "Review this implementation plan."; the answer "approve" approves, any other
  answer is feedback: the plan is not approved and the model reads it).
* ``interaction/requestProviderRuntimeHeaders`` is asked before each model
  request, and only in host auth mode (``ZCODE_APP_SERVER_AUTH_MODE=host``);
  ``headersApplied: false`` fails that request with the host's ``errorMessage``.
* ``interaction/requestOfficialMcpAuthHeaders {requestId, workspace, pluginId,
  mcpKey, targetOrigin}`` for an official plugin's MCP server (the
  ``official_mcp`` step); a bad answer reads as ``official_auth_unavailable``.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any

from .model import SimSession, SimTurn
from .server import REANNOUNCE

if TYPE_CHECKING:
    from .runner import TurnRunner

# The engine's words to the model when the user denies without saying more.
STOP_AND_WAIT = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
                 "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
                 "user to tell you how to proceed.")
DECISIONS = ("allow", "deny", "escalate", "modify")
PERMISSION_KEYS = {"decision", "reason", "modifiedInput", "permissionUpdates"}
USER_INPUT_KEYS = {"action", "content", "reason"}
PLAN_QUESTION = "Review this implementation plan."
RULE_INPUT_KEYS = ("command", "url", "file_path", "path", "pattern")
MCP_AUTH_REASONS = ("official_auth_unavailable", "official_auth_plan_required", "official_mcp_origin_untrusted")
HOST_AUTH = os.environ.get("ZCODE_APP_SERVER_AUTH_MODE", "").strip() == "host"
# With question auto-resolution on, an unanswered AskUserQuestion goes on by itself after this long.
AUTO_RESOLVE = float(os.environ.get("ZCODE_SIM_AUTO_RESOLVE", "30"))
PREFERENCE_KEYS = {"nativeSearchEnhancementsEnabled", "subagentRuntimeConfigEnabled", "memoryEnabled",
                   "askUserQuestionAutoResolutionEnabled", "integratedTerminalShell", "modelContextBudgetStrategy"}


def rule_content(tool_input: Any) -> str | None:
    if isinstance(tool_input, dict):
        for key in RULE_INPUT_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return None


def official_options(name: str, tool_input: Any) -> list[dict[str, Any]]:
    rule: dict[str, Any] = {"toolName": name}
    if rule_content(tool_input):
        rule["ruleContent"] = rule_content(tool_input)
    return [
        {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once",
         "response": {"decision": "allow", "reason": "Approved once"}},
        {"optionId": "allow_project", "kind": "allow_always", "name": "Always allow in this project",
         "description": "Do not ask again for matching requests in this project",
         "response": {"decision": "allow", "reason": "Approved for this project",
                      "permissionUpdates": [{"type": "addRules", "behavior": "allow", "rules": [rule]}]}},
        {"optionId": "deny", "kind": "deny", "name": "Deny", "response": {"decision": "deny", "reason": STOP_AND_WAIT}},
    ]


def strict_permission(answer: dict[str, Any]) -> str:
    """What the engine's strict response schema refuses in ``answer`` ('' when it is valid)."""
    extra = set(answer) - PERMISSION_KEYS
    if extra:
        return f"unrecognized keys {sorted(extra)}"
    if answer.get("decision") not in DECISIONS:
        return f"decision must be one of {', '.join(DECISIONS)}"
    for update in answer.get("permissionUpdates") or []:
        if not isinstance(update, dict) or update.get("type") != "addRules" or not update.get("rules"):
            return "permissionUpdates[] must be {type: addRules, behavior, rules: [...]}"
    return ""


def strict_user_input(answer: dict[str, Any]) -> str:
    extra = set(answer) - USER_INPUT_KEYS
    if extra:
        return f"unrecognized keys {sorted(extra)}"
    if answer.get("action") not in ("accept", "decline", "cancel"):
        return "action must be accept, decline or cancel"
    if "content" in answer and not isinstance(answer["content"], dict):
        return "content must be an object"
    return ""


def answer_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list):
        joined = ", ".join(item.strip() for item in value if isinstance(item, str) and item.strip())
        return joined or None
    return None


class Cli016Interactions:
    """Mixed into Cli016SimServer: how the 0.16 engine asks, and reads the answers."""

    rules: dict[str, list[dict[str, Any]]]  # by session id: the "always allow" rules answers added

    if TYPE_CHECKING:  # provided by SimServer
        def ask_user(self, method: str, params: dict[str, Any], turn: SimTurn) -> dict[str, Any] | None: ...
        def ask_bridge(self, method: str, params: Any, timeout: float = 30) -> Any: ...
        def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
                 push: bool = True, flush: bool = True) -> dict[str, Any]: ...

    def next_reannounce(self, wait: float) -> float:
        """The 0.16 engine re-announces an unanswered request after 1 s, doubling up to 10 s."""
        return min(wait * 2, 10 * REANNOUNCE)

    def _allowed_by_rule(self, session: SimSession, name: str, tool_input: Any) -> bool:
        content = rule_content(tool_input)
        for rule in getattr(self, "rules", {}).get(session.session_id, []):
            if rule.get("toolName") == name and rule.get("ruleContent") in (None, content):
                return True
        return False

    def ask_permission(self, runner: TurnRunner, tool_id: str, name: str, tool_input: Any,
                       step: dict[str, Any]) -> tuple[bool, str] | None:
        session, turn = runner.session, runner.turn
        request_id = f"perm_{uuid.uuid4().hex[:12]}"
        if self._allowed_by_rule(session, name, tool_input):
            runner.emit("permission.resolved", {"requestId": request_id, "toolCallId": tool_id, "toolName": name,
                                                "decision": "allow", "reason": "Allowed by a project rule"})
            return True, "Allowed by a project rule"
        runner.emit("permission.requested", {
            "requestId": request_id, "toolCallId": tool_id, "toolName": name, "riskLevel": step.get("risk", "high"),
            "reason": step.get("reason", "This command changes files."), "input": tool_input,
            "options": official_options(name, tool_input)})
        answer = self.ask_user("interaction/requestPermission", {
            "requestId": request_id, "sessionId": session.session_id, "turnId": turn.turn_id,
            "toolCallId": tool_id, "toolName": name, "reason": step.get("reason", "This command changes files."),
            "riskLevel": step.get("risk", "high"), "input": tool_input,
            "options": official_options(name, tool_input)}, turn)
        if answer is None:
            return None
        problem = strict_permission(answer)
        if problem:  # the engine cannot read the answer: the tool fails, it is not run
            return False, f"Invalid permission response: {problem}"
        reason = answer.get("reason") if isinstance(answer.get("reason"), str) else ""
        if answer["decision"] == "deny":
            reason = reason.strip() or STOP_AND_WAIT
        for update in answer.get("permissionUpdates") or []:
            if update.get("behavior") == "allow":
                self.rules.setdefault(session.session_id, []).extend(update["rules"])
        runner.emit("permission.resolved", {"requestId": request_id, "toolCallId": tool_id, "toolName": name,
                                            "decision": answer["decision"], **({"reason": reason} if reason else {})})
        return answer["decision"] in ("allow", "modify"), reason

    def ask_plan(self, runner: TurnRunner, tool_id: str, plan: str) -> tuple[bool, str] | None:
        session, turn = runner.session, runner.turn
        answer = self.ask_user("interaction/requestUserInput", {
            "requestId": f"plan_{uuid.uuid4().hex[:12]}", "sessionId": session.session_id, "turnId": turn.turn_id,
            "toolCallId": tool_id, "toolName": "ExitPlanMode", "prompt": "Exit plan mode?",
            "questions": [{"header": "Plan", "question": PLAN_QUESTION, "options": [
                {"value": "approve", "label": "Approve", "description": "Exit plan mode and start implementation."}]}],
            "schema": {"interaction": "plan_approval", "toolName": "ExitPlanMode"}, "input": {"plan": plan}}, turn)
        if answer is None:
            return None
        problem = strict_user_input(answer)
        if problem:
            return False, f"Invalid user input response: {problem}"
        if answer["action"] != "accept":
            return False, str(answer.get("reason") or "")
        content = answer.get("content") or {}
        given = answer_text((content.get("answers") or {}).get(PLAN_QUESTION) if isinstance(
            content.get("answers"), dict) else None) or answer_text(content.get("answer_0")) or answer_text(
            content.get("answer"))
        if given == "approve":
            return True, ""
        return False, f"feedback: {given}" if given else str(answer.get("reason") or "")

    preferences: dict[str, dict[str, Any]]  # by session id: the host's runtime preferences

    def remember_preferences(self, session: SimSession, frame: Any) -> None:
        """The strict preferences answer; an unreadable one leaves the engine's defaults."""
        result = frame.get("result") if isinstance(frame, dict) else None
        readable = isinstance(result, dict) and set(result) <= PREFERENCE_KEYS and isinstance(
            result.get("nativeSearchEnhancementsEnabled"), bool)
        self.preferences[session.session_id] = result if readable else {}

    def questions_resolve_themselves(self, session: SimSession) -> bool:
        """The session's runtime preference when it states one, else the server's own setting: true
        until ``workspace/updateInteractionPreferences`` changes it (server.ts)."""
        default = bool(getattr(self, "auto_resolution_enabled", True))
        stated = self.preferences.get(session.session_id, {}).get("askUserQuestionAutoResolutionEnabled")
        return stated if isinstance(stated, bool) else default

    def ask_questions(self, runner: TurnRunner, tool_id: str,
                      questions: list[dict[str, Any]]) -> tuple[bool, Any] | None:
        session, turn = runner.session, runner.turn
        # With auto-resolution on, an unanswered question goes on by itself: accepted with no answers.
        resolve = (AUTO_RESOLVE, {"action": "accept", "content": {"answers": {}}}) \
            if self.questions_resolve_themselves(session) else None
        shown = [{"question": q["question"], "header": q.get("header") or "Question",
                  "options": [{"value": o["label"], "label": o["label"]} for o in q.get("options") or []],
                  **({"multiSelect": True} if q.get("multiSelect") else {})} for q in questions]
        answer = self.ask_user("interaction/requestUserInput", {
            "requestId": f"ask_{uuid.uuid4().hex[:12]}", "sessionId": session.session_id, "turnId": turn.turn_id,
            "toolCallId": tool_id, "toolName": "AskUserQuestion", "questions": shown,
            "schema": {"toolName": "AskUserQuestion"}, "input": {"questions": questions}}, turn, resolve)
        if answer is None:
            return None
        problem = strict_user_input(answer)
        if problem:
            return False, f"Invalid user input response: {problem}"
        if answer["action"] != "accept":
            return False, answer.get("reason") or f"AskUserQuestion was {answer['action']}d"
        content = answer.get("content") or {}
        raw = content.get("answers") if isinstance(content.get("answers"), dict) else {}
        answers = {}
        for index, question in enumerate(questions):
            text = answer_text(raw.get(question["question"], content.get(f"answer_{index}")))
            if text:
                answers[question["question"]] = text
        return True, answers

    def notify(self, session: SimSession, task: Any, status: str) -> None:
        """The engine stores the notification it hands the model as a model-only user message."""
        session.messages.append({"info": {"id": f"msg_{uuid.uuid4().hex[:10]}", "role": "user",
                                          "visibility": "model-only", "source": "background_task"},
                                 "parts": [{"type": "text", "text": f"<task-notification><task-id>{task.task_id}"
                                                                    f"</task-id><status>{status}</status>"
                                                                    "</task-notification>"}]})
        super().notify(session, task, status)  # type: ignore[misc]

    # -- prompt attachments ------------------------------------------------------------------

    attachments: dict[str, list[dict[str, Any]]]  # by session id: the next turn's readable attachments

    def take_attachments(self, session: SimSession, given: Any) -> None:
        """The engine's reading of ``session/send`` ``attachments``: what it cannot read it drops, silently."""
        readable = []
        for item in given if isinstance(given, list) else []:
            if not isinstance(item, dict):
                continue
            kind = item.get("kind")
            has_data = isinstance(item.get("localPath"), str) or isinstance(item.get("dataBase64"), str)
            if (kind in ("image", "pdf", "video") and has_data) or (kind in ("file", "audio") and (
                    has_data or isinstance(item.get("textContent"), str))):
                readable.append({"fileName": item.get("filename") or "attachment",
                                 "mime": item.get("mimeType") or f"{kind}/*",
                                 "bytes": len(item.get("dataBase64") or "") * 3 // 4,
                                 **({"ref": item["localPath"]} if isinstance(item.get("localPath"), str) else {})})
        self.attachments[session.session_id] = readable

    def attachments_shown(self, session: SimSession) -> dict[str, Any]:
        readable = self.attachments.get(session.session_id) or []
        return {"attachments": readable} if readable else {}

    def say_attachments(self, session: SimSession, turn: SimTurn) -> None:
        """The model mentions what it was given, so a user (and a test) sees what reached it."""
        readable = self.attachments.pop(session.session_id, None) or []
        if readable:
            # A path the engine read is named; an upload (its ref is the engine's staging name) by its size.
            names = ", ".join(f"{a['fileName']} ({path_of(a) or str(a['bytes']) + ' bytes'})" for a in readable)
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": f"[attachments: {names}] "},
                      turn.turn_id)

    # -- headers -----------------------------------------------------------------------------------

    def model_request_refused(self, session: SimSession, turn: SimTurn) -> str:
        """Host auth mode: ask the host for this model request's credentials ('' = go ahead)."""
        if not HOST_AUTH:
            return ""
        frame = self.ask_bridge("interaction/requestProviderRuntimeHeaders", {
            "requestId": f"hdr_{uuid.uuid4().hex[:12]}", "sessionId": session.session_id, "turnId": turn.turn_id,
            "workspace": session.workspace, "modelSelection": {"providerId": "zhipu", "modelId": session.model},
            "providerId": "zhipu", "reason": "model_request"})
        result = frame.get("result") if isinstance(frame, dict) else None
        if isinstance(result, dict) and result.get("headersApplied") is True and isinstance(
                result.get("requestAuth"), dict):
            return ""
        message = result.get("errorMessage") if isinstance(result, dict) else None
        return message if isinstance(message, str) and message else "Provider runtime headers unavailable"

    def official_mcp_auth(self, runner: TurnRunner, step: dict[str, Any]) -> str:
        """The official plugin MCP server asks for the user's identity headers; '' or the failure reason."""
        session = runner.session
        frame = self.ask_bridge("interaction/requestOfficialMcpAuthHeaders", {
            "requestId": f"mcp_{uuid.uuid4().hex[:12]}", "workspace": session.workspace,
            "pluginId": step.get("plugin", "zcode-official"), "mcpKey": step.get("key", "web-search"),
            "targetOrigin": step.get("origin", "https://api.z.ai")})
        result = frame.get("result") if isinstance(frame, dict) else None
        if isinstance(result, dict) and result.get("ok") is True and set(result) == {"ok", "headers"} and \
                isinstance(result.get("headers"), dict):
            return ""
        if isinstance(result, dict) and result.get("ok") is False and set(result) == {"ok", "reason"} and \
                result.get("reason") in MCP_AUTH_REASONS:
            return str(result["reason"])
        return "official_auth_unavailable"  # any answer it cannot read


def path_of(attachment: dict[str, Any]) -> str | None:
    """The local path a send's attachment named, or None for an uploaded one (``attachment://`` ref)."""
    ref = attachment.get("ref")
    return ref if isinstance(ref, str) and not ref.startswith("attachment://") else None
