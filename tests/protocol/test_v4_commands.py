"""protocol/v4/commands.py and attachments.py: the captured envelopes and acks, the retry policy, upload planning."""

import base64
import hashlib

import pytest

from tests.protocol.v4_captures import capture
from zcode_acp.protocol.v4 import attachments as at
from zcode_acp.protocol.v4 import commands as c

NAMES = ["s03a-official", "transport-v4-official", "history-management-official", "queue-guide-goal-official-config"]


def records(method, kind):
    return [(name, r) for name in NAMES for r in capture(name) if r.get("method") == method and r["kind"] == kind]


def rebuild(params):
    """The command our builders make for a captured request, or None where we build none."""
    p, session = params["payload"], params["sessionId"]
    target = c.RowTarget(p["target"]["rowId"], p["target"]["entityId"]) if "target" in p else None
    match params["type"]:
        case "createSession":
            return c.create_session(p["workspaceId"])
        case "renameSession":
            return c.rename_session(session, p["title"])
        case "setFollowupMode":
            return c.set_followup_mode(session, p["mode"])
        case "switchCollaborationMode":
            return c.switch_collaboration_mode(session, p["mode"])
        case "switchModelConfig":
            return c.switch_model_config(session, p["provider"], p["model"], p["thought"])
        case "deleteSession":
            return c.delete_session(session)
        case "compact":
            return c.compact(session)
        case "forkAssistant":
            return c.fork_assistant(session, target)
        case "applyFileRewind":
            return c.apply_file_rewind(session, target)
        case "retryTurn":
            return c.retry_turn(session, target)
        case "editUserQuery":
            return c.edit_user_query(session, target, p["newText"], workspace_mode=p["workspaceMode"])
    return None


COMPLETE_REQUESTS = [
    (name, r["params"])
    for name, r in records("v4/command", "request")
    if "_fixtureNote" not in r["params"] and rebuild(r["params"]) is not None
]


@pytest.mark.parametrize(("name", "params"), COMPLETE_REQUESTS, ids=lambda v: v if isinstance(v, str) else v["type"])
def test_our_envelope_is_the_captured_one_byte_for_byte(name, params):
    base = None
    if "baseRevision" in params:
        base = c.Base(params["baseRevision"], params.get("baseLogEpoch"))
    built = c.envelope(
        rebuild(params), command_id=params["commandId"], client_id=params["clientId"], issued_at=params["issuedAt"], base=base
    )
    assert built == params


def test_the_captures_cover_the_commands_we_claim():
    assert {p["type"] for _, p in COMPLETE_REQUESTS} >= {
        "createSession", "renameSession", "setFollowupMode", "deleteSession", "compact",
        "forkAssistant", "applyFileRewind", "retryTurn", "editUserQuery",
    }


def _request_id(v):
    return v if isinstance(v, str) else v["params"]["type"]


def _response_id(v):
    return v if isinstance(v, str) else v["result"]["status"]


@pytest.mark.parametrize(("name", "record"), records("v4/command", "request"), ids=_request_id)
def test_captured_producer_records_carry_the_payloads_our_builders_make(name, record):
    params = record["params"]
    command = rebuild(params)
    if command is not None:
        assert (command.type, command.session_id, command.payload) == (params["type"], params["sessionId"], params["payload"])


def test_a_compare_and_set_command_without_a_base_is_a_programming_error():
    with pytest.raises(ValueError, match="base"):
        c.envelope(c.set_followup_mode("s", "queue"), command_id="1", client_id="c", issued_at=0)
    with pytest.raises(ValueError, match="log epoch"):
        c.envelope(c.retry_turn("s", c.RowTarget(1, "e")), command_id="1", client_id="c", issued_at=0, base=c.Base(3))


def test_a_command_outside_compare_and_set_leaves_the_base_out():
    built = c.envelope(c.compact("s"), command_id="1", client_id="c", issued_at=0, base=c.Base(3, "epoch"))
    assert "baseRevision" not in built and "baseLogEpoch" not in built


ATTACHMENT = {"ref": "r", "fileName": "a.png", "mime": "image/png", "bytes": 3}


def test_the_other_builders_make_the_payloads_the_schema_names():
    t = c.RowTarget(4, "ent")
    made = [
        c.send_text("s", "hi", attachments=[ATTACHMENT], requested_delivery="queue"),
        c.stop("s"),
        c.stop("s", expected_foreground_execution_id="exec-1"),
        c.resolve_interaction("s", "i1", option_id="allow"),
        c.cancel_background_work("s", "w1"),
        c.send_queued_now("s", "q1"),
        c.edit_queue_item("s", "q1", "new"),
        c.reorder_queue_item("s", "q1", None),
        c.delete_queue_item("s", "q1"),
        c.set_auto_drain("s", False),
        c.create_session("/w", first_text="go"),
        c.send_text("s", "now", held_queue="keepQueueAndSend", held_queue_item_ids=["q1"]),
        c.edit_user_query("s", t, "again"),
    ]
    assert [(m.type, m.payload) for m in made] == [
        ("sendText", {"text": "hi", "attachments": [ATTACHMENT], "requestedDelivery": "queue"}),
        ("stop", {}),
        ("stop", {"expectedForegroundExecutionId": "exec-1"}),
        ("resolveInteraction", {"interactionId": "i1", "answer": {"optionId": "allow"}}),
        ("cancelBackgroundWork", {"workId": "w1"}),
        ("sendQueuedNow", {"queueItemId": "q1"}),
        ("editQueueItem", {"queueItemId": "q1", "newText": "new"}),
        ("reorderQueueItem", {"queueItemId": "q1", "beforeQueueItemId": None}),
        ("deleteQueueItem", {"queueItemId": "q1"}),
        ("setAutoDrain", {"autoDrain": False}),
        ("createSession", {"workspaceId": "/w", "firstInput": {"text": "go"}}),
        ("sendText", {"text": "now", "heldQueueDisposition": "keepQueueAndSend", "expectedHeldQueueItemIds": ["q1"]}),
        ("editUserQuery", {"target": {"rowId": 4, "entityId": "ent"}, "newText": "again"}),
    ]
    with pytest.raises(ValueError):
        c.switch_collaboration_mode("s", "auto")


# -- acks -----------------------------------------------------------------------------------

EXPECTED_VERDICT = {
    "accepted": c.Verdict.SUCCEEDED,
    "duplicate": c.Verdict.SUCCEEDED,
    "noop": c.Verdict.NO_EFFECT,
    "stale": c.Verdict.RETRY_AFTER_REFRESH,
    "rejected": c.Verdict.REFUSED,
    "failed": c.Verdict.REFUSED,
}


@pytest.mark.parametrize(("name", "record"), records("v4/command", "response"), ids=_response_id)
def test_every_captured_ack_parses_and_is_judged_by_its_status(name, record):
    ack = c.parse_ack(record["result"])
    assert isinstance(ack, c.CommandAck)
    assert ack.command_id == record["result"]["commandId"] and ack.status == record["result"]["status"]
    assert c.judge(ack) is EXPECTED_VERDICT[ack.status]


def test_the_captures_hold_every_status_but_duplicate():
    statuses = {r["result"]["status"] for _, r in records("v4/command", "response")}
    assert statuses == {"accepted", "rejected", "stale", "noop", "failed"}


def test_the_captured_acks_keep_their_reason_and_result():
    by_reason = {r["result"].get("reasonCode"): c.parse_ack(r["result"]) for _, r in records("v4/command", "response")}
    assert by_reason["proto.staleRevision"].status == "stale"
    assert by_reason["config.unchanged"].status == "noop"
    assert "Session not found" in by_reason["fault.command.executionFailed"].message
    created = [c.parse_ack(r["result"]) for _, r in records("v4/command", "response") if "result" in r["result"]]
    assert {a.result["sessionId"] for a in created} >= {"fixture-session"}


def test_stale_is_retried_once_then_refused_and_duplicate_is_success():
    stale = c.CommandAck("1", "stale", "proto.staleRevision", None, 0, None)
    assert c.judge(stale) is c.Verdict.RETRY_AFTER_REFRESH
    assert c.judge(stale, retried=True) is c.Verdict.REFUSED
    duplicate = c.CommandAck("1", "duplicate", None, None, 3, {"type": "createSession", "sessionId": "s"})
    assert c.judge(duplicate) is c.Verdict.SUCCEEDED


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {"status": "accepted", "revisionAtDecision": 0},
        {"commandId": "1", "status": "maybe", "revisionAtDecision": 0},
        {"commandId": "1", "status": "accepted"},
        {"commandId": "1", "status": "rejected", "revisionAtDecision": 0},
        {"commandId": "1", "status": "accepted", "revisionAtDecision": True},
    ],
)
def test_an_ack_the_engine_could_not_have_sent_is_invalid(bad):
    assert isinstance(c.parse_ack(bad), c.AckInvalid)


def test_the_captured_command_queries_round_trip():
    pairs = zip(records("v4/commands/query", "request"), records("v4/commands/query", "response"), strict=True)
    for (_, request), (_, response) in pairs:
        keys = [(k["sessionId"], k["commandId"]) for k in request["params"]["commands"]]
        assert c.query_params(keys) == request["params"]
        items = c.parse_query_result(response["result"])
        assert [(i.session_id, i.command_id) for i in items] == keys
    unknown = c.parse_query_result(records("v4/commands/query", "response")[0][1]["result"])
    assert unknown == [c.QueryItem(None, "s03a-unknown", None)]


def test_a_query_names_one_to_sixty_four_commands():
    with pytest.raises(ValueError):
        c.query_params([])
    with pytest.raises(ValueError):
        c.query_params([(None, str(n)) for n in range(65)])


# -- attachments ----------------------------------------------------------------------------


def plan(data, **kw):
    args = {"connection_id": "conn", "upload_id": "up-1", "session_id": "s", "file_name": "shot.png", "mime": "image/png"}
    return at.upload_plan(data, **{**args, **kw})


def test_an_upload_is_cut_into_chunks_that_add_up_with_the_sha256():
    data = bytes(range(256)) * 5000  # 1.28 MB: three chunks of at most 512 KiB
    p = plan(data)
    assert isinstance(p, at.UploadPlan)
    assert p.begin == {
        "connectionId": "conn", "uploadId": "up-1", "sessionId": "s", "fileName": "shot.png", "mime": "image/png",
        "totalBytes": len(data), "totalChunks": 3, "checksum": "sha256:" + hashlib.sha256(data).hexdigest(),
    }
    decoded = [base64.b64decode(chunk["dataBase64"]) for chunk in p.chunks]
    assert [chunk["chunkIndex"] for chunk in p.chunks] == [0, 1, 2]
    assert all(len(d) <= 512 * 1024 for d in decoded) and b"".join(decoded) == data
    assert p.commit == {"connectionId": "conn", "uploadId": "up-1", "sessionId": "s"}
    assert p.chunks_from(2) == p.chunks[2:]
    assert p.attachment_ref("att-9") == {"ref": "att-9", "fileName": "shot.png", "mime": "image/png", "bytes": len(data)}


def test_a_zero_byte_upload_declares_zero_chunks():
    p = plan(b"")
    assert p.begin["totalChunks"] == 0 and p.chunks == ()


def test_exactly_twenty_mebibytes_is_allowed_one_more_byte_is_refused():
    assert isinstance(plan(b"\0" * (20 * 1024 * 1024)), at.UploadPlan)
    assert isinstance(plan(b"\0" * (20 * 1024 * 1024 + 1)), at.UploadRefused)


@pytest.mark.parametrize(
    "change",
    [{"upload_id": "-starts-with-dash"}, {"upload_id": "x" * 129}, {"file_name": "a\nb"}, {"file_name": ""}, {"mime": "png"}],
)
def test_names_the_engine_would_refuse_are_refused_here(change):
    assert isinstance(plan(b"x", **change), at.UploadRefused)


def test_too_many_chunks_is_refused():
    assert isinstance(plan(b"x" * 65, chunk_bytes=1), at.UploadRefused)


def test_a_begin_answer_says_whether_to_resume_or_that_it_is_done():
    assert at.parse_begin_result({"uploadId": "up-1", "state": "staging", "nextChunkIndex": 2}) == at.Staging(2)
    assert at.parse_begin_result({"uploadId": "up-1", "state": "committed", "nextChunkIndex": 3, "ref": "r"}) == at.Committed("r")
    assert isinstance(at.parse_begin_result({"state": "staging"}), at.UploadRefused)


def test_the_modes_offered_on_v4_are_the_ones_its_mode_command_names():
    from zcode_acp.protocol.session_config import MODE_IDS, V4_SETTABLE_MODES
    assert set(V4_SETTABLE_MODES) == set(MODE_IDS) & c.COLLABORATION_MODES
