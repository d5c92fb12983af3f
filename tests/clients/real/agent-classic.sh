#!/usr/bin/env bash
# agent.sh on the classic engine: for clients that take one program and no environment.
DIALECT=classic exec "$(dirname "$0")/agent.sh" "$@"
