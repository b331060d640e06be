#!/usr/bin/env bash
# The include check: every #include "folder/..." between the top-level
# folders of a tree points down the layers in scripts/layers (so they form no
# cycle). Prints each include that points up or sideways as FILE:LINE and
# exits 1; exits 2 on bad usage or a layers file it cannot read.
#   scripts/check-includes.sh [TREE [LAYERS]]   (default: this tree, TREE/scripts/layers)
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/..}" && pwd)
layers=${2:-$top/scripts/layers}
if [ ! -r "$layers" ]; then
	echo "check-includes: $layers: cannot read the layers file" >&2
	exit 2
fi
cd "$top"
# The folders holding C sources (build folders and dot folders aside).
mapfile -t dirs < <(find . -mindepth 2 -maxdepth 6 -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) \
    -not -path './build*' -not -path './.*' | cut -d/ -f2 | sort -u)
# FILE:LINE:TEXT of every quoted include naming a folder.
found=$(for d in "${dirs[@]}"; do
	find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) \
	    -print0 | xargs -0 -r grep -HnE \
	    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]+/' || true
done)
printf '%s\n' "$found" | awk -v layers="$layers" -v dirlist="${dirs[*]}" '
BEGIN {
	rank = 0
	while ((getline line < layers) > 0) {
		sub(/#.*/, "", line)
		if (line ~ /^[[:space:]]*$/)
			continue
		n = split(line, f, /[[:space:]]+/)
		rank++
		for (i = 1; i <= n; i++)
			if (f[i] != "")
				layer[f[i]] = rank
	}
	nd = split(dirlist, d, " ")
	for (i = 1; i <= nd; i++) {
		isdir[d[i]] = 1
		if (!(d[i] in layer)) {
			printf "%s/: a folder of C sources not in %s\n", d[i], layers
			bad++
		}
	}
}
$0 != "" {
	split($0, p, ":")
	file = p[1]; lineno = p[2]
	split(file, fp, "/")
	from = fp[1]
	inc = $0
	sub(/^[^"]*"/, "", inc)
	sub(/".*$/, "", inc)
	split(inc, ip, "/")
	to = ip[1]
	if (!(to in isdir) || to == from || !(from in layer))
		next
	edges++
	if (layer[to] >= layer[from]) {
		printf "%s:%s: #include \"%s\": %s is %s %s in %s\n", file, lineno,
		    inc, to, layer[to] == layer[from] ? "beside" : "above", from,
		    layers
		bad++
	}
}
END {
	if (bad) {
		printf "check-includes: %d include(s) or folder(s) against the layers\n", bad
		exit 1
	}
	printf "check-includes: %d includes between folders, all pointing down\n", edges
}'
