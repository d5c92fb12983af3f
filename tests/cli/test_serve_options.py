"""The serve options parsed without typer (``serve_options.py``) mean what typer makes of them."""

from __future__ import annotations

import pytest
import typer

from zcode_acp.cli.app import app, tr
from zcode_acp.cli.serve_options import SERVE_OPTIONS, parse_serve_options

DEFAULTS = {"log_level": "info", "log_file": None, "trace_file": None, "trace_redact_content": None}

ACCEPTED = [
    ([], {}),
    (["--log-level", "warning"], {"log_level": "warning"}),
    (["--log-level=debug"], {"log_level": "debug"}),
    (["--log-level", "bogus"], {"log_level": "bogus"}),  # refused later by setup_logging, as on typer's path
    (["--log-level", "--log-file"], {"log_level": "--log-file"}),  # a value that looks like an option: typer's reading
    (["--log-level", "debug", "--log-level", "error"], {"log_level": "error"}),  # the last one wins
    (["--log-file", "/tmp/x.log", "--trace", "/tmp/t.jsonl"], {"log_file": "/tmp/x.log", "trace_file": "/tmp/t.jsonl"}),
    (["--trace=/tmp/t.jsonl", "--trace-redact-content"], {"trace_file": "/tmp/t.jsonl", "trace_redact_content": True}),
    (["--log-file="], {"log_file": ""}),
]

LEFT_TO_TYPER = [
    ["demo"], ["--log-level", "debug", "doctor"], ["--help"], ["-h"], ["--version", "--log-level", "debug"],
    ["--log-level"], ["--trace-redact-content=yes"], ["--unknown"], ["--log"], ["-"], ["--"], ["serve", "--cwd", "."],
]


@pytest.mark.parametrize("args, given", ACCEPTED)
def test_a_command_line_of_serve_options_is_parsed_without_typer(args, given):
    assert parse_serve_options(args) == {**DEFAULTS, **given}


@pytest.mark.parametrize("args", LEFT_TO_TYPER)
def test_anything_else_is_left_to_typer(args):
    assert parse_serve_options(args) is None


@pytest.mark.parametrize("args, given", ACCEPTED)
def test_typer_reads_the_same_command_line_the_same_way(args, given):
    context = typer.main.get_command(app).make_context("zcode-acp", list(args), resilient_parsing=True)
    typer_values = {name: context.params[name] for name in DEFAULTS}
    typer_values["trace_redact_content"] = typer_values["trace_redact_content"] or None  # what the callback passes
    assert typer_values == parse_serve_options(args)


def test_typer_declares_each_serve_option_from_the_table():
    command = typer.main.get_command(app)
    declared = {param.name: param for param in command.params}
    for option in SERVE_OPTIONS:
        param = declared[option.name]
        assert param.opts == [option.flag]
        assert param.help == tr(f"help.option.{option.name}", levels=option.levels)
        assert param.default == option.default
        assert param.is_flag == (option.metavar is None)
        if option.metavar is not None:
            assert param.metavar == option.metavar
