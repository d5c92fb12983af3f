#!/usr/bin/env bash
# The bridge on the simulator, as a real ACP client launches it (docs/clients.md).
# DIALECT=classic|today|cli016-v4 (default classic); each run leaves a trace and a log in
# $CLIENTS_OUT (default /tmp/zcode-clients) named TRACE_TAG-DIALECT-PID.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dialect=${DIALECT:-classic}
out=${CLIENTS_OUT:-/tmp/zcode-clients}
tag=${TRACE_TAG:-client}
mkdir -p "$out"
export ZCODE_BIN=zcode-sim PATH="$root/.venv/bin:$PATH"
export ZCODE_HOME=${ZCODE_HOME:-$out/home-$tag-$dialect} ZCODE_SIM_DATA=${ZCODE_SIM_DATA:-$out/sim-$tag-$dialect}
case $dialect in
    classic) export ZCODE_SIM_DIALECT=classic ;;
    today) export ZCODE_SIM_DIALECT=cli016 ;;
    cli016-v4) export ZCODE_SIM_DIALECT=cli016 ZCODE_ACP_ENGINE_API=v4 ;;
    *) echo "unknown DIALECT $dialect" >&2; exit 2 ;;
esac
exec "$root/.venv/bin/zcode-acp" --log-file "$out/$tag-$dialect-$$.log" --trace "$out/$tag-$dialect-$$.jsonl" "$@"
