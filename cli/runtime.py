"""Process-level plumbing: gevent patching, logging, stdio serving, exit.

Importing this module patches the standard library for gevent (entry points
import it first): afterwards every pykka actor is a greenlet on the main OS
thread, ``queue.Queue`` is gevent's, and ``subprocess`` is cooperative. Only
the modules the bridge uses are patched, and gevent's plugins are looked up
only where some distribution declares one: ``patch_all()`` cost ~50 ms of
start-up here (docs/decisions.md, "Start-up").
"""

from __future__ import annotations

# The plugin groups the patches below notify: each module's, then the two that tell a plugin
# patching is over (``patch_all()`` is not called, but APM agents and database adapters
# hook those two, so they are fired as it would).
PLUGIN_GROUPS = ("gevent.plugins.monkey.will_patch_module", "gevent.plugins.monkey.did_patch_module",
                 "gevent.plugins.monkey.did_patch_builtins", "gevent.plugins.monkey.did_patch_all")
# What the bridge patches, in the shape patch_all() gives its events (``patch_all_arguments``).
PATCHED = {"os": True, "thread": True, "time": True, "socket": True, "select": True, "subprocess": True,
           "signal": True, "queue": True, "ssl": False, "dns": False, "sys": False, "builtins": False,
           "contextvars": False, "aggressive": True, "Event": True}


def plugins_declared(groups: tuple[str, ...] = PLUGIN_GROUPS) -> bool:
    """Whether a distribution on ``sys.path`` may declare an entry point in one of ``groups``.

    A look at each installed distribution's ``entry_points.txt`` (~1 ms),
    where ``importlib.metadata`` (what gevent uses) costs ~15 ms to import
    before it scans the same files. An archive or an unpacked egg on the path
    is not looked into: it answers True, and gevent's own scan decides.
    """
    import os
    import sys

    headers = tuple(f"[{group}]" for group in groups)
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().rstrip("/").endswith(".egg"):  # its metadata is EGG-INFO/, inside
            return True
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return True
        except OSError:  # a path entry that does not exist
            continue
        for name in names:
            if not name.lower().endswith((".dist-info", ".egg-info", ".egg")):
                continue
            if name.lower().endswith(".egg"):
                return True  # an egg folder in site-packages: gevent's scan decides
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as declared:
                    text = declared.read()
            except OSError:  # none, or an .egg-info file rather than a folder
                continue
            if any(header in text for header in headers):
                return True
    return False


def patch_for_the_bridge() -> None:
    """Patch os, thread, time, socket, select, subprocess, signal and queue for gevent.

    What stays unpatched is not used on a bridge's path: ``ssl`` (the one
    https client, net/outbound.py (the webhook and the quota), names gevent's ``SSLContext``
    itself), ``builtins`` and ``contextvars`` (no-ops on Python 3), ``sys``.
    Every patch notifies gevent's subscribers (``gevent.events.subscribers``)
    and its plugins (``gevent.plugins.monkey.*`` entry points). gevent looks
    plugins up with a fresh ``importlib.metadata`` scan of every installed
    distribution for each event; here they are looked up once, and only when
    ``plugins_declared`` finds a distribution that may have one (none does
    among the bridge's dependencies): otherwise only subscribers are notified.
    """
    from gevent import events, monkey

    if plugins_declared():
        from importlib import metadata

        installed = metadata.entry_points()

        def notify(event: object) -> None:
            events.notify(event)
            for plugin in installed.select(group=getattr(event, "ENTRY_POINT_NAME", "")):
                plugin.load()(event)
    else:
        notify = events.notify

    scanning = events.notify_and_call_entry_points
    events.notify_and_call_entry_points = notify
    try:
        # The order of patch_all(): thread before time, select before subprocess.
        monkey.patch_os()
        monkey.patch_thread()
        monkey.patch_time()
        monkey.patch_socket()
        monkey.patch_select()
        monkey.patch_selectors()
        monkey.patch_subprocess()
        monkey.patch_signal()
        monkey.patch_queue()
        notify(events.GeventDidPatchBuiltinModulesEvent(PATCHED, {}))
        notify(events.GeventDidPatchAllEvent(PATCHED, {}))
    finally:
        events.notify_and_call_entry_points = scanning


patch_for_the_bridge()

import gc  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import pykka  # noqa: E402

from zcode_acp.actors.transport.stdio import StdioTransport  # noqa: E402
from zcode_acp.config.settings import Config  # noqa: E402
from zcode_acp.cli.early_answer import EarlyStart  # noqa: E402
from zcode_acp.cli.logs import fail, setup_logging  # noqa: E402,F401  (setup_logging: re-exported for entry points)
from zcode_acp.actors.messages import AttachClient, Shutdown  # noqa: E402
from zcode_acp import version  # noqa: E402
from zcode_acp.actors.supervisor import Supervisor  # noqa: E402
from zcode_acp.actors.memory import allocator as memory  # noqa: E402
from zcode_acp.actors.transport import trace  # noqa: E402

log = logging.getLogger("zcode_acp")

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
    at start-up (modules, classes) are moved out of its sight entirely (the
    stdio path kept the collector off while this module loaded: ``main.serve``).
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    gc.enable()
    memory.fix_mmap_threshold()  # big buffers go back to the system after a burst


def announce(config: Config) -> None:
    """Say once, at start, what new sessions will do (the default mode runs tools unasked)."""
    if config.default_mode == "yolo":
        log.info("new sessions start in mode yolo: tools run without asking "
                 "(ZCODE_ACP_MODE=build asks before risky actions)")
    else:
        log.info("new sessions start in mode %s (ZCODE_ACP_MODE)", config.default_mode)


def start_trace(path: str | None, redact_content: bool, lang: str = "en") -> None:
    """``--trace FILE`` / ``ZCODE_ACP_TRACE``: record every frame (docs/traces.md)."""
    if not path:
        return
    from zcode_acp.protocol import trace_compare as compare  # difflib and its patterns: only when tracing

    environ = dict(os.environ)
    try:
        trace.start(path, redact_content, literals=compare.literals_from_env(environ), bridge_version=version(),
                    env=compare.replay_env(environ))
    except trace.TracePathError as exc:  # a folder, a file the bridge did not write, or not creatable
        fail(exc.words(lang))
    log.info("tracing to %s%s", path, " (content redacted)" if redact_content else "")


def serve_stdio(config: Config, trace_file: str | None = None, trace_redact_content: bool = False,
                early: EarlyStart | None = None) -> int:
    """Serve the editor on stdin/stdout; ``early``: what the stdio path read and answered before
    this module was imported (cli/early_answer.py), read and not answered again here."""
    announce(config)
    tune_gc()
    protocol_out = protect_stdout()
    start_trace(trace_file, trace_redact_content, config.lang)
    exited = gevent.event.Event()
    preread, answered, sessions, catalog = early if early is not None else (b"", (), (), None)
    supervisor = Supervisor.start(config, exited.set, early_sessions=sessions, early_catalog=catalog)
    if answered:
        log.debug("initialize%s was answered before the runtime was imported (%d bytes read ahead)",
                  " and session/new" if sessions else "", len(preread))
    supervisor.ask(AttachClient(StdioTransport(0, protocol_out, preread=preread, answered=answered), True))
    from zcode_acp.cli.remote_access import start_remote  # only when serving: the hub client, sockets

    remote = start_remote(supervisor, version())

    def on_signal(name: str) -> None:
        supervisor.tell(Shutdown(f"received {name}"))

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        gevent.signal_handler(sig, on_signal, sig.name)
    exited.wait()
    if remote is not None:
        remote.stop()
    try:
        supervisor.stop(block=True, timeout=1)
    except pykka.Timeout:
        # Thousands of Sessions can take longer to stop than an editor waits: the teardown
        # already told the backend to go; what remains is memory the exit frees anyway.
        log.warning("teardown still running after 1 s; exiting anyway")
    pykka.ActorRegistry.stop_all(block=False)
    trace.stop()  # what is still queued is written before the exit
    logging.shutdown()
    # Greenlets parked on pipes must not hold the process: exit now, code 0.
    os._exit(0)
