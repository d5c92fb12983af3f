"""What a webhook receives when a turn needs the user: pure formatting, one function per service.

Three kinds of notice (docs/hub.md, "Notifications"): a long turn ended, a dialog
waits for an answer, the backend failed. Each is rendered for one of five
receivers: a generic JSON body, a WeCom group robot (``msgtype: markdown``), a
Feishu/Lark custom bot (``msg_type: interactive``, a card), a DingTalk custom
robot (``msgtype: markdown``) or ntfy (the message as a plain body, the title in
a ``Title`` header, the link in ``Click``).

What a notice never carries: the token (a link is built from the hub page's
public address and the ids only), and the prompt's or answer's text unless the
user opted in (``text`` is empty otherwise: the caller decides, this module only
formats what it is given).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from zcode_acp.protocol.i18n import EN, t

FORMATS = ("json", "wecom", "feishu", "dingtalk", "ntfy")
TURN_ENDED = "turn_ended"
DIALOG_WAITING = "dialog_waiting"
BACKEND_FAILED = "backend_failed"
KINDS = (TURN_ENDED, DIALOG_WAITING, BACKEND_FAILED)
TEXT_LIMIT = 1000  # characters of prompt or answer text (opted in): receivers cap a message near 2–4 KB


@dataclass(frozen=True, slots=True)
class Notice:
    kind: str  # one of KINDS
    summary: str  # what happened, one line (never user text)
    title: str = ""  # the session's title; "" when it has none yet
    session_id: str = ""  # the ACP session id; "" for a backend failure with no session
    link: str = ""  # the session on the hub page, when one is known
    prompt: str = ""  # the prompt's text: only when the user opted in
    answer: str = ""  # the answer's text: only when the user opted in
    lang: str = EN  # of the words the bridge writes (protocol/i18n); the engine's pass as they are

    @property
    def heading(self) -> str:
        return t(self.lang, "notify.heading", headline=t(self.lang, f"notify.headline.{self.kind}"),
                 title=self.title or t(self.lang, "notify.untitled"))


@dataclass(frozen=True, slots=True)
class Post:
    """One HTTP POST: the body and the headers it needs (Content-Type included)."""

    body: bytes
    headers: dict[str, str]


def session_link(page: str, instance_id: str, session_id: str) -> str:
    """The hub page's route to a session (``#/s/<instance>/<session>``); "" without a page address.

    The page keeps the token in the browser; the link never has one.
    """
    if not page or not instance_id or not session_id:
        return ""
    return f"{page.rstrip('/')}/#/s/{quote(instance_id, safe='')}/{quote(session_id, safe='')}"


def session_name(cwd: str, session_id: str) -> str:
    """What a notice calls a session when no prompt text may go: its folder's name and the first
    8 characters of its id (``proj (9350c6b5)``). A title made from the prompt is prompt text
    (docs/decisions.md, "What a notice names a session by")."""
    folder = cwd.rstrip("/").rsplit("/", 1)[-1] if cwd else ""
    short = session_id[:8]
    return f"{folder} ({short})" if folder and short else folder or short


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lines(notice: Notice, markdown: bool) -> list[str]:
    lines = [notice.summary]
    for key, text in (("notify.prompt", notice.prompt), ("notify.answer", notice.answer)):
        if text:
            lines.append(t(notice.lang, key, text=clip(text)))
    if notice.link:
        lines.append(f"[{t(notice.lang, 'notify.open')}]({notice.link})" if markdown else notice.link)
    return lines


def _json(body: dict[str, Any]) -> Post:
    return Post(json.dumps(body, ensure_ascii=False).encode("utf-8"),
                {"Content-Type": "application/json; charset=utf-8"})


def generic(notice: Notice) -> Post:
    untitled = t(notice.lang, "notify.untitled")
    body: dict[str, Any] = {"event": notice.kind, "title": notice.title or untitled, "summary": notice.summary,
                            "heading": notice.heading}
    for key in ("session_id", "link", "prompt", "answer"):
        value = getattr(notice, key)
        if value:
            body["sessionId" if key == "session_id" else key] = clip(value) if key in ("prompt", "answer") else value
    return _json(body)


def wecom(notice: Notice) -> Post:
    """WeCom group robot: ``{"msgtype": "markdown", "markdown": {"content"}}`` (content ≤ 4096 bytes)."""
    content = "\n".join([f"**{notice.heading}**", *(f"> {line}" for line in _lines(notice, markdown=True))])
    return _json({"msgtype": "markdown", "markdown": {"content": content}})


def feishu(notice: Notice) -> Post:
    """Feishu/Lark custom bot: an interactive card, its header the heading, a button to the session."""
    elements: list[dict[str, Any]] = [{"tag": "div", "text": {"tag": "lark_md", "content": "\n".join(
        _lines(notice, markdown=False)[: None if not notice.link else -1])}}]
    if notice.link:
        elements.append({"tag": "action", "actions": [{"tag": "button", "type": "primary", "url": notice.link,
                                                       "text": {"tag": "plain_text", "content": t(notice.lang, "notify.open")}}]})
    template = {TURN_ENDED: "green", DIALOG_WAITING: "orange", BACKEND_FAILED: "red"}[notice.kind]
    return _json({"msg_type": "interactive", "card": {
        "header": {"template": template, "title": {"tag": "plain_text", "content": notice.heading}},
        "elements": elements}})


def dingtalk(notice: Notice) -> Post:
    """DingTalk custom robot: ``{"msgtype": "markdown", "markdown": {"title", "text"}}``."""
    text = "\n\n".join([f"#### {notice.heading}", *_lines(notice, markdown=True)])
    return _json({"msgtype": "markdown", "markdown": {"title": notice.heading, "text": text}})


def ntfy(notice: Notice) -> Post:
    """ntfy: the message is the plain body; ``Title`` (RFC 2047 when not ASCII, as ntfy ≥ 2.4 decodes),
    ``Click`` opens the session, ``Tags`` picks an emoji."""
    headers = {"Content-Type": "text/plain; charset=utf-8", "Title": _header(notice.heading),
               "Tags": {TURN_ENDED: "white_check_mark", DIALOG_WAITING: "raising_hand",
                        BACKEND_FAILED: "warning"}[notice.kind]}
    if notice.link:
        headers["Click"] = notice.link
    if notice.kind == DIALOG_WAITING:
        headers["Priority"] = "high"
    body = "\n".join(_lines(notice, markdown=False)[: None if not notice.link else -1])
    return Post(body.encode("utf-8"), headers)


def _header(value: str) -> str:
    try:
        value.encode("ascii")
    except UnicodeEncodeError:
        from email.header import Header  # (rarely needed: kept off the bridge's start-up)

        return Header(value, "utf-8").encode()
    return value


RENDERERS = {"json": generic, "wecom": wecom, "feishu": feishu, "dingtalk": dingtalk, "ntfy": ntfy}


def render(notice: Notice, fmt: str) -> Post:
    return RENDERERS[fmt](notice)


def turn_summary(seconds: float, outcome: str, lang: str = EN) -> str:
    """``Finished after 3 min 20 s (end_turn).``: how long the turn ran, and how it ended."""
    whole = int(seconds)
    took = (t(lang, "notify.minutes", minutes=whole // 60, seconds=whole % 60) if whole >= 60
            else t(lang, "notify.seconds", seconds=whole))
    return t(lang, "notify.turn_outcome" if outcome else "notify.turn", took=took, outcome=outcome)


def dialog_summary(kind: str, what: str, lang: str = EN) -> str:
    label = t(lang, f"notify.dialog.{kind}" if kind in ("permission", "questions", "plan") else "notify.dialog.other")
    what = what.strip()
    if not what:
        return t(lang, "notify.waits", label=label, what=what)
    # A question ends with its own mark: no full stop after it.
    ended = what[-1] in ".?!…。？！" or what.endswith(")")
    return t(lang, "notify.waits_ended" if ended else "notify.waits_what", label=label, what=what)


def backend_summary(reason: str, lang: str = EN) -> str:
    """The backend's death: the bridge's words around the engine's own (its last stderr line)."""
    return t(lang, "notify.backend", reason=clip(reason, 300))
