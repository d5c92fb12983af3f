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


def test_image_becomes_an_attachment_the_engine_reads():
    # The engine's session/send reads attachments as {kind, dataBase64 | localPath, mimeType, filename}
    # (its prompt-attachment mapping in the app-server); {type, data} it drops without a word.
    prompt = convert_prompt([{"type": "text", "text": "what is this"},
                             {"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    assert prompt.attachments == [{"kind": "image", "dataBase64": "AAAA", "mimeType": "image/png",
                                   "filename": "image-2"}]
    assert prompt.send_params("s1") == {"sessionId": "s1", "content": "what is this",
                                        "attachments": prompt.attachments}


def test_a_link_to_a_local_image_is_sent_by_path():
    prompt = convert_prompt([{"type": "text", "text": "look"},
                             {"type": "resource_link", "uri": "file:///shots/my%20shot.PNG", "name": "my shot.PNG"},
                             {"type": "resource_link", "uri": "file:///src/app.py", "name": "app.py"}])
    assert prompt.attachments == [{"kind": "image", "localPath": "/shots/my shot.PNG", "mimeType": "image/png",
                                   "filename": "my shot.PNG"}]
    assert prompt.text == "look\n@/src/app.py"


def test_an_embedded_image_blob_is_inline_data_named_after_its_uri():
    prompt = convert_prompt([{"type": "resource", "resource": {"uri": "file:///a/b.jpg", "blob": "QUJD",
                                                               "mimeType": "image/jpeg"}}])
    assert prompt.attachments == [{"kind": "image", "dataBase64": "QUJD", "mimeType": "image/jpeg",
                                   "filename": "b.jpg"}]


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
    ([{"type": "image", "data": "AA", "mimeType": "text/plain"}], "prompt[0].mimeType"),
    ([{"type": "image", "data": "", "mimeType": "image/png"}], "prompt[0]"),
    ([{"type": "resource", "resource": {"uri": "file:///x", "blob": "AA", "mimeType": "application/zip"}}],
     "prompt[0].resource"),
])
def test_bad_prompts_are_invalid_params_naming_the_field(blocks, field):
    with pytest.raises(RpcError) as err:
        convert_prompt(blocks)
    assert err.value.code == -32602
    assert field in err.value.message
