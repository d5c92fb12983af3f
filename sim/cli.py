"""Command line: ``zcode-sim app-server --stdio [--disallowed-tools "A B"]``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="zcode-sim", description="Simulated ZCode app-server")
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("app-server", help="serve the app-server protocol")
    server.add_argument("--stdio", action="store_true", required=True)
    server.add_argument("--disallowed-tools", default="")
    args = parser.parse_args(argv)
    from .faults import die_at_start_if_asked
    from .server import serve

    die_at_start_if_asked()

    sys.exit(serve(disallowed_tools=args.disallowed_tools.split()))
