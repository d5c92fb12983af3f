"""English messages (the bridge's original words). Keys: see ``__init__.py``."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # -- modes and config options (protocol/session_config.py) --
    "mode.plan.name": "Plan",
    "mode.plan.description": "Read-only: explore and propose a plan before changing anything",
    "mode.build.name": "Build",
    "mode.build.description": "Implement with confirmation for risky actions",
    "mode.edit.name": "Edit",
    "mode.edit.description": "Edit files without asking; ask before running commands",
    "mode.yolo.name": "YOLO",
    "mode.yolo.description": "Run everything without asking",
    "mode.auto.name": "Auto",
    "mode.auto.description": "Let ZCode decide when to ask",
    "config.mode.name": "Mode",
    "config.model.name": "Model",
    "config.thought.name": "Thought level",
    "config.plan_first.name": "Plan before editing",
    "config.plan_first.description": "Explore read-only and propose a plan first (the Plan mode); off returns to "
                                     "the previous mode",
    "model.default": "Default model",
    "model.context_k": "{size}K context",
    "model.context_tokens": "{tokens} tokens of context",
    "model.reasoning": "reasoning: {levels}",
    "thought.low": "Low",
    "thought.high": "High",
    "thought.max": "Max",
    # -- slash commands (protocol/commands.py) --
    "command.compact": "Compact the conversation history to free context",
    "command.goal": "Show the goal, or set it: /goal <objective> (also: clear, pause, resume)",
    "command.fork": "Fork this conversation into a new session",
    "command.mode": "Switch mode: /mode <{modes}>",
    "command.model": "Switch model: /model <id>",
    "command.thought": "Set the thought level: /thought <low|high|max>",
    "command.hint.objective": "objective",
    "command.hint.mode": "mode",
    "command.hint.model": "model id",
    "command.hint.level": "level",
    "command.goal_is": "Goal: {objective}",
    "command.goal_is_with_status": "Goal: {objective} ({status})",
    "command.no_goal": "No goal is set.",
    "command.done": "Done.",
    "command.forked": "Forked this conversation into a new session: {session_id}",
    "command.failed": "/{command} failed: {message}",
    # -- dialogs the bridge makes (protocol/interactions.py) --
    "permission.allow": "Allow",
    "permission.deny": "Deny",
    "permission.option.allow_once": "Allow once",
    "permission.option.allow_always": "Always allow",
    "permission.option.allow_project": "Always allow in this project",
    "permission.option.reject_once": "Deny",
    "permission.option.reject_always": "Always deny",
    "permission.reason_and_risk": "{reason} (risk: {risk})",
    "permission.risk": "Risk: {risk}",
    "plan.form_hint": "Leave the box empty and submit to approve; type feedback to reject and redirect.",
    "plan.feedback.title": "Feedback",
    "plan.feedback.description": "Empty = approve the plan. Anything typed = reject and use this text as the "
                                 "redirection.",
    "plan.approve": "Approve plan",
    "plan.keep_planning": "Keep planning",
    "question.skip_this": "Skip this question",
    "question.other": "↳ or type a custom value (overrides the selection)",
    "question.one": "ZCode has a question for you.",
    "question.many": "ZCode has some questions for you.",
    "question.multi_first": "{question} (pick one now, more after)",
    "question.multi_next": "{question} (chosen so far: {chosen}; pick another or Done)",
    "question.done": "Done ({chosen})",
    "question.skip": "Skip",
    # -- notices written into a session --
    "notice.busy": "ZCode is busy with another turn in this session (a background task's report, a compaction, "
                   "or a turn started elsewhere); your prompt starts as soon as it is free.",
    "notice.merged": "Your message was merged into the turn that was still running.",
    "notice.stopping": "The previous turn has not stopped yet. ZCode was asked to stop it; if it still runs a few "
                       "seconds after the stop, the bridge closes and resumes this session to end it. Your prompt "
                       "starts right after.",
    "notice.stuck": "The previous turn is still running in ZCode: it ignored the stop, and this ZCode cannot close "
                    "the session to end it. Your prompt waits until that turn ends by itself; cancel the prompt to "
                    "give up, or restart the agent to end the turn now (the conversation is kept).",
    "notice.freed": "The turn that ignored the stop has ended; this session takes prompts again.",
    "notice.compact_waiting": "Waiting for the conversation's compaction to finish; your prompt starts right "
                              "after it.",
    "notice.compacted": "Conversation compacted.",
    "notice.compact_cancelled": "Compaction cancelled: the conversation was left as it was.",
    "notice.max_turns": "ZCode stopped: the turn reached its limit of model turns.",
    "notice.max_tool_calls": "ZCode stopped: the turn reached its limit of tool calls.",
    "notice.max_budget": "ZCode stopped: the turn used up its token budget.",
    # -- cards the bridge titles (protocol/recovery.py, protocol/background.py) --
    "recovery.retrying": "Retrying the model request",
    "recovery.count": "{title} ({attempt}/{total})",
    "recovery.attempt": "{title} (attempt {attempt})",
    "recovery.delay": "{title} in {seconds}s",
    "recovery.recovering": "Recovering the interrupted model stream",
    "recovery.discarded": "The text after the last safe point is discarded and will be written again.",
    "recovery.blocked": "Model stream recovery blocked: {message}",
    "background.timed_out": "The background task timed out.",
    "background.spawn_error": "The background task could not be started.",
    "background.lost": "The background task was lost (its process is gone).",
    # -- errors the bridge writes (the engine's own words are passed through as {message}) --
    "error.busy_too_long": "ZCode stayed busy for {seconds}s: another turn holds this session (a background task's "
                           "report, a compaction, or a turn started elsewhere). Send the prompt again once it is "
                           "over.",
    "error.backend_silent": "ZCode backend stopped answering (no answer to session/read within {seconds}s)",
    "error.compact_failed": "ZCode reports that the compaction failed (session_compact_failed); the conversation "
                            "was left as it was",
    "error.nothing_to_steer": "No turn is running in this session: there is nothing to steer (send the text as a "
                              "prompt instead)",
    "error.removed_in_0_16": "{method} was removed in ZCode CLI 0.16: the installed engine does not have it",
    "error.turn_execution": "ZCode turn ended with an error during execution: {message}",
    "error.no_details": "no details given",
    "error.turn_failed": "ZCode turn failed: {message}",
    "error.cli_too_old": "The installed ZCode CLI is too old for zcode-acp: it has no session/subscribe, so it "
                         "cannot stream a turn. Install ZCode CLI {floor} or newer (the extension methods — fork, "
                         "goal, compact, steer, mode, model, thought level — need {extensions_floor} or newer).",
    "error.unsupported_method": "The installed ZCode CLI does not support {method} (extension methods need ZCode "
                                "CLI >= 0.15.0; some were removed in 0.16)",
    "error.backend_error": "ZCode backend error on {method}: {message}",
    "error.backend_error_code": "ZCode backend error on {method}: {message} (code {code})",
    # -- handshake (protocol/handshake.py) --
    "auth.name": "ZCode CLI credentials",
    "auth.description": "The ZCode CLI reads its own credentials; the editor needs no key.",
}
