"""Every message the actors exchange.

Plain slotted classes rather than proxies: a ``tell`` of one of these is the
cheapest thing pykka does, and the hot path (a streamed token) is nothing but
tells. Grouped by the actor that receives them.
"""

from __future__ import annotations

from typing import Any


class Message:
    __slots__ = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name, None)!r:.60}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


def _message(name: str, *fields: str, defaults: dict[str, Any] | None = None) -> type:
    """A slotted message class with a positional/keyword constructor."""
    defaults = defaults or {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(fields):
            raise TypeError(f"{name} takes {len(fields)} arguments")
        for field, value in zip(fields, args):
            setattr(self, field, value)
        for field in fields[len(args):]:
            if field in kwargs:
                setattr(self, field, kwargs.pop(field))
            elif field in defaults:
                setattr(self, field, defaults[field])
            else:
                raise TypeError(f"{name} missing {field}")
        if kwargs:
            raise TypeError(f"{name} got unexpected {sorted(kwargs)}")

    return type(name, (Message,), {"__slots__": fields, "__init__": __init__})


# -- any actor ------------------------------------------------------------------
Batch = _message("Batch", "items")  # several messages, handled in order in one hop

# -- ClientConnection -----------------------------------------------------------------
InboundFrames = _message("InboundFrames", "frames")  # reader greenlet → its connection
InboundError = _message("InboundError", "request_id", "error")  # a line that was not a frame
InboundClosed = _message("InboundClosed")  # reader reached EOF
Reply = _message("Reply", "request_id", "result", "error", defaults={"result": None, "error": None})
Deliver = _message("Deliver", "session_id", "payload")  # encoded session/update lines
HoldSession = _message("HoldSession", "session_id")  # a replay for it is coming: hold live updates
ReleaseSession = _message("ReleaseSession", "session_id", "replay")  # write replay, then what was held
SendRequest = _message("SendRequest", "method", "params", "reply_to", "tag")  # bridge → client request
WithdrawRequest = _message("WithdrawRequest", "tag")  # close that dialog: $/cancel_request
CloseConnection = _message("CloseConnection")
Backlog = _message("Backlog", "backlogged")  # the writer: the client reads slower than we write
WriteFailed = _message("WriteFailed")  # the writer: the client is gone

# -- Supervisor -----------------------------------------------------------------------
ClientFrame = _message("ClientFrame", "conn", "frame")  # an ACP request or notification
ClientRequestCancelled = _message("ClientRequestCancelled", "conn", "request_id", "session_id")
ClientClosed = _message("ClientClosed", "conn")
ClientBacklog = _message("ClientBacklog", "conn", "backlogged")
Materialized = _message("Materialized", "session_id", "backend_session_id")
Forget = _message("Forget", "session_id")  # a session that turned out not to exist
Shutdown = _message("Shutdown", "reason")
AttachClient = _message("AttachClient", "transport", "primary")

# -- Backend ------------------------------------------------------------------------
BackendCall = _message(
    "BackendCall", "method", "params", "reply_to", "tag", "timeout",
    defaults={"reply_to": None, "tag": None, "timeout": None},
)
BackendFrames = _message("BackendFrames", "generation", "frames", "token",
                         defaults={"token": None})  # reader greenlet → Backend
BackendExited = _message("BackendExited", "generation", "returncode")
RequestTimedOut = _message("RequestTimedOut", "request_id")
RegisterRoute = _message("RegisterRoute", "backend_session_id", "session")
UnregisterRoute = _message("UnregisterRoute", "backend_session_id", "session")
TerminateBackend = _message("TerminateBackend", "grace")
Throttle = _message("Throttle", "source", "paused")  # stop/resume reading the backend for a slow client
BackendRequest = _message("BackendRequest", "frame")  # an interaction request → router
AnswerBackend = _message("AnswerBackend", "request_ids", "result")  # reply to backend requests

# -- replies from the Backend to whoever asked -------------------------------------------
BackendReply = _message("BackendReply", "tag", "result", "error")

# -- Session ------------------------------------------------------------------------
SessionEvents = _message("SessionEvents", "events", "token",
                         defaults={"token": None})  # session/event params, pipe order
SessionNotice = _message("SessionNotice", "method", "params")  # other session notifications
BackendLost = _message("BackendLost", "reason")
Prompt = _message("Prompt", "conn", "request_id", "prompt")
CancelTurn = _message("CancelTurn", "reason")
CancelPromptRequest = _message("CancelPromptRequest", "conn", "request_id")
Announce = _message("Announce", "conn")  # post-answer updates (available commands)
TurnSettled = _message("TurnSettled", "key", "saw_tools")
TurnDone = _message("TurnDone", "key")
Teardown = _message("Teardown")
Attach = _message("Attach", "conn", "request_id", "cwd", "replay")  # session/load (replay) or session/resume
SetSetting = _message("SetSetting", "conn", "request_id", "config_id", "value", "answer")
Evicted = _message("Evicted", "key")  # the backend said -32004 to a turn's send
HistoryPoll = _message("HistoryPoll")
Extension = _message("Extension", "conn", "request_id", "name", "params")  # session/fork, goal, compact, …
Forked = _message("Forked", "conn", "request_id", "source_session_id", "backend_session_id", "cwd",
                  "mcp_servers", "as_command")
ClientsChanged = _message("ClientsChanged", "clients", "capabilities")
GapTimeout = _message("GapTimeout", "after_seq")

# -- InteractionRouter -----------------------------------------------------------------
InteractionAsked = _message("InteractionAsked", "frame", "session_id", "backend_session_id", "tool_call")
CancelInteractions = _message("CancelInteractions", "session_id", "reason")
ClientAttached = _message("ClientAttached", "session_id", "conn")
DeclineAll = _message("DeclineAll", "reason")
InteractionTimeout = _message("InteractionTimeout", "key")

# -- BackgroundTasks -------------------------------------------------------------------
TaskEvents = _message("TaskEvents", "events", "token",
                      defaults={"token": None})  # [(event, launch_terminal | None)], pipe order
TaskCancelled = _message("TaskCancelled", "task_id")
CloseTasks = _message("CloseTasks")

# -- Turn ---------------------------------------------------------------------------
StartTurn = _message("StartTurn", "backend_session_id")
TurnEvents = _message("TurnEvents", "events", "token", defaults={"token": None})
ShowInteraction = _message("ShowInteraction", "frame")  # show its card, then hand it to the router
RetrySend = _message("RetrySend")
FailTurn = _message("FailTurn", "error")  # the session could not be made live
SilenceCheck = _message("SilenceCheck")
