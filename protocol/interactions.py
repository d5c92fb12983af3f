"""Backend interaction requests ↔ ACP dialogs (docs/interactions.md).

Pure mapping: what to ask the client (``session/request_permission`` or an
``elicitation/create`` form) for each kind of backend request, and what to
answer the backend for each kind of client answer. The state (who was asked,
who answered first) lives in the InteractionRouter actor.
"""

from __future__ import annotations

from typing import Any

from . import tools
from .i18n import EN, t
from .i18n.en import MESSAGES as EN_MESSAGES
from .shapes import obj

PERMISSION = "permission"
PLAN = "plan"
QUESTIONS = "questions"
SKIP = "__skip__"

ALLOW_KINDS = frozenset({"allow_once", "allow_always"})
_KIND_MAP = {
    "allow_once": "allow_once",
    "allow_always": "allow_always",
    "allow": "allow_always",
    "allow_project": "allow_always",
    "reject_once": "reject_once",
    "reject_always": "reject_always",
    "deny_always": "reject_always",
}
PLAN_FORM_HINT = "plan.form_hint"  # catalog keys (protocol/i18n)


def classify(method: str, params: dict[str, Any]) -> str:
    if method == "interaction/requestPermission":
        return PERMISSION
    schema = obj(params.get("schema"))
    if schema.get("interaction") == "plan_approval":
        return PLAN
    return QUESTIONS


def interaction_key(frame: dict[str, Any]) -> str:
    """Re-announces keep ``requestId`` (or ``toolCallId``) and change the JSON-RPC id."""
    params = obj(frame.get("params"))
    for key in ("requestId", "toolCallId"):
        if isinstance(params.get(key), (str, int)) and not isinstance(params.get(key), bool):
            return f"{key}:{params[key]}"
    return f"id:{frame.get('id')}"


def questions(params: dict[str, Any]) -> list[dict[str, Any]]:
    found = params.get("questions")
    if not isinstance(found, list):
        found = (params.get("input") or {}).get("questions") if isinstance(params.get("input"), dict) else None
    return [q for q in found or [] if isinstance(q, dict) and isinstance(q.get("question"), str)]


def option_labels(question: dict[str, Any]) -> list[str]:
    labels = []
    for option in question.get("options") or []:
        if isinstance(option, dict) and isinstance(option.get("label"), str):
            labels.append(option["label"])
        elif isinstance(option, str):
            labels.append(option)
    return labels


def tool_name(kind: str, params: dict[str, Any]) -> str:
    if kind == PLAN:
        return "ExitPlanMode"
    if kind == QUESTIONS:
        return "AskUserQuestion"
    return str(params.get("toolName") or "Tool")


def tool_input(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    value = params.get("input")
    if isinstance(value, dict):
        return value
    if kind == QUESTIONS:
        return {"questions": questions(params)}
    return {}


def card_id(frame: dict[str, Any]) -> str:
    params = obj(frame.get("params"))
    tool_call_id = params.get("toolCallId")
    if isinstance(tool_call_id, str) and tool_call_id:
        return tool_call_id
    return f"ix_{params.get('requestId') or frame.get('id')}"


def ask_reason(params: dict[str, Any], lang: str = EN) -> str:
    """Why the engine asks, as the dialog shows it: its ``reason`` and ``riskLevel`` (issue 21)."""
    reason = params.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    risk = params.get("riskLevel")
    if isinstance(risk, str) and risk:
        risk = risk_word(risk, lang)
        return t(lang, "permission.reason_and_risk", reason=reason, risk=risk) if reason \
            else t(lang, "permission.risk", risk=risk)
    return reason


def risk_word(risk: str, lang: str) -> str:
    """The engine's risk level in ``lang`` (``high`` → 高); a level the catalog does not know, as written."""
    key = f"permission.risk_level.{risk.strip().lower()}"
    return t(lang, key) if key in EN_MESSAGES else risk


def dialog_tool_call(frame: dict[str, Any], lang: str = EN) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """(card id, tool name, tool input, the ``toolCall`` a permission dialog shows)."""
    params = obj(frame.get("params"))
    kind = classify(frame.get("method", ""), params)
    name, value = tool_name(kind, params), tool_input(kind, params)
    tool_call_id = card_id(frame)
    tool_call: dict[str, Any] = {
        "toolCallId": tool_call_id,
        "title": tools.tool_title(name, value),
        "kind": tools.tool_kind(name),
        "status": "pending",
        "rawInput": value,
    }
    if kind == PLAN and plan_text(params):
        tool_call["content"] = tools.text_content(plan_text(params))
    elif kind == PERMISSION and ask_reason(params, lang):
        # The content a client shows in the dialog replaces the card's: keep the card's own
        # diff (an Edit's) and add the engine's reason under it.
        tool_call["content"] = tools.diff_content(name, value) + tools.text_content(ask_reason(params, lang))
    return tool_call_id, name, value, tool_call


# -- permission ---------------------------------------------------------------

def normalize_kind(kind: Any) -> str:
    """Legacy option kinds → ACP's four. Nothing unknown ever becomes an allow."""
    return _KIND_MAP.get(kind, "reject_once") if isinstance(kind, str) else "reject_once"


def _option_label(option: dict[str, Any], kind: str, lang: str) -> str:
    """An option's name: the engine's in English; in another language the bridge's own words for its
    kind (the engine names its buttons in English only; docs/decisions.md, "Chinese throughout")."""
    if lang == EN:
        return str(option.get("name") or option["optionId"])
    scoped = "project" in f"{option.get('kind')} {option['optionId']}"
    return t(lang, "permission.option.allow_project" if kind == "allow_always" and scoped
             else f"permission.option.{kind}")


def permission_options(params: dict[str, Any], lang: str = EN) -> list[dict[str, str]]:
    """The dialog's options: one per ACP kind (issue 21; docs/decisions.md, "One option per kind").

    Clients pick and label options by ``kind``; two options of one kind (the seed's
    Deny and Reject are both ``reject_once``) read as the same button, so the
    first of each kind is kept and a later one dropped.
    """
    options: list[dict[str, str]] = []
    kinds: set[str] = set()
    for option in params.get("options") or []:
        if isinstance(option, dict) and isinstance(option.get("optionId"), str):
            kind = normalize_kind(option.get("kind"))
            if kind in kinds:
                continue
            kinds.add(kind)
            options.append({"optionId": option["optionId"], "name": _option_label(option, kind, lang), "kind": kind})
    if not options:  # a backend that sent none still needs a yes/no
        options = [{"optionId": "allow", "name": t(lang, "permission.allow"), "kind": "allow_once"},
                   {"optionId": "deny", "name": t(lang, "permission.deny"), "kind": "reject_once"}]
    return options


RESPONSE_KEYS = ("decision", "reason", "modifiedInput", "permissionUpdates")  # the engine's answer is strict


def option_response(params: dict[str, Any], option_id: str) -> dict[str, Any] | None:
    """The ``response`` the 0.16 engine attached to an option: what it wants back when it is chosen."""
    for option in params.get("options") or []:
        if isinstance(option, dict) and option.get("optionId") == option_id:
            response = option.get("response")
            if isinstance(response, dict) and response.get("decision") in ("allow", "deny", "escalate", "modify"):
                return {key: response[key] for key in RESPONSE_KEYS if key in response}
    return None


def speaks_responses(params: dict[str, Any]) -> bool:
    """The 0.16 engine: every option carries the response to send back."""
    options = [o for o in params.get("options") or [] if isinstance(o, dict)]
    return bool(options) and all(isinstance(o.get("response"), dict) for o in options)


def permission_request(session_id: str, tool_call: dict[str, Any], options: list[dict[str, str]]) -> dict[str, Any]:
    return {"sessionId": session_id, "toolCall": tool_call, "options": options}


def selected_option(result: Any) -> str | None:
    """The optionId a permission answer selected, or None for cancelled/garbage."""
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
        option = outcome.get("optionId")
        return option if isinstance(option, str) else None
    return None


def permission_answer(result: Any, options: list[dict[str, str]], params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The engine's answer to the chosen option.

    The 0.16 engine gets the option's own ``response`` back verbatim (so "always
    allow in this project" carries its ``permissionUpdates``, and a deny its own
    stop-and-wait text); a cancelled dialog is a deny without a reason, which the
    engine turns into that same text. The seed's options carry no response.
    """
    params = params or {}
    option_id = selected_option(result)
    kinds = {option["optionId"]: option["kind"] for option in options}
    response = option_response(params, option_id) if option_id in kinds else None
    if response is not None:
        return response
    if option_id is None or option_id not in kinds:
        if speaks_responses(params):  # cancelled, or an option we never offered
            return {"decision": "deny"}
        if option_id is None:
            return {"decision": "deny", "reason": "cancelled by user"}
    if kinds.get(option_id) in ALLOW_KINDS:
        return {"decision": "allow"}
    return {"decision": "deny", "reason": f"rejected ({option_id})"}


# -- plan approval (ExitPlanMode) ---------------------------------------------------

def plan_text(params: dict[str, Any]) -> str:
    value = tool_input(PLAN, params).get("plan")
    return value if isinstance(value, str) else ""


def plan_form(session_id: str, tool_call_id: str | None, params: dict[str, Any], lang: str = EN) -> dict[str, Any]:
    request = {
        "mode": "form",
        "sessionId": session_id,
        "message": f"{plan_text(params)}\n\n{t(lang, PLAN_FORM_HINT)}",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "feedback": {
                    "type": "string",
                    "title": t(lang, "plan.feedback.title"),
                    "description": t(lang, "plan.feedback.description"),
                }
            },
            "required": [],
        },
    }
    if tool_call_id:
        request["toolCallId"] = tool_call_id
    return request


def plan_speaks_answers(params: dict[str, Any]) -> bool:
    """The 0.16 engine asks plan approval as a question (``questions``) and reads feedback as an answer."""
    return bool(questions(params))


def plan_form_answer(result: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Empty feedback approves. Typed feedback redirects: the 0.16 engine takes it as an
    accepted answer other than "approve" (it then keeps planning and hands the text to
    the model); the seed's engine as a decline with the text as its reason."""
    if isinstance(result, dict) and result.get("action") == "accept":
        content = obj(result.get("content"))
        feedback = content.get("feedback")
        if isinstance(feedback, str) and feedback.strip():
            if plan_speaks_answers(params or {}):
                return {"action": "accept", "content": {"answer": feedback.strip()}}
            return {"action": "decline", "reason": feedback.strip()}
        return {"action": "accept", "content": {"answer_0": "approve"}}
    return {"action": "decline", "reason": "cancelled"}


def plan_options(lang: str = EN) -> list[dict[str, str]]:
    return [{"optionId": "approve", "name": t(lang, "plan.approve"), "kind": "allow_once"},
            {"optionId": "reject", "name": t(lang, "plan.keep_planning"), "kind": "reject_once"}]




def plan_permission_answer(result: Any) -> dict[str, Any]:
    option_id = selected_option(result)
    if option_id == "approve":
        return {"action": "accept", "content": {"answer_0": "approve"}}
    if option_id is None:
        return {"action": "decline", "reason": "cancelled"}
    return {"action": "decline", "reason": "rejected"}


# -- AskUserQuestion ------------------------------------------------------------------

def questions_form(session_id: str, tool_call_id: str | None, params: dict[str, Any],
                   lang: str = EN) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for index, question in enumerate(questions(params)):
        labels = option_labels(question)
        title = str(question.get("header") or question["question"])
        choices = [{"const": label, "title": label} for label in labels]
        if question.get("multiSelect"):
            properties[f"q_{index}"] = {"type": "array", "title": title, "description": question["question"],
                                        "items": {"anyOf": choices}}
        else:
            properties[f"q_{index}"] = {"type": "string", "title": title, "description": question["question"],
                                        "oneOf": choices + [{"const": SKIP, "title": t(lang, "question.skip_this")}]}
        properties[f"q_{index}_other"] = {"type": "string",
                                          "title": t(lang, "question.other")}
    request = {
        "mode": "form",
        "sessionId": session_id,
        "message": t(lang, "question.one" if len(properties) <= 2 else "question.many"),
        "requestedSchema": {"type": "object", "properties": properties, "required": []},
    }
    if tool_call_id:
        request["toolCallId"] = tool_call_id
    return request


def questions_form_answer(result: Any, params: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(result, dict) or result.get("action") != "accept":
        return {"action": "decline", "reason": "cancelled"}
    content = obj(result.get("content"))
    answers: dict[str, str] = {}
    for index, question in enumerate(questions(params)):
        picked = content.get(f"q_{index}")
        other = content.get(f"q_{index}_other")
        other = other.strip() if isinstance(other, str) else ""
        if question.get("multiSelect"):
            values = [v for v in picked if isinstance(v, str) and v != SKIP] if isinstance(picked, list) else []
            if other:
                values.append(other)
            if values:
                answers[question["question"]] = ", ".join(values)
        elif other:
            answers[question["question"]] = other
        elif isinstance(picked, str) and picked and picked != SKIP:
            answers[question["question"]] = picked
    return {"action": "accept", "content": {"answers": answers}}


DONE = "done"


def question_options(question: dict[str, Any], chosen: list[str] | tuple[str, ...] = (),
                     lang: str = EN) -> list[dict[str, str]]:
    """A question as a dialog: its labels, then Skip. A multi-select question is asked
    again after each pick, without the labels already chosen and with Done in place of
    Skip once something is chosen (a client without forms still chooses several)."""
    options = [{"optionId": f"o_{i}", "name": label, "kind": "allow_once"}
               for i, label in enumerate(option_labels(question)) if label not in chosen]
    if chosen:
        return options + [{"optionId": DONE, "name": t(lang, "question.done", chosen=", ".join(chosen)),
                           "kind": "reject_once"}]
    return options + [{"optionId": "skip", "name": t(lang, "question.skip"), "kind": "reject_once"}]


def question_title(question: dict[str, Any], chosen: list[str] | tuple[str, ...] = (), lang: str = EN) -> str:
    title = str(question["question"])
    if question.get("multiSelect"):
        return t(lang, "question.multi_next", question=title, chosen=", ".join(chosen)) if chosen else \
            t(lang, "question.multi_first", question=title)
    return title


def multi_done(result: Any) -> bool:
    return selected_option(result) == DONE


def question_pick(result: Any, question: dict[str, Any]) -> str | None:
    """The label picked in a per-question permission dialog; None = skip or cancel."""
    option_id = selected_option(result)
    labels = option_labels(question)
    if option_id and option_id.startswith("o_") and option_id[2:].isdigit() and int(option_id[2:]) < len(labels):
        return labels[int(option_id[2:])]
    return None


def decline(kind: str, reason: str) -> dict[str, Any]:
    if kind == PERMISSION:
        return {"decision": "deny", "reason": reason}
    return {"action": "decline", "reason": reason}
