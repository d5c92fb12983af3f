#!/usr/bin/env bash
# acpc 0.1.0 against the bridge on one engine (docs/clients.md): run_acpc.sh DIALECT, from a project
# folder, with ACPC naming acpc's command. Each step prints its exit code and the end of its output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
D=$1; A=${ACPC:-acpc}; out=${CLIENTS_OUT:-/tmp/zcode-clients}
export XDG_CONFIG_HOME=$out/acpc-config XDG_STATE_HOME=$out/acpc-state-$D XDG_CACHE_HOME=$out/acpc-cache-$D \
       XDG_DATA_HOME=$out/acpc-data-$D TRACE_TAG=acpc
# acpc's agent entry for this engine: a TOML file in its user config folder.
mkdir -p "$XDG_CONFIG_HOME/acpc/agents"
printf 'identity = "zcode-%s"\nname = "ZCode (%s)"\nauthor = "zcode-acp"\nrun_command = "%s/agent-%s.sh"\ninstall_command = "true"\n' \
    "$D" "$D" "$here" "$D" > "$XDG_CONFIG_HOME/acpc/agents/zcode-$D.toml"
step() { name=$1; shift; echo "--- $name: $*"; timeout 90 "$@" </dev/null > "$out/acpc-$D-$name.out" 2>&1; echo "rc=$?"; tail -c 600 "$out/acpc-$D-$name.out"; echo; }
# A model chosen on a fresh install (no catalog remembered yet).
ZCODE_HOME=$out/home-acpc-fresh-$D-$$ step model-fresh "$A" prompt "zcode-$D" --model glm-5-air "hello fresh"
step prompt "$A" prompt "zcode-$D" "hello there"
step json "$A" prompt "zcode-$D" --json "#sim stream count=3 text=ab"
step last "$A" prompt "zcode-$D" --last "what did I say?"
step perm-all "$A" prompt "zcode-$D" --permissions all "#sim permission"
step perm-none "$A" prompt "zcode-$D" --permissions none "#sim permission"
step mode "$A" prompt "zcode-$D" --mode plan "hello in plan"
step model "$A" prompt "zcode-$D" --model glm-5-air "hello with a model"
step models "$A" models "zcode-$D"
step sessions "$A" sessions "zcode-$D"
step slash "$A" prompt "zcode-$D" "/model"
