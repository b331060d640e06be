#!/usr/bin/env bash
# Install IREE's tools for backend = iree when missing: the PyPI wheels
# iree-base-compiler and iree-base-runtime of the version toolchain.env pins,
# into a venv of their own, $AUTOSCHED_IREE_VENV (default
# ${XDG_CACHE_HOME:-~/.cache}/autosched/iree-VERSION), where autosched looks
# for them after iree_bin and PATH. Prints the venv's bin folder; exit 1
# (with a warning) when they cannot be installed (no network, no venv).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/deadline.sh"
# shellcheck source=../toolchain.env
. "$here/toolchain.env"
venv=${AUTOSCHED_IREE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/autosched/iree-$IREE_VERSION}
have() {
	ls -d "$venv"/lib/python3*/site-packages/iree_base_compiler-"$IREE_VERSION".dist-info \
	    "$venv"/lib/python3*/site-packages/iree_base_runtime-"$IREE_VERSION".dist-info \
	    >/dev/null 2>&1 && [ -x "$venv/bin/iree-compile" ] &&
	    [ -x "$venv/bin/iree-run-module" ] && [ -x "$venv/bin/iree-benchmark-module" ]
}
if ! have; then
	echo "iree-deps: installing IREE $IREE_VERSION (PyPI) into $venv" >&2
	if ! { deadline 300 python3 -m venv "$venv" &&
	    deadline 1800 "$venv/bin/python" -m pip install -q --disable-pip-version-check \
	    "iree-base-compiler==$IREE_VERSION" "iree-base-runtime==$IREE_VERSION"; } ||
	    ! have; then
		echo "iree-deps: warning: IREE $IREE_VERSION could not be installed" \
		    "into $venv; backend = iree and its tests need it" >&2
		exit 1
	fi
fi
echo "$venv/bin"
