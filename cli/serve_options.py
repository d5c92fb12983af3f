"""The options of the stdio bridge (``zcode-acp [--log-level …] [--log-file …] [--trace …]``), in one table.

Both command lines read it: ``main.py`` parses a command line made only of
these options itself, without importing typer (an editor's agent
configuration often passes ``--log-level``, and typer costs ~50 ms of
start-up: docs/performance.md, "Start-up"); ``app.py`` declares the same
options to typer from this table, for ``--help`` and for everything else (a
command, a bad or missing value, an unknown option), so the two cannot drift.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# Here, not in logs.py (which imports it from here): main.py reads this table before
# gevent patches the standard library, and logs.py would load logging.handlers, and
# with it socket and select, unpatched.
LOG_LEVELS = ("debug", "info", "warning", "error")


class ServeOption(NamedTuple):
    flag: str
    name: str  # the keyword of ``main.serve`` (and of the typer callback's parameter)
    metavar: str | None  # None: a switch, which takes no value
    levels: str  # filled into its help; the words are the catalog's ``help.option.<name>`` (protocol/i18n)
    default: Any = None


SERVE_OPTIONS = (
    ServeOption("--log-level", "log_level", "LEVEL", ", ".join(LOG_LEVELS), "info"),
    ServeOption("--log-file", "log_file", "PATH", ""),
    ServeOption("--trace", "trace_file", "FILE", ""),
    ServeOption("--trace-redact-content", "trace_redact_content", None, "", False),
)
BY_FLAG = {option.flag: option for option in SERVE_OPTIONS}


def parse_serve_options(args: list[str]) -> dict[str, Any] | None:
    """``main.serve``'s keywords from a command line of serve options only; None for anything else.

    Accepts what typer accepts for these options (``--flag VALUE``,
    ``--flag=VALUE``, a later one winning); anything it does not accept
    itself (a command, ``--help``, an unknown option, a missing value, a
    value given to a switch) is left to typer, which also words the error.
    A switch not given is None: ``serve`` then follows the environment.
    """
    values: dict[str, Any] = {option.name: option.default for option in SERVE_OPTIONS}
    values["trace_redact_content"] = None
    position = 0
    while position < len(args):
        flag, has_value, value = args[position].partition("=")
        option = BY_FLAG.get(flag)
        if option is None:
            return None
        if option.metavar is None:
            if has_value:
                return None
            values[option.name] = True
        elif has_value:
            values[option.name] = value
        elif position + 1 < len(args):
            position += 1
            values[option.name] = args[position]
        else:
            return None
        position += 1
    return values
