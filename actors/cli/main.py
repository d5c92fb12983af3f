"""``zcode-acp``: serve ACP on stdio (what an editor launches), or run a demo."""

from __future__ import annotations

from . import runtime

import typer

from zcode_acp.actors.cli.config import Config

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
) -> None:
    """With no command: serve ACP over stdin/stdout."""
    runtime.setup_logging(log_level, log_file)
    if ctx.invoked_subcommand is None:
        raise typer.Exit(runtime.serve_stdio(Config.from_env()))


@app.command()
def demo(
    prompt: str = typer.Argument("Show me around this project.", help="what to ask"),
    cwd: str = typer.Option(None, help="workspace folder (default: current directory)"),
) -> None:
    """Run the bridge on the simulated backend and print one conversation."""
    from zcode_acp.actors.cli.demo import run_demo

    raise typer.Exit(run_demo(prompt, cwd))


@app.command()
def hub(
    stay: bool = typer.Option(False, "--stay", help="never exit when idle (under a supervisor)"),
    host: str = typer.Option(None, help="listen address (default ZCODE_ACP_HUB_HOST or 127.0.0.1)"),
    port: int = typer.Option(None, help="listen port (default ZCODE_ACP_HUB_PORT or 8377)"),
    web_root: str = typer.Option(None, hidden=True, help="serve the page from this folder"),
) -> None:
    """Run the machine-level hub: remote clients' single entry (docs/hub.md)."""
    from zcode_acp.hub.main import run_hub

    raise typer.Exit(run_hub(stay=stay, host=host, port=port, web_root=web_root))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
