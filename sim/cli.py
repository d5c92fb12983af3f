"""Command line: ``zcode-sim app-server --stdio [--disallowed-tools "A B"]``.

``zcode-sim --replay FILE [--fast] [app-server --stdio]`` (or ``ZCODE_SIM_REPLAY=FILE``)
plays the backend side of a recorded trace instead (sim/replay.py).
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> None:
    from .dialect import Dialect

    parser = argparse.ArgumentParser(prog="zcode-sim", description="Simulated ZCode app-server")
    # Like a real CLI's --version: the version it claims (ZCODE_SIM_VERSION, or its dialect's default).
    parser.add_argument("--version", action="version", version=Dialect.from_env().version)
    # Replaying a recorded session (docs/traces.md).
    parser.add_argument("--replay", metavar="FILE", default=os.environ.get("ZCODE_SIM_REPLAY"),
                        help="play the backend side of this trace")
    parser.add_argument("--fast", action="store_true", default=os.environ.get("ZCODE_SIM_REPLAY_FAST") == "1",
                        help="with --replay: no recorded pauses")
    sub = parser.add_subparsers(dest="command")
    server = sub.add_parser("app-server", help="serve the app-server protocol")
    server.add_argument("--stdio", action="store_true", required=True)
    server.add_argument("--disallowed-tools", default="")
    args = parser.parse_args(argv)
    if args.replay:
        from .replay import serve_replay

        sys.exit(serve_replay(args.replay, fast=args.fast))
    if args.command is None:
        parser.error("a command is required (app-server), or --replay FILE")
    from .faults import die_at_start_if_asked

    die_at_start_if_asked()

    sys.exit(serve())


def serve() -> int:
    """Serve the app-server protocol on stdio in the dialect the environment names.

    Here, at the top of the simulator's layers (docs/simulator.md), so the classic server never
    imports today's, which subclasses it. The servers are imported late: ``--version`` and
    ``--replay`` need neither (and the server module patches the process with gevent).
    """
    from .server import SimServer  # first: it patches the process with gevent
    from .dialect import Dialect
    from .scenarios import ScenarioBook
    from .wire import Wire

    dialect = Dialect.from_env()
    if dialect.name == "cli016":
        from .cli016 import Cli016SimServer

        server: SimServer = Cli016SimServer(Wire(1), ScenarioBook(), dialect)
    else:
        server = SimServer(Wire(1), ScenarioBook(), dialect)
    if not server.ready_to_start():
        return 1
    try:
        return server.serve()
    finally:
        server.wire.flush()
        sys.stderr.flush()
