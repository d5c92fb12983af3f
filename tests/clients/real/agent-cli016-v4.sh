#!/usr/bin/env bash
# agent.sh on the cli016-v4 engine: for clients that take one program and no environment.
DIALECT=cli016-v4 exec "$(dirname "$0")/agent.sh" "$@"
