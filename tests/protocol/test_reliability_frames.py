"""Issue 9's protocol half (items 5, 13, 14): pure checks on inbound client frames."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcode_acp.protocol import framing, jsonrpc
from zcode_acp.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RpcError


@pytest.mark.parametrize("line", [b"{}", b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":null}',
                                  b'{"jsonrpc":"2.0","id":"\\ud800"}'])
def test_an_object_with_no_method_and_no_usable_id_is_an_invalid_request(line):
    with pytest.raises(framing.FrameError) as err:
        framing.decode_object(line)
    assert err.value.code == INVALID_REQUEST


@pytest.mark.parametrize("line", [b'{"result":1}', b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}'])
def test_a_response_without_a_usable_id_is_passed_on_to_be_dropped_not_refused(line):
    # A response is never answered (issue 21): the connection drops it, so decoding must not refuse it.
    assert jsonrpc.is_response(framing.decode_object(line))


def test_a_float_id_is_a_valid_id_echoed_as_sent():
    frame = framing.decode_object(b'{"jsonrpc":"2.0","id":7.0,"method":"initialize"}')
    assert jsonrpc.classify_acp(frame) is jsonrpc.Kind.REQUEST
    assert framing.encode(jsonrpc.acp_result(frame["id"], {})).startswith(b'{"jsonrpc":"2.0","id":7.0,')


def test_cancel_request_with_an_id_is_an_invalid_request():
    with pytest.raises(RpcError) as err:
        jsonrpc.classify_acp({"jsonrpc": "2.0", "id": 1, "method": "$/cancel_request", "params": {"requestId": 2}})
    assert err.value.code == INVALID_REQUEST and "notification" in err.value.message


@pytest.mark.parametrize("params,target", [({"requestId": 3}, 3), ({"requestId": "a"}, "a"), ({"requestId": {}}, None),
                                           ({"requestId": [1]}, None), ({"requestId": "\ud800"}, None),
                                           ({"requestId": True}, None), ([], None), (None, None)])
def test_cancel_target_is_a_valid_id_or_none(params, target):
    assert jsonrpc.cancel_target(params) == target


def test_depth_is_invalid_params_naming_the_field_without_recursion():
    deep: dict = {}
    for _ in range(5000):  # far past Python's recursion limit
        deep = {"a": deep}
    with pytest.raises(RpcError) as err:
        jsonrpc.classify_acp({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"clientCapabilities": deep}})
    assert err.value.code == INVALID_PARAMS
    assert err.value.message.startswith("Invalid params: clientCapabilities.a.a.a.a.a… is nested more than")


def test_a_frame_at_the_depth_limit_is_fine():
    value: dict = {}
    for _ in range(jsonrpc.MAX_DEPTH - 3):  # the frame and params are two levels, capabilities one more
        value = {"a": value}
    frame = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientCapabilities": value}}
    assert jsonrpc.classify_acp(frame) is jsonrpc.Kind.REQUEST


@pytest.mark.parametrize("frame,code,field", [
    ({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp/\ud800"}}, INVALID_PARAMS, "cwd"),
    ({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
      "params": {"prompt": [{"type": "text", "text": "a\udc00"}]}}, INVALID_PARAMS, "prompt[0].text"),
    ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"\ud800": 1}}, INVALID_PARAMS, "params has a key"),
    ({"jsonrpc": "2.0", "id": 1, "method": "x\ud800"}, INVALID_REQUEST, "method"),
    ({"jsonrpc": "2.0", "id": 1, "method": "n", "params": ["\udfff"]}, INVALID_PARAMS, "[0]"),
])
def test_a_lone_surrogate_is_refused_naming_where_it_is(frame, code, field):
    with pytest.raises(RpcError) as err:
        jsonrpc.classify_acp(frame)
    assert err.value.code == code and field in err.value.message
    framing.encode(jsonrpc.acp_error(jsonrpc.request_id_or_none(frame), err.value))  # the answer can be written


def test_numbers_beyond_double_range_are_parse_errors_and_big_integers_stay_exact():
    with pytest.raises(framing.FrameError) as err:
        framing.decode(b'{"n": ' + b"9" * 400 + b'.5}')
    assert err.value.code == PARSE_ERROR
    assert framing.decode(b'{"n": ' + b"9" * 400 + b"}") == {"n": int("9" * 400)}
    assert framing.decode(b'{"n": ' + b"9" * 400 + b".5}", strict=False)["n"] == float("inf")  # backend side: unchecked


def test_a_frame_with_too_many_values_is_refused_before_parsing():
    line = b"[" + b"{}," * framing.MAX_FRAME_VALUES + b"{}]"
    with pytest.raises(framing.FrameError) as err:
        framing.decode(line)
    assert err.value.code == INVALID_REQUEST and "too many" in err.value.message


def test_a_big_string_is_one_value_whatever_its_size():
    image = b"A" * (30 * 1024 * 1024)
    frame = framing.decode_object(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"data":"' + image + b'"}}')
    assert jsonrpc.classify_acp(frame) is jsonrpc.Kind.REQUEST


json_leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
               | st.text() | st.sampled_from(["\ud800", "a\udfffb", "$/cancel_request", "2.0"]))
json_values = st.recursive(json_leaves, lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=8) | st.sampled_from(
                               ["jsonrpc", "id", "method", "params", "result", "error", "requestId"]),
                               children, max_size=5), max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(json_values)
def test_classification_raises_nothing_but_rpc_errors_and_names_only_usable_ids(value):
    frame = value if isinstance(value, dict) else {"jsonrpc": "2.0", "id": value, "method": "m", "params": value}
    frame.setdefault("jsonrpc", "2.0")
    request_id = jsonrpc.request_id_or_none(frame)
    hash(request_id)  # usable as a table key
    try:
        jsonrpc.classify_acp(frame)
    except RpcError as exc:
        framing.encode(jsonrpc.acp_error(request_id, exc))  # every refusal can be written back
    target = jsonrpc.cancel_target(frame.get("params"))
    hash(target)


def test_a_notification_is_never_refused_for_its_values():
    # Never answered, so a bad value in it must not become an error frame.
    frame = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "\ud800"}}
    assert jsonrpc.classify_acp(frame) is jsonrpc.Kind.NOTIFICATION
    assert jsonrpc.cancel_target(frame["params"]) is None
