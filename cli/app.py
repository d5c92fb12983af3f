"""The typer app: options, ``--help``, and every command but the bare stdio path.

``main.main`` comes here only when there are arguments (the bare stdio path
never imports typer). The help is plain text: what no command means, every
command, every option, every environment variable with its default (from
``config.SETTINGS``).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from zcode_acp.config.settings import SETTINGS
from zcode_acp.cli.help_format import DisplayWidthFormatter, translate_typer, wrap
from zcode_acp.cli.logs import UsageError, fail, setup_logging
from zcode_acp.cli.serve_options import SERVE_OPTIONS
from zcode_acp.protocol.i18n import Translator, language_from_env

HELP_WIDTH = 80  # columns, counted as a terminal does (cli/help_format.py)
# typer labels every parameter with its Python type ("<str>", "<bool>"): noise in a help text.
_TYPE_LABEL = re.compile(r" <[^>]*>")
# The help's language, resolved as Config resolves it (typer reads the texts when this module is imported).
LANG = language_from_env(os.environ)
tr = Translator(LANG)
translate_typer(tr, [typer.core])  # "[default: …]", "[required]" in the help's language


class BridgeContext(typer.Context):
    formatter_class = DisplayWidthFormatter


def _format_params(command: Any, ctx: Any, formatter: Any) -> None:
    sections: dict[str, list[tuple[str, str]]] = {tr("help.arguments"): [], tr("help.options"): []}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record:
            name = _TYPE_LABEL.sub("", record[0])
            section = tr("help.arguments") if param.param_type_name == "argument" else tr("help.options")
            sections[section].append((name, record[1]))
    for title, rows in sections.items():
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def _wrap(text: str, formatter: Any, indent: str) -> list[str]:
    return wrap(text, max(40, formatter.width), initial_indent=indent, subsequent_indent=indent)


def _write_block(formatter: Any, title: str, lines: list[str]) -> None:
    formatter.write_paragraph()
    formatter.write_text(title)
    for line in lines:
        formatter.write(line + "\n")


def environment_lines(formatter: Any) -> list[str]:
    """Every variable, its default and meaning, wrapped under its name."""
    lines = []
    for setting in SETTINGS:
        default = setting.default or tr("help.unset")
        lines.append(f"  {setting.name} ({tr('help.default')}: {default})")
        lines.extend(_wrap(setting.meaning_in(LANG).replace("`", ""), formatter, "      "))
    return lines


def _help_option(option: Any) -> Any:
    if option is not None:
        option.help = tr("help.help")
    return option


def _format_usage(command: Any, ctx: Any, formatter: Any) -> None:
    formatter.write_usage(ctx.command_path, " ".join(command.collect_usage_pieces(ctx)), prefix=tr("help.usage"))


class BridgeGroup(TyperGroup):
    context_class = BridgeContext

    def get_help_option(self, ctx: Any) -> Any:
        return _help_option(super().get_help_option(ctx))

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        _format_usage(self, ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _format_params(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """click's, with the section's title in the help's language."""
        commands = [(name, command) for name in self.list_commands(ctx)
                    if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section(tr("help.commands")):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        _write_block(formatter, tr("help.environment"), environment_lines(formatter))
        formatter.write_paragraph()
        formatter.write_text(tr("help.logs"))


class BridgeCommand(TyperCommand):
    context_class = BridgeContext

    def get_help_option(self, ctx: Any) -> Any:
        return _help_option(super().get_help_option(ctx))

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        _format_usage(self, ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _format_params(self, ctx, formatter)


class DemoCommand(BridgeCommand):
    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        from zcode_acp.cli.demo import TOUR, simulator_scenarios

        _write_block(formatter, tr("help.demo.scenarios"), _wrap(", ".join(simulator_scenarios()), formatter, "  "))
        formatter.write_paragraph()
        formatter.write_text(tr("help.demo.tour", tour=tr("help.demo.then").join(
            repr(p.replace("\n", " ")) for p in TOUR)))


app = typer.Typer(
    cls=BridgeGroup,
    add_completion=False,
    invoke_without_command=True,
    no_args_is_help=False,
    subcommand_metavar="[COMMAND [ARGS]...]",
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_WIDTH},
    help=tr("help.main"),
)


_SERVE_OPTION = {option.name: option for option in SERVE_OPTIONS}


def serve_option(name: str) -> Any:
    """The typer declaration of a serve option, from the table ``main.py`` also parses (``serve_options.py``)."""
    option = _SERVE_OPTION[name]
    return typer.Option(option.default, option.flag, metavar=option.metavar,
                        help=tr(f"help.option.{name}", levels=option.levels))


def _version(value: bool) -> None:
    if value:
        from zcode_acp import version

        typer.echo(f"zcode-acp {version()}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    log_level: str = serve_option("log_level"),
    log_file: str | None = serve_option("log_file"),
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help=tr("help.version")),
    trace_file: str | None = serve_option("trace_file"),
    trace_redact_content: bool = serve_option("trace_redact_content"),
) -> None:
    """Serve ACP on stdio when no command is given (``main.py`` serves a command line of serve options
    itself; here come those with a command, ``--help``, or a value it leaves to typer to refuse)."""
    if ctx.invoked_subcommand is None:
        from zcode_acp.cli.main import serve

        raise typer.Exit(serve(log_level, log_file, trace_file, trace_redact_content or None))
    try:
        setup_logging(log_level, log_file)
    except UsageError as exc:
        fail(str(exc))


@app.command(cls=DemoCommand, help=tr("help.demo"))
def demo(
    prompt: str | None = typer.Argument(None, metavar="PROMPT",
                                           help=tr("help.demo.prompt"), show_default=False),
    cwd: str | None = typer.Option(None, "--cwd", metavar="DIR",
                                      help=tr("help.demo.cwd")),
) -> None:
    """Run the bridge on the simulated backend and print a conversation."""
    if cwd is not None and not os.path.isdir(cwd):
        fail(tr("cli.not_a_directory", path=repr(cwd)))
    from zcode_acp.cli.demo import run_demo

    raise typer.Exit(run_demo([prompt] if prompt else None, cwd))


@app.command(cls=BridgeCommand, short_help=tr("help.doctor.short"), help=tr("help.doctor"))
def doctor() -> None:
    """Check this installation (one line per check, with the fix) and print editor configurations."""
    from zcode_acp.cli.doctor import run_doctor

    raise typer.Exit(run_doctor())


@app.command(cls=BridgeCommand, short_help=tr("help.hub.short"), help=tr("help.hub"))
def hub(
    stay: bool = typer.Option(False, "--stay", help=tr("help.hub.stay")),
    host: str | None = typer.Option(None, "--host", metavar="ADDRESS",
                                       help=tr("help.hub.host")),
    port: int | None = typer.Option(None, "--port", metavar="PORT",
                                       help=tr("help.hub.port")),
    web_root: str | None = typer.Option(None, hidden=True, help="serve the page from this folder"),
) -> None:
    """Run the machine-level hub: remote clients' single entry (docs/hub.md)."""
    from zcode_acp.config.settings import Config, SettingError

    try:
        Config.from_env()  # a bad remote setting stops the hub as it stops a bridge (one line, exit 2)
    except SettingError as exc:
        fail(str(exc))
    from zcode_acp.cli import runtime  # noqa: F401  (patches for gevent first)
    from zcode_acp.hub.main import run_hub

    raise typer.Exit(run_hub(stay=stay, host=host, port=port, web_root=web_root))


@app.command("serve", cls=BridgeCommand, short_help=tr("help.serve.short"), help=tr("help.serve"))
def serve_command(
    cwd: str = typer.Option(..., "--cwd", metavar="DIR", help=tr("help.serve.cwd")),
    idle_exit: float | None = typer.Option(None, "--idle-exit", metavar="MINUTES",
                                           help=tr("help.serve.idle_exit")),
    log_file: str | None = typer.Option(None, "--log-file", metavar="PATH",
                                           help=tr("help.serve.log_file")),
) -> None:
    """Serve one project headless, for the hub and remote clients, until SIGTERM (docs/service.md)."""
    from zcode_acp.cli import runtime  # noqa: F401  (patches for gevent first)
    from zcode_acp.cli.serve import LOG_BACKUPS, LOG_ROTATE_BYTES, run_serve

    if log_file:
        level = logging.getLevelName(logging.getLogger().level).lower()
        try:
            setup_logging(level, log_file, rotate_bytes=LOG_ROTATE_BYTES, backups=LOG_BACKUPS)
        except UsageError as exc:
            fail(str(exc))
    raise typer.Exit(run_serve(cwd, idle_exit))


@app.command(cls=BridgeCommand, short_help=tr("help.setup.short"), help=tr("help.setup"))
def setup(
    provider: str | None = typer.Option(None, "--provider", metavar="zai|bigmodel", help=tr("help.setup.provider")),
) -> None:
    """Keep the GLM Coding Plan key for the engine's provider headers and the quota (docs/quota.md)."""
    from zcode_acp.cli.quota import run_setup

    raise typer.Exit(run_setup(provider))


@app.command(cls=BridgeCommand, short_help=tr("help.quota.short"), help=tr("help.quota"))
def quota(
    url: str | None = typer.Option(None, hidden=True),  # the tests' local endpoint instead of the provider's
) -> None:
    """Show the GLM Coding Plan's windows: use and reset time, one line each (docs/quota.md)."""
    from zcode_acp.cli import runtime  # noqa: F401  (patches for gevent first: the read is a gevent socket)
    from zcode_acp.cli.quota import run_quota

    raise typer.Exit(run_quota(url=url))


@app.command(cls=BridgeCommand, short_help=tr("help.replay.short"), help=tr("help.replay"))
def replay(
    file: str = typer.Argument(..., metavar="FILE", help=tr("help.replay.file")),
    update: bool = typer.Option(False, "--update", help=tr("help.replay.update")),
    fast: bool = typer.Option(False, "--fast", help=tr("help.replay.fast")),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", help=tr("help.replay.timeout")),
) -> None:
    """Replay a trace against this build (on zcode-sim --replay) and show what changed (docs/traces.md)."""
    from zcode_acp.cli import runtime  # noqa: F401  (patches for gevent first: it reads pipes in greenlets)
    from zcode_acp.cli.replay import run_replay

    raise typer.Exit(run_replay(file, update=update, fast=fast, timeout=timeout))
