#!/usr/bin/env bash
# Install the Debian packages autosched needs, when they are missing.
# The MLIR/LLVM and IREE versions come from toolchain.env (the one place they
# are pinned). IREE's tools (backend = iree) come from PyPI into a venv of
# their own, $AUTOSCHED_IREE_VENV (default ~/.cache/autosched/iree-VERSION),
# where autosched looks for them; a failed download only warns (the IREE
# tests then skip).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/deadline.sh"
# shellcheck source=../toolchain.env
. "$here/toolchain.env"
v=$LLVM_VERSION
pkgs=(build-essential cmake pkg-config
      "mlir-$v-tools" "libmlir-$v-dev" "clang-$v" "llvm-$v-dev" "llvm-$v-tools" "libomp-$v-dev"
      "libclang-rt-$v-dev"
      libinih-dev libjansson-dev libsqlite3-dev sqlite3 libxgboost-dev
      libopenblas-dev libdnnl-dev libblis-dev libsystemd-dev python3 python3-venv
      chromium    # chromium: the HTML report test loads the report in a real browser
      mandoc      # mandoc: the manual pages' checker (tests/man)
      slurmctld slurmd slurm-client munge)  # executor = slurm and its test (scripts/slurm-local.sh)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	deadline 1800 $sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive deadline 3600 $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# IREE's tools for backend = iree (a failed download only warns).
bash "$here/scripts/iree-deps.sh" >/dev/null || true
