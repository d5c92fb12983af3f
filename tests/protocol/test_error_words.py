"""The bridge's own error words follow the session's language where the answer is written; the
engine's pass as they are (issue 29, protocol/errors.py)."""

from zcode_acp.protocol import jsonrpc
from zcode_acp.protocol.content import convert_prompt
from zcode_acp.protocol.errors import RpcError, from_backend_error, invalid_params, session_not_found
from zcode_acp.protocol.i18n import EN, ZH_CN


def test_an_error_made_without_a_language_is_written_in_the_connections():
    error = invalid_params("cwd", "invalid.not_a_directory", path="/gone")
    assert error.message == "Invalid params: cwd is not an existing directory: /gone"  # logs, and English clients
    carried = error.to_dict()  # as a Reply carries it to the ClientConnection
    assert jsonrpc.acp_error(7, carried, ZH_CN)["error"] == {"code": -32602, "message": "参数无效：cwd 不是已存在的目录：/gone"}
    assert jsonrpc.acp_error(7, carried, EN)["error"]["message"] == error.message
    assert jsonrpc.acp_error(7, session_not_found("s1"), ZH_CN)["error"]["message"] == "找不到会话：s1"


def test_a_validation_deep_in_pure_code_is_worded_at_the_answer():
    try:
        convert_prompt([])
    except RpcError as exc:
        assert exc.words(ZH_CN) == "参数无效：prompt 为空：提问需要文字或图片"
    else:
        raise AssertionError("an empty prompt was accepted")


def test_the_engines_words_pass_untranslated():
    engine = {"code": -32602, "message": "Invalid params: expected an object"}
    assert jsonrpc.acp_error(1, engine, ZH_CN)["error"] == engine  # the engine's own error object
    wrapped = from_backend_error({"code": 7, "message": "disk full"}, "session/send", ZH_CN)
    assert "disk full" in jsonrpc.acp_error(1, wrapped.to_dict(), ZH_CN)["error"]["message"]
    plain = dict(invalid_params("cwd", "invalid.must_be_absolute").to_dict())  # a copy keeps the English
    assert jsonrpc.acp_error(1, plain, ZH_CN)["error"]["message"] == "Invalid params: cwd must be an absolute path"
