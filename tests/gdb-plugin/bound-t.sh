#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bound-t.sh - `info variance bound` in GDB: stopped in fx-regress's
# task(), with a recording of it loaded, the command prints the same
# model, MET and probability as `varperf bound task` (the same split and
# seed), and refuses a wrong alpha.  In on-CPU time, where fx-regress's
# model holds on a busy host too.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_file "$VARPERF" "$FIXTURES/fx-regress"
if [ -z "$VARPERF_GDB_PLUGIN" ]; then
	tap_skip_all "VARPERF_GDB_PLUGIN is not set (the GDB plugin is not built)"
fi
if [ "$(gdb -batch -nx -ex 'python print(6 * 7)' 2>/dev/null)" != 42 ]; then
	tap_skip_all "gdb has no Python"
fi
if ! "$VARPERF" version --build-options | grep -q '^gsl: on$'; then
	tap_skip_all "varperf was built without GSL"
fi

LOADER=$top_srcdir/gdb-plugin/varperf-gdb.py
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 6

"$VARPERF" record --mode=probe -q -f task -f child1 -f child2 -o r.data -- \
	"$FIXTURES/fx-regress" 100 >/dev/null 2>err
tap_is 0 $? "record fx-regress exits 0"
"$VARPERF" bound --wide task -i r.data --time=cpu >cli.txt 2>/dev/null
gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" -ex 'break task' -ex run \
	-ex 'varperf load --time=cpu r.data' -ex 'info variance bound' -ex 'info variance bound 2' \
	-ex kill "$FIXTURES/fx-regress" >gdb.txt 2>&1

grep '^MET ' cli.txt >cli.met
grep '^MET ' gdb.txt >gdb.met
tap_ok $? "info variance bound prints a MET"
tap_is "$(cat cli.met)" "$(cat gdb.met)" "the MET and its probability of varperf bound"
# "callee b- b+" per predictor
c=$(sed -n 's/^  calls(\([a-z0-9]*\)) *[^ ]* *\([^ ]* [mun]*s\) *\([^ ]* [mun]*s\) .*/\1 \2 \3/p' \
	cli.txt | sort)
g=$(sed -n 's/^  calls(\([a-z0-9]*\)) [^ ]* *\([^ ]* [mun]*s\) *\([^ ]* [mun]*s\) .*/\1 \2 \3/p' \
	gdb.txt | sort)
tap_is "child1 child2" "$(printf '%s\n' "$c" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')" \
	"varperf bound's model has both callees"
tap_is "$c" "$g" "info variance bound: the same b- and b+ per callee"
grep -q "^info variance bound: invalid alpha '2': must be in (0, 1)$" gdb.txt
tap_ok $? "a wrong alpha is refused"
