import pytest

from zcode_acp.protocol import jsonrpc
from zcode_acp.protocol.errors import RpcError


def test_backend_frames_are_classified_by_keys():
    never = lambda _id: False  # noqa: E731
    assert jsonrpc.classify_backend({"id": 1, "result": {}}, never) is jsonrpc.Kind.RESPONSE
    assert jsonrpc.classify_backend({"id": 1, "method": "x"}, never) is jsonrpc.Kind.REQUEST
    assert jsonrpc.classify_backend({"method": "x"}, never) is jsonrpc.Kind.NOTIFICATION
    assert jsonrpc.classify_backend({"foo": 1}, never) is None


def test_an_id_and_method_frame_answering_our_pending_id_is_a_response():
    pending = {7}
    frame = {"id": 7, "method": "session/send", "result": {"accepted": True}}
    assert jsonrpc.classify_backend(frame, pending.__contains__) is jsonrpc.Kind.RESPONSE
    assert jsonrpc.classify_backend({"id": 8, "method": "x"}, pending.__contains__) is jsonrpc.Kind.REQUEST


@pytest.mark.parametrize("frame,kind", [
    ({"jsonrpc": "2.0", "id": 1, "method": "m"}, jsonrpc.Kind.REQUEST),
    ({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {}}, jsonrpc.Kind.REQUEST),
    ({"jsonrpc": "2.0", "method": "m"}, jsonrpc.Kind.NOTIFICATION),
    ({"jsonrpc": "2.0", "id": 1, "result": None}, jsonrpc.Kind.RESPONSE),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}, jsonrpc.Kind.RESPONSE),
])
def test_acp_frames(frame, kind):
    assert jsonrpc.classify_acp(frame) is kind


@pytest.mark.parametrize("frame", [
    {"id": 1, "method": "m"},  # no jsonrpc
    {"jsonrpc": "1.0", "id": 1, "method": "m"},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": True, "method": "m"},
    {"jsonrpc": "2.0", "id": [1], "method": "m"},
    {"jsonrpc": "2.0", "id": 1, "method": "m", "params": 3},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}},
])
def test_invalid_acp_frames(frame):
    with pytest.raises(RpcError) as err:
        jsonrpc.classify_acp(frame)
    assert err.value.code == -32600


def test_dialects_differ_only_by_the_jsonrpc_field():
    assert jsonrpc.acp_request(1, "m", {}) == {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}}
    assert jsonrpc.backend_request(1, "m", {}) == {"id": 1, "method": "m", "params": {}}
    assert "jsonrpc" not in jsonrpc.backend_result(1, {})
    assert jsonrpc.acp_error(None, RpcError(-32700, "bad"))["error"] == {"code": -32700, "message": "bad"}


def test_a_response_is_recognised_whatever_is_wrong_with_it():
    from zcode_acp.protocol.framing import decode_object
    from zcode_acp.protocol.jsonrpc import is_response

    toad = '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}'
    assert is_response(decode_object(toad))  # no longer refused as "not a frame"
    for frame in ({"id": 1, "result": None}, {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}, {"error": {}}):
        assert is_response(frame)
    for frame in ({"jsonrpc": "2.0", "id": 1, "method": "x", "result": 1}, {"jsonrpc": "2.0", "id": 1}, {}):
        assert not is_response(frame)
