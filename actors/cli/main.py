"""``zcode-acp``: serve ACP on stdio (what an editor launches), or run a demo."""

from __future__ import annotations

from . import runtime  # noqa: F401  (patches gevent before anything else)

import typer  # noqa: E402

from zcode_acp.actors.cli.config import Config  # noqa: E402

app = typer.Typer(add_completion=False, invoke_without_command=True, no_args_is_help=False,
                  help="ACP bridge for the ZCode coding agent.")


def _version(value: bool) -> None:
    if value:
        from zcode_acp.actors.supervisor import version

        typer.echo(f"zcode-acp {version()}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    log_level: str = typer.Option("info", help="debug, info, warning or error"),
    log_file: str = typer.Option(None, help="write logs here instead of stderr"),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True),
    trace: str = typer.Option(None, "--trace", envvar="ZCODE_ACP_TRACE", metavar="FILE",
                              help="record every frame to FILE (docs/traces.md)"),
    trace_redact_content: bool = typer.Option(False, "--trace-redact-content",
                                              envvar="ZCODE_ACP_TRACE_REDACT_CONTENT",
                                              help="in the trace, replace every text by its length and a hash"),
) -> None:
    """With no command: serve ACP over stdin/stdout."""
    runtime.setup_logging(log_level, log_file)
    if ctx.invoked_subcommand is None:
        raise typer.Exit(runtime.serve_stdio(Config.from_env(), trace, trace_redact_content))


@app.command()
def demo(
    prompt: str = typer.Argument("Show me around this project.", help="what to ask"),
    cwd: str = typer.Option(None, help="workspace folder (default: current directory)"),
) -> None:
    """Run the bridge on the simulated backend and print one conversation."""
    from zcode_acp.actors.cli.demo import run_demo

    raise typer.Exit(run_demo(prompt, cwd))


@app.command()
def replay(
    file: str = typer.Argument(..., help="a trace recorded with --trace"),
    update: bool = typer.Option(False, "--update", help="rewrite the trace's bridge→client side with what is sent now"),
    fast: bool = typer.Option(False, "--fast", help="ignore the recorded pacing"),
    timeout: float = typer.Option(10.0, help="seconds to wait for a frame the recording had"),
) -> None:
    """Replay a trace against this build (on zcode-sim --replay) and show what changed."""
    from zcode_acp.actors.cli.replay import run_replay

    raise typer.Exit(run_replay(file, update=update, fast=fast, timeout=timeout))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
