"""The remembered model catalog's file, read and written off the event loop (docs/sessions.md,
"The model list from the start").

The Supervisor owns the catalog; this object only moves it to and from
``$ZCODE_HOME/v2/acp-model-catalog.json`` (mode 0600, replaced atomically) in
gevent's thread pool. A read at start never delays ``initialize``: its result
arrives as a message (``CatalogLoaded``); a save is fire-and-forget, and a
failure is one warning (the next run simply starts from the engine's catalog).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import gevent

from zcode_acp.protocol import model_catalog
from zcode_acp.actors.lazy_store import ensure_private_dir

log = logging.getLogger(__name__)


class CatalogFile:
    def __init__(self, zcode_home: Path) -> None:
        self.folder = Path(zcode_home) / "v2"
        self.path = self.folder / model_catalog.FILE_NAME

    def load(self, deliver: Any) -> None:
        """Read in the thread pool; ``deliver(catalog_or_None)`` runs on the loop afterwards."""
        def read() -> None:
            try:
                data = gevent.get_hub().threadpool.apply(self._read)
            except OSError as exc:
                log.warning("cannot read the remembered model catalog %s: %s", self.path, exc)
                data = None
            deliver(model_catalog.decode(data) if data else None)

        gevent.spawn(read)

    def save(self, catalog: dict[str, Any]) -> None:
        data = model_catalog.encode(catalog)

        def write() -> None:
            try:
                gevent.get_hub().threadpool.apply(self._write, (data,))
            except OSError as exc:
                log.warning("cannot remember the model catalog in %s: %s", self.path, exc)

        gevent.spawn(write)

    def _read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    def _write(self, data: bytes) -> None:
        ensure_private_dir(self.folder)
        temporary = self.folder / f".{model_catalog.FILE_NAME}.{os.getpid()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
