"""``zcode-acp``: serve ACP on stdio (what an editor launches), or run a command.

An editor launches ``zcode-acp`` (with no arguments, or only the serve
options of ``serve_options.py``: ``--log-level``, ``--log-file``, ``--trace``…)
and waits for the answer to ``initialize``: that path (and ``--version``)
never imports typer, the help text or the other commands. Everything else
goes through the typer app in ``app.py`` (docs/decisions.md, "Start-up").
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zcode_acp.cli.early_answer import EarlyStart


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):
        from zcode_acp import version

        print(f"zcode-acp {version()}")
        return
    from zcode_acp.cli.serve_options import parse_serve_options

    options = parse_serve_options(args)
    if options is not None:
        raise SystemExit(serve(**options))
    from zcode_acp.cli.app import app

    app(args=args, prog_name="zcode-acp")


def serve(log_level: str = "info", log_file: str | None = None, trace_file: str | None = None,
          trace_redact_content: bool | None = None) -> int:
    """Serve ACP on stdin/stdout until the editor goes away.

    A bad option or environment variable (an unusable ``ZCODE_HOME`` too) is
    one line on stderr and exit 2, before anything starts; a ``ZCODE_BIN`` that
    cannot start is one warning line, and ``initialize`` is still answered. Tracing (docs/traces.md) also follows
    ``ZCODE_ACP_TRACE`` / ``ZCODE_ACP_TRACE_REDACT_CONTENT``, so an editor's
    agent configuration can turn it on.
    """
    import gc
    import os

    trace_file = trace_file or os.environ.get("ZCODE_ACP_TRACE") or None
    if trace_redact_content is None:
        trace_redact_content = os.environ.get("ZCODE_ACP_TRACE_REDACT_CONTENT", "").lower() in ("1", "true", "yes", "on")

    # Start-up makes ~26,000 objects that all live as long as the process: the ~50 cyclic
    # collections they would trigger could free none of them. runtime.tune_gc sets the
    # bridge's thresholds once the actor tree is up.
    gc.disable()
    try:
        early = answer_early(log_level, log_file, trace_file)
        # Those objects, frozen now rather than at runtime.tune_gc (which freezes the rest): gevent's
        # patch_thread walks every object the collector tracks, to re-own a held RLock or import
        # lock, and frozen ones are not listed. None of these is held (no import is under way here,
        # no thread runs); the lock it must re-own, the runtime's import lock, is made after this.
        gc.freeze()
        from zcode_acp.cli import runtime  # patches gevent first
    finally:
        gc.enable()

    from zcode_acp.config.settings import Config, SettingError, start_warnings
    from zcode_acp.cli.logs import UsageError, fail, setup_logging, warn

    try:
        setup_logging(log_level, log_file)
        config = Config.from_env()
        if trace_file:  # before any other line: a refused path is the one line (a folder is never moved)
            from zcode_acp.actors.transport.trace import TracePathError, prepare

            try:
                prepare(trace_file)
            except TracePathError as exc:
                raise UsageError(exc.words(config.lang)) from None
        warnings = start_warnings(config)
    except (UsageError, SettingError) as exc:
        fail(str(exc))
    for warning in warnings:
        warn(warning)
    return runtime.serve_stdio(config, trace_file, trace_redact_content, early)


def answer_early(log_level: str, log_file: str | None, trace_file: str | None) -> EarlyStart | None:
    """Answer an ``initialize`` already waiting on stdin before the runtime is imported (early_answer.py).

    Only where nothing after it could still stop the start: a bad option or setting (an unusable
    ``ZCODE_HOME`` too) is one line on stderr and exit 2 with nothing answered, so those are
    checked first, as ``serve`` checks them again below, and a log file (which may not open) or
    a trace (which records every frame as the runtime reads and writes it) takes the usual path.
    """
    if trace_file or log_file:
        return None
    from zcode_acp import version
    from zcode_acp.config.settings import Config, SettingError, home_problem
    from zcode_acp.cli.early_answer import SessionDefaults, answer_waiting_initialize
    from zcode_acp.cli.serve_options import LOG_LEVELS

    if log_level.lower() not in LOG_LEVELS:
        return None
    try:
        config = Config.from_env()
    except SettingError:
        return None
    if home_problem(config.zcode_home, config.lang) is not None:
        return None
    defaults = SessionDefaults(config.default_mode, config.lang, config.engine_api, config.zcode_home)
    return answer_waiting_initialize(version(), config.lang, defaults=defaults)


if __name__ == "__main__":
    main()
