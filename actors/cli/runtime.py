"""Process-level plumbing: gevent patching, logging, stdio serving, exit.

``gevent.monkey.patch_all()`` runs when this module is imported, which entry
points do first: afterwards every pykka actor is a greenlet on the main OS
thread, ``queue.Queue`` is gevent's, and ``subprocess`` is cooperative.
"""

from gevent import monkey

monkey.patch_all()

import gc  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import pykka  # noqa: E402

from zcode_acp.actors.client_connection import FdTransport  # noqa: E402
from zcode_acp.actors.cli.config import Config  # noqa: E402
from zcode_acp.actors.messages import AttachClient, Shutdown  # noqa: E402
from zcode_acp.actors.supervisor import Supervisor, version  # noqa: E402
from zcode_acp.actors.transport import trace  # noqa: E402  [trace]
from zcode_acp.protocol import trace as trace_format  # noqa: E402  [trace]

log = logging.getLogger("zcode_acp")


def setup_logging(level: str = "info", log_file: str | None = None) -> None:
    if log_file:
        fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        handler: logging.Handler = logging.StreamHandler(os.fdopen(fd, "a", buffering=1))
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    # pykka logs every ask exception at INFO; the bridge reports those itself.
    logging.getLogger("pykka").setLevel(logging.WARNING)


def protect_stdout() -> int:
    """Keep fd 1 for protocol frames only.

    The real stdout is duplicated to a private fd that only the client
    connection writes to; fd 1 and ``sys.stdout`` are pointed at stderr, so a
    stray ``print`` in any library can never corrupt the editor's stream.
    """
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def tune_gc() -> None:
    """Fewer cyclic-GC passes on the streaming path.

    Every event is a handful of short-lived, acyclic dicts that reference
    counting frees; with the default gen-0 threshold (700) the collector would
    run every few events and walk every batch still in flight. Objects made
    at start-up (modules, classes) are moved out of its sight entirely.
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def start_trace(path: str | None, redact_content: bool) -> None:
    """``--trace FILE`` / ``ZCODE_ACP_TRACE``: record every frame (docs/traces.md)."""
    if not path:
        return
    environ = dict(os.environ)
    trace.start(path, redact_content, literals=trace_format.literals_from_env(environ), bridge_version=version(),
                env=trace_format.replay_env(environ))
    log.info("tracing to %s%s", path, " (content redacted)" if redact_content else "")


def serve_stdio(config: Config, trace_file: str | None = None, trace_redact_content: bool = False) -> int:
    tune_gc()
    protocol_out = protect_stdout()
    start_trace(trace_file, trace_redact_content)  # [trace]
    exited = gevent.event.Event()
    supervisor = Supervisor.start(config, exited.set)
    supervisor.ask(AttachClient(FdTransport(0, protocol_out), True))

    def on_signal(name: str) -> None:
        supervisor.tell(Shutdown(f"received {name}"))

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        gevent.signal_handler(sig, on_signal, sig.name)
    exited.wait()
    supervisor.stop(block=True, timeout=1)
    pykka.ActorRegistry.stop_all(block=False)
    trace.stop()  # [trace] what is still queued is written before the exit
    logging.shutdown()
    # Greenlets parked on pipes must not hold the process: exit now, code 0.
    os._exit(0)
