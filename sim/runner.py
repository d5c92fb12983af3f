"""Plays one scenario (a list of steps) as the events of one turn."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from typing import Any, Protocol

import gevent
import ujson

from . import faults
from .dialect import Dialect
from .model import SimSession, SimTask, SimTurn
from .wire import Wire


class TurnHost(Protocol):
    """What a turn needs of the server that runs it (``SimServer`` or a dialect's subclass).

    Named here so the runner, a layer below the server (docs/simulator.md, Layers), never imports it.
    """

    wire: Wire
    dialect: Dialect
    frozen: bool

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]: ...

    def account(self, session: SimSession, runner: TurnRunner) -> dict[str, Any]: ...

    def absorb_guides(self, session: SimSession, turn: SimTurn, runner: TurnRunner) -> None: ...

    def agent_changed_mode(self, session: SimSession, reason: str) -> None: ...

    def ask_permission(self, runner: TurnRunner, tool_id: str, name: str, tool_input: Any,
                       step: dict[str, Any]) -> tuple[bool, str] | None: ...

    def ask_plan(self, runner: TurnRunner, tool_id: str, plan: str) -> tuple[bool, str] | None: ...

    def ask_questions(self, runner: TurnRunner, tool_id: str,
                      questions: list[dict[str, Any]]) -> tuple[bool, Any] | None: ...

    def official_mcp_auth(self, runner: TurnRunner, step: dict[str, Any]) -> str: ...

    def run_task(self, session: SimSession, task: SimTask, outputs: list[str], interval: float, status: str,
                 notify: bool) -> None: ...


class TurnRunner:
    """Plays one scenario's steps as events of one turn."""

    def __init__(self, server: TurnHost, session: SimSession, turn: SimTurn, parts: list[dict[str, Any]],
                 prompt: str = "") -> None:
        self.server = server
        self.prompt = prompt
        self.evict = False
        self.session = session
        self.turn = turn
        self.parts = parts
        self.output_tokens = 0
        self.reasoning_tokens = 0
        self.tool_ids = itertools.count(1)
        self.last_event: dict[str, Any] | None = None

    def emit(self, kind: str, payload: dict[str, Any], push: bool = True, flush: bool = True) -> None:
        self.last_event = self.server.emit(self.session, kind, payload, self.turn.turn_id, push=push, flush=flush)

    def run(self, steps: list[dict[str, Any]]) -> str:
        for step in steps:
            if step.get("delay"):
                gevent.sleep(float(step["delay"]))
            if self.turn.stopped:
                return "stopped"
            self.absorb_guides()
            outcome = getattr(self, "step_" + step.get("type", "text"), self.step_unknown)(step)
            if outcome:
                return outcome
            if self.turn.stopped:
                return "stopped"
        return "completed"

    def _text(self, kind: str, text: str, part_type: str) -> None:
        words = text.split(" ")
        for index, word in enumerate(words):
            delta = word + (" " if index < len(words) - 1 else "")
            if delta:
                self.emit("model.streaming", {"kind": kind, "delta": delta})
        if kind == "text_delta":
            self.turn.response += text
        self._append_part(part_type, text)

    def _append_part(self, part_type: str, text: str) -> None:
        if self.parts and self.parts[-1]["type"] == part_type:
            self.parts[-1]["text"] += text
        else:
            self.parts.append({"type": part_type, "text": text})

    def step_text(self, step: dict[str, Any]) -> None:
        self._text("text_delta", step.get("text", ""), "text")
        self.output_tokens += len(step.get("text", "")) // 4 + 1

    def step_reasoning(self, step: dict[str, Any]) -> None:
        self._text("reasoning_delta", step.get("text", ""), "reasoning")
        self.reasoning_tokens += len(step.get("text", "")) // 4 + 1

    def step_stream(self, step: dict[str, Any]) -> str | None:
        text = step.get("text", "x")
        interval = float(step.get("interval", 0))
        wire = self.server.wire
        stamp = bool(step.get("stamp"))
        for index in range(int(step.get("count", 1))):
            if self.turn.stopped:
                wire.flush()
                return "stopped"
            # With "stamp", each delta carries the wall-clock time it was written (latency benchmarks).
            delta = f"{time.time():.6f};" if stamp else text
            self.emit("model.streaming", {"kind": "text_delta", "delta": delta}, flush=interval > 0)
            if interval:
                gevent.sleep(interval)
                self.absorb_guides()
            elif index % 256 == 255:
                wire.flush()
                gevent.sleep(0)  # let requests (a stop) in
        wire.flush()
        self._append_part("text", text * int(step.get("count", 1)))
        if not stamp:
            self.turn.response += text * int(step.get("count", 1))
        self.output_tokens += int(step.get("count", 1))
        return None

    def step_tool(self, step: dict[str, Any]) -> str | None:
        tool_id = step.get("id") or f"call_{self.turn.turn_id[-6:]}_{next(self.tool_ids)}"
        name = step.get("name", "Tool")
        self.turn.tool_calls += 1
        tool_input = step.get("input") or {}
        self.emit("model.streaming", {"kind": "tool_call", "toolCallId": tool_id, "toolName": name,
                                      "input": tool_input})
        self.emit("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name,
                                   "input": tool_input})
        self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id, "inputOmitted": True})
        for tail in step.get("progress") or []:
            gevent.sleep(float(step.get("progressInterval", 0.01)))
            if self.turn.stopped:
                return "stopped"
            self.emit("tool.updated", {"kind": "progress", "toolCallId": tool_id, "stdoutTail": tail})
        if "error" in step:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": step["error"]})
            output = step["error"]
        else:
            result = step.get("result", "")
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": result})
            output = result
        self.parts.append({"type": "tool", "id": tool_id, "tool": name,
                           "state": {"status": "error" if "error" in step else "completed",
                                     "title": step.get("title"), "input": tool_input, "output": output}})
        return None

    def step_todos(self, step: dict[str, Any]) -> None:
        self.session.todos = list(step.get("todos") or [])

    def step_sleep(self, step: dict[str, Any]) -> None:
        gevent.sleep(float(step.get("seconds", 0.1)))

    def step_fail(self, step: dict[str, Any]) -> str | None:
        key = f"{step.get('code')}:{step.get('message')}"
        seen = self.session.failures.get(key, 0)
        if seen >= int(step.get("times", 1_000_000)):
            return None
        self.session.failures[key] = seen + 1
        return f"failed:{step.get('code', 'internal_error')}:{step.get('message', 'failed')}"

    def step_end(self, step: dict[str, Any]) -> str:
        """End the turn with ``turn.completed`` of the given ``resultType`` (an error ending, say)."""
        usage = self.server.account(self.session, self)
        self.emit("turn.completed", {"resultType": step.get("result", "success"), "usage": usage,
                                     "response": self.turn.response})
        return "ended"

    def step_retry(self, step: dict[str, Any]) -> None:
        """The engine retries a failed model request itself, then recovers the interrupted stream.

        As the 0.16 engine reports it: an API retry rides on ``session.updated`` as
        ``_meta.zcode.apiRetry`` (cleared with ``null`` once a request succeeds), and
        stream recovery is a run of ``streamRecovery.updated`` events (started, tail
        discarded, retry started) that ends when the model makes progress again.
        The user's message is stored once: nothing here asks the host to send it again.
        """
        attempts = int(step.get("attempts", 2))
        wait = float(step.get("wait", 0.05))
        error = step.get("error", "429 Too Many Requests")
        for attempt in range(1, attempts + 1):
            retry = {"kind": "api_retry", "attempt": attempt, "maxRetries": int(step.get("max", 10)),
                     "retryDelayMs": int(wait * 1000), "errorStatus": int(step.get("status", 429)), "error": error}
            self.emit("session.updated", {"_meta": {"zcode": {"apiRetry": retry}}})
            gevent.sleep(wait)
        self.emit("session.updated", {"_meta": {"zcode": {"apiRetry": None}}})
        if not step.get("stream", True) or not self.server.dialect.today:
            return  # the seed's engine never recovered a stream: streamRecovery.updated is today's alone
        attempt_id, anchor_id = f"recovery_{uuid.uuid4().hex[:8]}", f"anchor_{uuid.uuid4().hex[:8]}"
        retry_meta = {"kind": "api_retry", "attempt": 1, "maxRetries": 3, "retryDelayMs": 0, "errorStatus": None,
                      "error": "The model stream was interrupted"}
        self.emit("streamRecovery.updated", {"attemptId": attempt_id, "failureKind": "stream_interrupted",
                                             "message": "The model stream was interrupted", "retryNumber": 1,
                                             "maxRetries": 3, "_meta": {"zcode": {"apiRetry": retry_meta}}})
        self.emit("streamRecovery.updated", {"attemptId": attempt_id, "anchorId": anchor_id,
                                             "reason": "latest_committed_message", "committedToolCallIds": []})
        self.emit("streamRecovery.updated", {"attemptId": attempt_id, "anchorId": anchor_id,
                                             "discardedTextBytes": 0, "discardedReasoningBytes": 0,
                                             "discardedToolCallIds": []})
        gevent.sleep(wait)
        self.emit("streamRecovery.updated", {"attemptId": attempt_id, "anchorId": anchor_id, "retryNumber": 1,
                                             "maxRetries": 3, "streamMode": "sse",
                                             "_meta": {"zcode": {"apiRetry": retry_meta}}})

    def step_system(self, step: dict[str, Any]) -> None:
        """A system message the engine stores (and announces with ``message.upserted``), and a checkpoint."""
        self.emit("message.upserted", {"content": step.get("text", "Context was summarized."), "type": "system"})
        self.emit("checkpoint.created", {"checkpointId": f"ckpt_{uuid.uuid4().hex[:8]}",
                                         "messageId": f"msg_{uuid.uuid4().hex[:10]}"})

    def step_die(self, step: dict[str, Any]) -> None:
        self.server.wire.flush()
        os._exit(int(step.get("code", 1)))

    def step_hang(self, step: dict[str, Any]) -> str:
        while not self.turn.stopped:
            gevent.sleep(0.05)
            self.absorb_guides()
        return "stopped"

    def step_stubborn(self, step: dict[str, Any]) -> str | None:
        """A turn no stop ends (a stuck sub-agent): only session/close (or death) does — or, with
        ``seconds``, its own end that long after it began (it then completes normally)."""
        self.turn.unstoppable = True
        seconds = float(step.get("seconds", 0))
        ends = time.monotonic() + seconds if seconds > 0 else None
        while not self.turn.closed:
            if ends is not None and time.monotonic() >= ends:
                return None
            gevent.sleep(0.05)
            self.absorb_guides()
        return "stopped"

    def step_fk_once(self, step: dict[str, Any]) -> None:
        """The 0.16 engine: the next steer into this session fails once with a foreign-key error."""
        self.session.fk_once = True

    def step_v4fault(self, step: dict[str, Any]) -> None:
        """Arm a v4 data-plane fault (docs/simulator.md); a dialect without the plane has none to arm."""
        plane = getattr(self.server, "plane", None)
        if plane is not None:
            plane.faults.arm_step(step)

    def absorb_guides(self) -> None:
        if self.turn.guides:
            self.server.absorb_guides(self.session, self.turn, self)

    def step_freeze(self, step: dict[str, Any]) -> str:
        self.server.frozen = True  # stop answering anything, like a wedged backend
        while True:
            gevent.sleep(3600)

    def step_gap(self, step: dict[str, Any]) -> None:
        # Logged (subscribe {afterSeq} returns it) but never pushed: a hole in the stream.
        self.emit("model.streaming", {"kind": "text_delta", "delta": step.get("text", "")}, push=False)
        self._append_part("text", step.get("text", ""))

    def step_duplicate(self, step: dict[str, Any]) -> None:
        if self.last_event is not None and self.session.subscribed:
            self.server.wire.send({"method": "session/event", "params": self.last_event})

    def _declare(self, name: str, tool_input: dict[str, Any]) -> str:
        tool_id = f"call_{self.turn.turn_id[-6:]}_{next(self.tool_ids)}"
        self.emit("model.streaming", {"kind": "tool_call", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        return tool_id

    def _record_tool(self, tool_id: str, name: str, tool_input: dict[str, Any], output: Any,
                     error: str | None = None) -> None:
        """The tool's part in the history, as the engine keeps every tool it ran or refused: a
        dialog's tool (a permission's, a question's, a plan's) is a tool like any other, and its
        part is what separates the text before it from the text after it."""
        state: dict[str, Any] = {"status": "error", "input": tool_input, "error": error} if error is not None \
            else {"status": "completed", "input": tool_input, "output": output}
        self.parts.append({"type": "tool", "id": tool_id, "tool": name, "state": state})

    def step_permission(self, step: dict[str, Any]) -> str | None:
        name = step.get("tool", "Bash")
        tool_input = step.get("input") or {"command": "rm -rf build/"}
        tool_id = self._declare(name, tool_input)
        verdict = self.server.ask_permission(self, tool_id, name, tool_input, step)  # the dialect asks its way
        if verdict is None:
            return "stopped"
        allowed, reason = verdict
        if allowed:
            self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id})
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": "done"})
            self._record_tool(tool_id, name, tool_input, "done")
            self.step_text({"text": "Permission granted; done."})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id,
                                       "error": f"Permission denied: {reason}"})
            self._record_tool(tool_id, name, tool_input, None, f"Permission denied: {reason}")
            self.step_text({"text": f"Permission denied ({reason})."})
        return None

    def step_plan(self, step: dict[str, Any]) -> str | None:
        plan = step.get("plan", "1. Write the tests\n2. Make them pass")
        tool_id = self._declare("ExitPlanMode", {"plan": plan})
        verdict = self.server.ask_plan(self, tool_id, plan)
        if verdict is None:
            return "stopped"
        approved, reason = verdict
        if approved:
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": "approved"})
            self._record_tool(tool_id, "ExitPlanMode", {"plan": plan}, "approved")
            self.step_text({"text": "Plan approved; starting."})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": "rejected"})
            self._record_tool(tool_id, "ExitPlanMode", {"plan": plan}, None, "rejected")
            self.step_text({"text": f"Plan rejected: {reason}"})
        return None

    def step_questions(self, step: dict[str, Any]) -> str | None:
        questions = step.get("questions") or [
            {"question": "Which file should I test?", "header": "File",
             "options": [{"label": "auth.test.ts"}, {"label": "user.test.ts"}]}]
        tool_id = self._declare("AskUserQuestion", {"questions": questions})
        verdict = self.server.ask_questions(self, tool_id, questions)
        if verdict is None:
            return "stopped"
        accepted, answers = verdict
        if accepted:
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": ujson.dumps(answers)})
            self._record_tool(tool_id, "AskUserQuestion", {"questions": questions}, ujson.dumps(answers))
            self.step_text({"text": "Answers: " + ujson.dumps(answers, sort_keys=True)})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": "declined"})
            self._record_tool(tool_id, "AskUserQuestion", {"questions": questions}, None, "declined")
            self.step_text({"text": f"Questions declined: {answers}"})
        return None

    def step_official_mcp(self, step: dict[str, Any]) -> None:
        """An official plugin's MCP server connects and asks for the user's identity headers."""
        problem = self.server.official_mcp_auth(self, step)
        self.step_text({"text": f"official MCP unavailable: {problem}" if problem else "official MCP connected"})

    def step_subagent_tools(self, step: dict[str, Any]) -> str | None:
        """A blocking sub-agent whose own tool calls arrive in this stream naming their parent; with
        ``ask``, its first call asks the user's permission first, as any tool call does (the request
        names the sub-agent's call by its ``toolCallId``)."""
        agent_input = {"description": step.get("description", "look around"), "prompt": "Read the project's files."}
        parent = self._declare("Agent", agent_input)
        self.emit("tool.updated", {"kind": "scheduled", "toolCallId": parent, "toolName": "Agent", "input": agent_input})
        self.emit("tool.updated", {"kind": "started", "toolCallId": parent, "startedAt": int(time.time() * 1000)})
        for index, path in enumerate(step.get("reads") or ["README.md"]):
            child = f"{parent}_c{index}"
            child_input = {"file_path": path}
            base = {"toolCallId": child, "parentToolCallId": parent, "source": "subagent"}
            self.emit("tool.updated", {**base, "kind": "scheduled", "toolName": "Read", "input": child_input})
            if step.get("ask") and index == 0:
                verdict = self.server.ask_permission(self, child, "Read", child_input, step)
                if verdict is None:
                    return "stopped"
                if not verdict[0]:
                    self.emit("tool.updated", {**base, "kind": "error", "error": f"Permission denied: {verdict[1]}"})
                    continue
            self.emit("tool.updated", {**base, "kind": "result", "result": {"content": f"contents of {path}"},
                                       "duration": 1})
            self.parts.append({"type": "tool", "id": child, "tool": "Read", "parentToolCallId": parent,
                               "state": {"status": "completed", "input": child_input,
                                         "output": f"contents of {path}"}})
        self.emit("tool.updated", {"kind": "result", "toolCallId": parent, "result": {"content": "done looking"},
                                   "duration": 2})
        self.parts.append({"type": "tool", "id": parent, "tool": "Agent",
                           "state": {"status": "completed", "input": agent_input,
                                     "output": "done looking"}})
        return None

    def step_background(self, step: dict[str, Any]) -> None:
        """Launch a background Bash command or sub-agent; its task outlives this turn."""
        name = step.get("tool", "Bash")
        description = step.get("description", "build the project")
        if name == "Bash":
            tool_input = {"command": step.get("command", "make build"), "run_in_background": True,
                          "description": description}
        else:
            tool_input = {"description": description, "prompt": "do it", "run_in_background": True}
        tool_id = self._declare(name, tool_input)
        self.emit("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id})
        task_id = f"{'exec' if name == 'Bash' else 'agent'}_{uuid.uuid4().hex[:8]}"
        if name == "Bash":
            ack = f"Command running in background with ID: {task_id}"
        else:
            ack = f"agentId: {task_id}\noutput_file: /tmp/{task_id}.txt\nThe agent is working in the background."
        self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": ack})
        task = SimTask(task_id, tool_id, name, description)
        self.session.tasks[task_id] = task
        task.greenlet = gevent.spawn_later(float(step.get("after", 0.05)), self.server.run_task, self.session, task,
                                           list(step.get("output") or ["compiling\n", "linking\n", "done\n"]),
                                           float(step.get("interval", 0.02)), step.get("status", "completed"),
                                           bool(step.get("notify", True)))
        self.parts.append({"type": "tool", "id": tool_id, "tool": name,
                           "state": {"status": "completed", "input": tool_input, "output": ack}})

    def step_history(self, step: dict[str, Any]) -> None:
        """Grow the session's history by ``count`` messages at once (replay benchmarks)."""
        for index in range(int(step.get("count", 1000))):
            role = "user" if index % 2 == 0 else "assistant"
            self.session.messages.append({"info": {"id": f"msg_h{index}_{uuid.uuid4().hex[:6]}", "role": role},
                                          "parts": [{"type": "text", "text": f"{role} message {index}"}]})

    def step_mode(self, step: dict[str, Any]) -> None:
        """The agent switches mode itself (EnterPlanMode / ExitPlanMode)."""
        self.session.mode = step.get("mode", "plan")
        self.server.agent_changed_mode(self.session, step.get("reason", "tool_call"))

    def step_evict(self, step: dict[str, Any]) -> None:
        """After this turn the backend forgets the session until it is resumed."""
        self.evict = True

    def step_unknown(self, step: dict[str, Any]) -> Any:
        fault = faults.STEPS.get(step.get("type", ""))
        if fault is not None:  # the fault steps live in faults.py
            return fault(self, step)
        self.step_text({"text": f"(zcode-sim: unknown step {step.get('type')!r})"})
        return None
