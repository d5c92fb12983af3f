import pytest

from zcode_acp.protocol.content import convert_prompt
from zcode_acp.protocol.errors import RpcError


def test_text_blocks_join_with_newlines():
    prompt = convert_prompt([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert prompt.text == "a\nb" and prompt.attachments == []


def test_resource_link_becomes_a_reference_line():
    prompt = convert_prompt([
        {"type": "text", "text": "look at"},
        {"type": "resource_link", "uri": "file:///src/my%20app.py", "name": "my app.py"},
    ])
    assert prompt.text == "look at\n@/src/my app.py"


def test_embedded_text_resource_is_inlined_under_its_uri():
    prompt = convert_prompt([{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}}])
    assert "file:///a.txt" in prompt.text and "hello" in prompt.text


def test_image_becomes_an_attachment():
    prompt = convert_prompt([{"type": "text", "text": "what is this"},
                             {"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    assert prompt.attachments == [{"type": "image", "mimeType": "image/png", "data": "AAAA"}]
    assert prompt.send_params("s1") == {"sessionId": "s1", "content": "what is this",
                                        "attachments": prompt.attachments}


def test_image_only_prompt_is_not_empty():
    assert convert_prompt([{"type": "image", "data": "AAAA", "mimeType": "image/png"}]).text == ""


@pytest.mark.parametrize("blocks,field", [
    ([{"type": "audio", "data": "AA", "mimeType": "audio/wav"}], "prompt[0].type"),
    ([], "prompt"),
    ([{"type": "text", "text": "   \n "}], "prompt"),
    ("hello", "prompt"),
    ([{"type": "text"}], "prompt[0].text"),
    ([{"type": "video"}], "prompt[0].type"),
    ([{"type": "image", "data": "AA"}], "prompt[0].mimeType"),
    ([{"type": "resource", "resource": {"uri": "file:///x", "blob": "AA", "mimeType": "application/zip"}}],
     "prompt[0].resource"),
])
def test_bad_prompts_are_invalid_params_naming_the_field(blocks, field):
    with pytest.raises(RpcError) as err:
        convert_prompt(blocks)
    assert err.value.code == -32602
    assert field in err.value.message
