"""The web client's files, served read-only from one folder.

Only regular files inside the web root are served (``..``, symlinks leading
out and absolute paths are refused), with a content type from a short list
and a Content-Security-Policy that keeps the page to its own origin (its
WebSocket included: ``connect-src 'self'``). See docs/hub.md ("The page").
"""

from __future__ import annotations

from pathlib import Path

# 'self' covers the page's own ws:/wss: origin (CSP3); no other host can be reached.
CONTENT_SECURITY_POLICY = "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; " \
    "base-uri 'none'; form-action 'self'"

CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}

STATIC_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)

MAX_FILE_BYTES = 8 * 1024 * 1024


def default_web_root() -> Path:
    return Path(__file__).resolve().parent / "web"


def content_type(path: Path) -> str:
    return CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream")


def resolve_static(web_root: Path, url_path: str) -> Path | None:
    """The file a (percent-decoded) URL path names inside ``web_root``, or None."""
    if "\x00" in url_path or "\\" in url_path:
        return None
    relative = url_path.lstrip("/")
    if relative == "" or relative.endswith("/"):
        relative += "index.html"
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    try:
        root = web_root.resolve(strict=True)
        candidate = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not candidate.is_relative_to(root):
        return None
    if candidate.is_dir():
        candidate = candidate / "index.html"
    if not candidate.is_file() or candidate.stat().st_size > MAX_FILE_BYTES:
        return None
    return candidate
