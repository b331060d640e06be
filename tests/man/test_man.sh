#!/usr/bin/env bash
# The manual pages (man/): mandoc -T lint finds nothing at warning level;
# cmake --install puts them where man finds them; and they hold every command
# `autosched --help` lists, every long option the CLI's and the service's
# parsers take, every cfg key the cfg reader, the knobs and the tuners accept
# and every autoschedd.conf key, each read from the code's own tables, and
# none that the code does not take.
#   test_man.sh AUTOSCHED AUTOSCHEDD SRC BUILD
as=$1 asd=$2 src=$3 build=$4
. "$src/tests/checks.sh"
if ! command -v mandoc >/dev/null; then
	echo "SKIP: mandoc is missing (bash scripts/deps.sh installs it)" >&2
	exit 77
fi
scratch man
pages=(autosched.1 autosched.cfg.5 autoschedd.8)

# 1. Clean mdoc.
for p in "${pages[@]}"; do
	out=$(deadline 30 mandoc -T lint -W warning "$src/man/$p" 2>&1)
	check "mandoc -T lint -W warning $p: exit 0" eq "$?" 0
	check "mandoc -T lint -W warning $p: no message" eq "$out" ""
done

# 2. Installed where man finds them (the man component only: the rest of
# the install writes outside the prefix, e.g. /etc/autosched).
deadline 30 cmake --install "$build" --prefix "$T/prefix" --component man \
    > "$T/install.txt" 2>&1
check "cmake --install --component man exits 0" eq "$?" 0
mandir=$T/prefix/share/man
for f in man1/autosched.1 man5/autosched.cfg.5 man8/autoschedd.8; do
	check "installed: share/man/$f" test -f "$mandir/$f"
done
# plain: the text without the overstrikes of bold and underline.
plain() {
	if command -v col >/dev/null; then col -b; else sed 's/.\x08//g'; fi
}
# show SECTION NAME: "man -M" where man-db is, else mandoc on the installed
# file.
show() {
	if command -v man >/dev/null; then
		MANPAGER=cat deadline 30 man -M "$mandir" -P cat "$1" "$2" 2>&1 | plain
	else
		deadline 30 mandoc -T ascii "$mandir/man$1/$2.$1" | plain
	fi
}
show 1 autosched > "$T/autosched.txt"
show 5 autosched.cfg > "$T/autosched.cfg.txt"
show 8 autoschedd > "$T/autoschedd.txt"
check "man -M PREFIX autosched shows the page" \
    grep -q "autosched .* tune the matmul dispatches" "$T/autosched.txt"
check "man -M PREFIX 5 autosched.cfg shows the page" \
    grep -q "autosched job configuration file" "$T/autosched.cfg.txt"
check "man -M PREFIX 8 autoschedd shows the page" \
    grep -q "autosched tuning service" "$T/autoschedd.txt"

# 3. The pages against the code.
# c_array FILE NAME_RE: the string literals of the C arrays whose name
# matches NAME_RE (from "NAME[...] = {" to "};").
c_array() {
	awk -v re="$2" '
	    $0 ~ "const char \\*const " re "\\[[A-Z_]*\\] *= *\\{" { on = 1 }
	    on { print }
	    on && /};/ { on = 0 }' "$1" | grep -o '"[^"]*"' | tr -d '"'
}
# it_ic PAGE: the words of the ".It Ic WORD" and ".It Xo Ic WORD" lines
# (".It Ic A , B" gives A and B; a line ending in a backslash goes on).
it_ic() {
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$src/man/$1" | awk '
	    /^\.It (Xo )?Ic / {
		for (i = ($2 == "Xo") ? 4 : 3; i <= NF; i++) {
			if ($i ~ /^[A-Z][a-z]$/)
				break;
			if ($i != ",")
				print $i
		}
	    }'
}
# has WORDS_FILE LIST_FILE WHAT: every word of WORDS_FILE is in LIST_FILE.
has() {
	local missing
	missing=$(sort -u "$1" | comm -23 - <(sort -u "$2"))
	[ -z "$missing" ] || { echo "  $3:" $missing >&2; return 1; }
}

# Commands: `autosched --help` and the pages' command list, both ways.
"$as" --help | sed -n -E 's/^  ([a-z]+) .*/\1/p' > "$T/commands"
check "autosched --help lists at least 14 commands" \
    ge "$(wc -l < "$T/commands")" 14
it_ic autosched.1 > "$T/commands.1"
check "every command of autosched --help is in autosched(1)" \
    has "$T/commands" "$T/commands.1" "not in autosched.1"
check "every command of autosched(1) is in autosched --help" \
    has "$T/commands.1" "$T/commands" "not a command"

# Long options: the getopt tables of the CLI, its option tables (struct
# opt_spec, .name = "opt"; --help is util/opts.c's) and the "--opt" literals
# of main's own words, in the rendered page; the page's own --opt words must
# be the code's.
{
	cat "$src"/daemon/cli*.c "$src/export/cmd.c" "$src/util/opts.c" |
	    sed -n -E 's/.*\{ "([a-z-]+)", *(no|required|optional)_argument.*/\1/p'
	cat "$src"/daemon/cli*.c "$src/daemon/queue.c" "$src/export/cmd.c" |
	    sed -n -E 's/.*\{ \.name = "([a-z-]+)".*/\1/p'
	grep -o '"--[a-z-]*' "$src/daemon/autosched_main.c" | sed 's/^"--//'
} | sort -u > "$T/options"
check "the CLI takes at least 25 long options" ge "$(wc -l < "$T/options")" 25
grep -o -E -- '--[a-z][a-z-]*' "$T/autosched.txt" | sed 's/^--//' |
    sort -u > "$T/options.1.all"
check "every long option of the CLI is in autosched(1)" \
    has "$T/options" "$T/options.1.all" "not in autosched.1"
sed -n -E 's/.*Fl -([a-z][a-z-]*).*/\1/p' "$src/man/autosched.1" > "$T/options.1"
check "every Fl --option of autosched(1) is one the CLI takes" \
    has "$T/options.1" "$T/options" "not an option of the CLI"

# autoschedd: its option table's letters and long options (struct opt_spec
# in service.c; -h and --help are util/opts.c's).
{
	sed -n -E 's/.*\{ \.name = "([a-z-]+)".*/\1/p' "$src/daemon/service.c"
	sed -n -E 's/.*\{ "(help)", *no_argument.*/\1/p' "$src/util/opts.c"
} > "$T/dopts"
{
	sed -n -E "s/.*\\{ \\.letter = '([a-z])'.*/\\1/p" "$src/daemon/service.c"
	echo h
} > "$T/dletters"
check "autoschedd takes at least 4 options" \
    ge "$(cat "$T/dopts" "$T/dletters" | wc -l)" 4
for o in $(cat "$T/dopts"); do
	check "autoschedd --$o is in autoschedd(8)" \
	    grep -q -E -- "--$o([^a-z-]|\$)" "$T/autoschedd.txt"
done
for l in $(cat "$T/dletters"); do
	check "autoschedd -$l is in autoschedd(8)" \
	    grep -q -E "^\.(It|Op) Fl ([a-z]*$l|[a-z]+ , Fl $l)" \
	    "$src/man/autoschedd.8"
done

# cfg keys: the cfg reader's key tables, the knobs, every tuner's keys.
{
	c_array "$src/cfg/cfg.c" '[a-z_]+_keys'
	c_array "$src/search/space.c" 'knob_names'
	for t in "$src"/tuners/*.c; do c_array "$t" '[a-z_]+_keys'; done
} | sort -u > "$T/cfgkeys"
check "the cfg reader takes at least 60 keys" ge "$(wc -l < "$T/cfgkeys")" 60
it_ic autosched.cfg.5 > "$T/cfgkeys.5"
check "every cfg key is an item of autosched.cfg(5)" \
    has "$T/cfgkeys" "$T/cfgkeys.5" "not in autosched.cfg.5"
check "every item of autosched.cfg(5) is a cfg key" \
    has "$T/cfgkeys.5" "$T/cfgkeys" "not a cfg key"
for s in $(c_array "$src/cfg/cfg.c" 'cfg_sections'); do
	check "section [$s] has its part of autosched.cfg(5)" \
	    grep -q -x "\.Sh \[$s\]" "$src/man/autosched.cfg.5"
done

# autoschedd.conf keys.
c_array "$src/daemon/conf.c" 'conf_keys' > "$T/confkeys"
check "autoschedd.conf takes at least 10 keys" ge "$(wc -l < "$T/confkeys")" 10
it_ic autoschedd.8 > "$T/confkeys.8"
check "every autoschedd.conf key is an item of autoschedd(8)" \
    has "$T/confkeys" "$T/confkeys.8" "not in autoschedd.8"
check "every item of autoschedd(8) is an autoschedd.conf key" \
    has "$T/confkeys.8" "$T/confkeys" "not an autoschedd.conf key"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
