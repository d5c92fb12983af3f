#!/usr/bin/env bash
# agent.sh on the today-v4 engine: for clients that take one program and no environment.
DIALECT=today-v4 exec "$(dirname "$0")/agent.sh" "$@"
