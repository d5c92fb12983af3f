#!/usr/bin/env bash
# agent.sh on the today engine: for clients that take one program and no environment.
DIALECT=today exec "$(dirname "$0")/agent.sh" "$@"
