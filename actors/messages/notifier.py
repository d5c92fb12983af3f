"""Messages the Notifier receives (actors/notifier.py): tells only, nothing waits for them."""

from __future__ import annotations


from zcode_acp.actors.message_class import message


# -- notifications (actors/notifier.py): tells only, nothing waits for them -----------------------


@message
class TurnFinished:
    """A turn ended (the Supervisor tells the Notifier; it decides whether it ran long enough)."""

    session_id: str
    seconds: float
    outcome: str
    prompt: str = ""
    answer: str = ""


@message
class SessionTitled:
    session_id: str
    title: str


@message
class SessionOpened:
    """A session came to memory in a folder: a notice names it by the folder and its id, never by
    a title made from the prompt (unless text is opted in)."""

    session_id: str
    cwd: str


@message
class DialogWaiting:
    """A permission, question or plan dialog went to the clients and waits for an answer."""

    session_id: str
    kind: str
    what: str = ""  # the question (or the card's title): sent only when prompt text is opted in


@message
class BackendFailed:
    reason: str


@message
class HubPageKnown:
    """The bridge registered with the hub under this instance id: notifications can link to the page."""

    instance_id: str


@message
class WebhookDone:
    """The Notifier's sender finished one post: delivered, or failed after its retries."""

    ok: bool
    error: str = ""
