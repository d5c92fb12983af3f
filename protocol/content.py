"""ACP prompt content → the backend's ``session/send`` content (docs/protocol-mapping.md, "Prompt content").

The backend takes one text plus optional attachments. Text blocks join with
newlines; a resource link becomes a reference line naming the file; an
embedded text resource is inlined under a header naming its URI; images
become attachments in the shape the engine reads (``session/send``
``attachments[]``: ``{kind: "image", dataBase64 | localPath, mimeType,
filename}`` — anything else it drops without a word), and a resource link to a
local image file is sent by path for the engine to read. Audio is refused (the
bridge advertises ``audio: false``), so is an image that is not one (no
``image/*`` type), and so is a prompt with nothing in it, which would start no
turn and hang: never a prompt sent half-empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from posixpath import basename
from urllib.parse import unquote, urlparse

from .errors import invalid_params


@dataclass(frozen=True)
class BackendPrompt:
    """A prompt as the engine takes it: its text and its attachments."""

    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)

    def send_params(self, backend_session_id: str) -> dict[str, Any]:
        params: dict[str, Any] = {"sessionId": backend_session_id, "content": self.text}
        if self.attachments:
            params["attachments"] = self.attachments
        return params


def echo_text(blocks: Any) -> str:
    """The text a prompt shows other clients: its text blocks, joined."""
    if not isinstance(blocks, list):
        return ""
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                     and isinstance(b.get("text"), str))


def uri_to_path(uri: str) -> str:
    """``file:///a/b%20c`` → ``/a/b c``; other URIs are returned unchanged."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return uri


def _require_str(block: dict[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise invalid_params(f"{where}.{key}", "invalid.must_be_string")
    return value


IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp", ".bmp": "image/bmp", ".svg": "image/svg+xml"}


def _image_mime(block: dict[str, Any], where: str, key: str = "mimeType") -> str:
    mime = _require_str(block, key, where)
    if not mime.lower().startswith("image/"):
        raise invalid_params(f"{where}.{key}", "invalid.not_an_image_type", mime=repr(mime))
    return mime


def _filename(uri: Any, fallback: str) -> str:
    name = basename(uri_to_path(uri)) if isinstance(uri, str) else ""
    return name or fallback


def _inline_image(data: str, mime: str, uri: Any, index: int) -> dict[str, Any]:
    if not data:
        raise invalid_params(f"prompt[{index}]", "invalid.image_no_data")
    return {"kind": "image", "dataBase64": data, "mimeType": mime, "filename": _filename(uri, f"image-{index + 1}")}


def local_image(uri: str, mime: Any = None) -> dict[str, Any] | None:
    """A ``file://`` link to an image (by its type or its name): sent by path, the engine reads it."""
    if urlparse(uri).scheme != "file":
        return None
    path = uri_to_path(uri)
    suffix = path[path.rfind("."):].lower() if "." in basename(path) else ""
    kind = mime if isinstance(mime, str) and mime.lower().startswith("image/") else IMAGE_SUFFIXES.get(suffix)
    if not kind:
        return None
    return {"kind": "image", "localPath": path, "mimeType": kind, "filename": basename(path) or "image"}


def convert_prompt(blocks: Any) -> BackendPrompt:
    """Convert the ``prompt`` array of ``session/prompt``; RpcError(-32602) if wrong."""
    if not isinstance(blocks, list):
        raise invalid_params("prompt", "invalid.must_be_content_blocks")
    texts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        where = f"prompt[{index}]"
        if not isinstance(block, dict):
            raise invalid_params(where, "invalid.must_be_content_block")
        kind = block.get("type")
        if kind == "text":
            texts.append(_require_str(block, "text", where))
        elif kind == "resource_link":
            uri = _require_str(block, "uri", where)
            image = local_image(uri, block.get("mimeType"))
            if image is not None:
                attachments.append(image)
                continue
            name = block.get("name") if isinstance(block.get("name"), str) else None
            line = f"@{uri_to_path(uri)}"
            if name and name not in line:
                line += f" ({name})"
            texts.append(line)
        elif kind == "resource":
            resource = block.get("resource")
            if not isinstance(resource, dict):
                raise invalid_params(f"{where}.resource", "invalid.must_be_object")
            uri = _require_str(resource, "uri", f"{where}.resource")
            if isinstance(resource.get("text"), str):
                texts.append(f"[Context from {uri}]\n{resource['text']}\n[End of {uri}]")
            elif isinstance(resource.get("blob"), str) and str(
                resource.get("mimeType", "")
            ).lower().startswith("image/"):
                attachments.append(_inline_image(resource["blob"], resource["mimeType"], uri, index))
            else:
                raise invalid_params(f"{where}.resource", "invalid.resource_needs_text")
        elif kind == "image":
            data = _require_str(block, "data", where)
            mime = _image_mime(block, where)
            attachments.append(_inline_image(data, mime, block.get("uri"), index))
        elif kind == "audio":
            raise invalid_params(f"{where}.type", "invalid.no_audio")
        else:
            raise invalid_params(f"{where}.type", "invalid.unknown_content_type", kind=repr(kind))
    text = "\n".join(texts)
    if not text.strip() and not attachments:
        raise invalid_params("prompt", "invalid.empty_prompt")
    return BackendPrompt(text=text, attachments=attachments)
