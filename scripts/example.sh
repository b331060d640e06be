#!/usr/bin/env bash
# The main job on the bundled example: install what is missing, build, and
# tune configs/example.cfg (the seed's matmul) on this CPU.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
bash "$top/scripts/build.sh" release >/dev/null
exec "$top/build/daemon/autosched" run "$top/configs/example.cfg" \
    --db "$top/build/example.db" "$@"
