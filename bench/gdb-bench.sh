#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# gdb-bench.sh - how fast the GDB plugin answers on a big recording:
# gen-tree writes a recording of itself with 111,113 calling contexts
# (depth 5, fanout 10), GDB stops "gen-tree run" deep in that tree, and
# the plugin's commands are timed inside GDB: a stack the recording has
# (exact match) and one it does not (depth 6: nearest match over every
# context of the innermost function).  The goal: `info variance` in under
# 50 ms.  Prints one line per figure; exits 1 when the goal is missed.
#
# Environment: GEN_TREE (the built bench/gen-tree), top_srcdir,
# VARPERF_GDB_PLUGIN (where the built _varperf module is), GDB (default
# gdb), BENCH_REPEAT (default 20).
set -eu
: "${GDB:=gdb}"
: "${BENCH_REPEAT:=20}"
: "${BENCH_DIR:=${TMPDIR:-/tmp}}"
work=$(mktemp -d "$BENCH_DIR/varperf-gdb-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

"$GEN_TREE" write "$work/tree.data" 5

cat >"$work/bench.py" <<'PY'
import time
import gdb

def ms(cmd, n):
    """Median and worst of @n runs of GDB command @cmd, in ms."""
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        gdb.execute(cmd, to_string=True)
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[-1]

def report(name, cmd):
    """The first run after a stop includes GDB's own unwinding of the
    stack (what `backtrace` pays first too); then the median of REPEAT."""
    first = ms(cmd, 1)[0]
    med, worst = ms(cmd, REPEAT)
    print("RESULT %s first %.1f median %.1f max %.1f ms" % (name, first, med, worst))
    return max(first, worst)

def stop(args):
    gdb.execute("run " + args, to_string=True)
    gdb.execute("up", to_string=True)

t = time.perf_counter()
gdb.execute("varperf load " + TREE, to_string=True)
print("RESULT load %.0f ms" % ((time.perf_counter() - t) * 1e3))
rec = __import__("varperf.gdb").gdb.get_session().rec
print("RESULT nodes %d" % (rec.nnodes - 1))

stop("run 5 55555")
print("RESULT backtrace first %.1f ms (GDB alone, for comparison)" % ms("backtrace", 1)[0])
stop("run 5 55555")
worst = [report("info-variance-exact", "info variance")]
head = gdb.execute("info variance", to_string=True).splitlines()[0]
print("RESULT exact-context %s" % head)
report("info-variance-frame-3", "info variance frame 3")
report("info-variance-patterns", "info variance patterns")

# depth 6: the recording (depth 5) has no such context
stop("run 6 55555")
worst.append(report("info-variance-nearest", "info variance"))
head = gdb.execute("info variance", to_string=True).splitlines()[0]
print("RESULT nearest-context %s" % head)
print("RESULT worst %.1f ms" % max(worst))
PY

"$GDB" -batch -nx -iex 'set debuginfod enabled off' \
	-x "$top_srcdir/gdb-plugin/varperf-gdb.py" -ex 'break stop_here' \
	-ex "python REPEAT = $BENCH_REPEAT" -ex "python TREE = '$work/tree.data'" \
	-ex "source $work/bench.py" "$GEN_TREE" >"$work/out" 2>&1 || true
if ! grep -q '^RESULT worst' "$work/out"; then
	echo "gdb-bench: the benchmark did not run:"
	cat "$work/out"
	exit 1
fi
sed -n 's/^RESULT //p' "$work/out"
worst=$(sed -n 's/^RESULT worst \([0-9.]*\) ms/\1/p' "$work/out")
if awk -v w="$worst" 'BEGIN { exit !(w < 50) }'; then
	echo "info variance: every run under 50 ms (worst $worst ms)"
else
	echo "info variance: slower than 50 ms (worst $worst ms)"
	exit 1
fi
