#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bound-files-t.sh - `info variance bound` and Recording.bound() on a
# committed recording of fx-open killed inside main, no recording and no
# root: main and loop have no completed call, which once crashed GDB
# itself (the regression shuffled an empty array); now both say "0
# paired invocations: too few", GDB goes on, and step, a leaf, gets its
# model with the MET varperf bound prints.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF" "$FIXTURES/fx-open"
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
cp "$top_srcdir/tests/fuzz/corpus/bound-zero-paired-fxopen.data" open.data ||
	tap_bail "cannot copy the data file"
export VARPERF_GDB_PLUGIN

tap_plan 7

too_few="0 paired invocations: too few for a model (the training set needs more than 5)"

# stopped in main, whose recorded calls never completed
timeout 120 gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" \
	-ex 'varperf load open.data' -ex 'break main' -ex run -ex 'info variance bound' \
	-ex 'python print("gdb goes on")' -ex kill "$FIXTURES/fx-open" >gdb.txt 2>&1
tap_is 0 $? "gdb exits 0 (no crash)"
tap_is "info variance bound: $too_few" "$(grep '^info variance bound:' gdb.txt)" \
	"info variance bound in main: too few"
tap_is "gdb goes on" "$(grep '^gdb goes on$' gdb.txt)" "gdb runs the next command"

# Recording.bound() of every node
cat >bound.py <<'PY'
import varperf
r = varperf.load("open.data")
for n in range(1, r.nnodes):
    name = r.func(r.node(n)["func"])["name"]
    try:
        m = r.bound(n)
        print("bound %s: %d invocations, %d trained" % (name, m["invocations"], m["train"]))
    except varperf.Error as e:
        print("bound %s: %s" % (name, e.strerror))
PY
timeout 120 gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" \
	-ex 'source bound.py' -ex 'python print("gdb goes on")' >py.txt 2>&1
tap_is 0 $? "gdb exits 0 after Recording.bound() of every node"
tap_is "bound main: $too_few
bound loop: $too_few
bound step: 200 invocations, 100 trained" "$(grep '^bound ' py.txt)" \
	"Recording.bound(): main and loop too few, step's model"
tap_is "gdb goes on" "$(grep '^gdb goes on$' py.txt)" "gdb runs the next command"
"$VARPERF" bound -i open.data main >/dev/null 2>err
tap_is 1 $? "varperf bound main: exit 1 (the same refusal)"

tap_done
