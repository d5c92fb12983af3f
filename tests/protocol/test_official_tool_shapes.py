"""The translator reads tool results and errors in the shapes the 0.16 engine sends them (issue 19):
a result object with its text in ``content`` (the executor's serialization), an error detail
``{type, message}``. Each event is first checked against the official schema, so the test
feeds what the engine can send."""

from __future__ import annotations

from zcode_acp.protocol.translator import TurnTranslator
from tests.engine_schema import schema_set
from tests.schema import assert_valid_update

ENVELOPE = {"eventId": "e", "sessionId": "s", "seq": 1, "timestamp": 1, "type": "tool.updated"}


def official(payload: dict) -> dict:
    event = {**ENVELOPE, "payload": payload}
    schemas = schema_set("cli016")
    assert [e.message for e in schemas.errors(schemas.uri("events/tool.updated.json"), event)] == []
    return event


def feed(translator: TurnTranslator, payload: dict) -> list[dict]:
    updates = translator.feed(official(payload))
    for update in updates:
        assert_valid_update(update)
    return updates


def scheduled(tool_call_id: str, name: str, tool_input: dict) -> dict:
    return {"kind": "scheduled", "toolCallId": tool_call_id, "toolName": name, "input": tool_input}


def test_a_result_objects_content_is_the_cards_text_and_the_object_its_raw_output() -> None:
    translator = TurnTranslator(message_id="m")
    feed(translator, scheduled("t1", "Read", {"file_path": "/w/README.md"}))
    feed(translator, {"kind": "started", "toolCallId": "t1", "startedAt": 5})
    result = {"success": True, "content": "# Example\n", "truncated": False, "originalBytes": 10,
              "returnedBytes": 10, "budgetStrategy": "truncate"}
    [update] = feed(translator, {"kind": "result", "toolCallId": "t1", "result": result, "duration": 3})
    assert update["status"] == "completed"
    assert update["content"] == [{"type": "content", "content": {"type": "text", "text": "# Example\n"}}]
    assert update["rawOutput"] == result


def test_an_error_detail_fails_the_card_with_its_message() -> None:
    translator = TurnTranslator(message_id="m")
    feed(translator, scheduled("t2", "Write", {"file_path": "/w/a", "content": "x"}))
    error = {"type": "permission_denied", "message": "Permission denied: cancelled by user"}
    [update] = feed(translator, {"kind": "error", "toolCallId": "t2", "error": error})
    assert update["status"] == "failed"
    assert update["content"][0]["content"]["text"] == "Permission denied: cancelled by user"
    assert update["rawOutput"] == {"error": "Permission denied: cancelled by user"}


def test_a_terminal_bash_result_streams_the_content_and_exits_zero() -> None:
    translator = TurnTranslator(message_id="m", terminal_output=True)
    feed(translator, scheduled("t3", "Bash", {"command": "ls"}))
    result = {"success": True, "content": "a\nb\n", "display": {"kind": "bash_output", "output": "a\nb\n"}}
    updates = feed(translator, {"kind": "result", "toolCallId": "t3", "result": result, "duration": 1})
    texts = [u["_meta"]["terminal_output"]["data"] for u in updates if "terminal_output" in u.get("_meta", {})]
    exits = [u["_meta"]["terminal_exit"] for u in updates if "terminal_exit" in u.get("_meta", {})]
    assert texts == ["a\nb\n"] and exits and exits[0]["exit_code"] == 0
