"""Command line: ``zcode-sim app-server --stdio [--disallowed-tools "A B"]``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> None:
    from .dialect import Dialect

    parser = argparse.ArgumentParser(prog="zcode-sim", description="Simulated ZCode app-server")
    # Like a real CLI's --version: the version it claims (ZCODE_SIM_VERSION, or its dialect's default).
    parser.add_argument("--version", action="version", version=Dialect.from_env().version)
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("app-server", help="serve the app-server protocol")
    server.add_argument("--stdio", action="store_true", required=True)
    server.add_argument("--disallowed-tools", default="")
    args = parser.parse_args(argv)
    from .faults import die_at_start_if_asked
    from .server import serve

    die_at_start_if_asked()

    sys.exit(serve(disallowed_tools=args.disallowed_tools.split()))
