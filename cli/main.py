"""``zcode-acp``: serve ACP on stdio (what an editor launches), or run a command.

An editor launches ``zcode-acp`` (with no arguments, or only the serve
options of ``serve_options.py``: ``--log-level``, ``--log-file``, ``--trace``…)
and waits for the answer to ``initialize``: that path (and ``--version``)
never imports typer, the help text or the other commands. Everything else
goes through the typer app in ``app.py`` (docs/decisions.md, "Start-up").
"""

from __future__ import annotations

import sys


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

    # Start-up makes ~26,000 objects that all live as long as the process: the ~50 cyclic
    # collections they would trigger could free none of them. runtime.tune_gc sets the
    # bridge's thresholds once the actor tree is up.
    gc.disable()
    try:
        from zcode_acp.cli import runtime  # patches gevent first
    finally:
        gc.enable()

    trace_file = trace_file or os.environ.get("ZCODE_ACP_TRACE") or None
    if trace_redact_content is None:
        trace_redact_content = os.environ.get("ZCODE_ACP_TRACE_REDACT_CONTENT", "").lower() in ("1", "true", "yes", "on")

    from zcode_acp.config.settings import Config, SettingError, start_warnings
    from zcode_acp.cli.logs import UsageError, fail, setup_logging, warn

    try:
        setup_logging(log_level, log_file)
        config = Config.from_env()
        warnings = start_warnings(config)
    except (UsageError, SettingError) as exc:
        fail(str(exc))
    for warning in warnings:
        warn(warning)
    return runtime.serve_stdio(config, trace_file, trace_redact_content)


if __name__ == "__main__":
    main()
