#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# percentile-t.sh - the distributions in the GDB plugin, on a recording of
# fx-percentiles (2000 calls of heavy(), Pareto-distributed from 50 us to
# 5 ms; the spins repeat exactly from run to run): `varperf break heavy
# --percentile 99` takes the recorded p99 of `varperf report --format
# json` as its threshold and, in a second run of the fixture under GDB,
# stops at between 0.5 % and 2 % of the 2000 calls (a breakpoint command
# counts the stops and continues); `--chebyshev 99` is mean + 10 sigma of
# the same report; `info variance` prints the report's percentiles and
# path fraction at a stop in heavy(); `info variance histogram` counts
# every call once and marks the rows of the p50 and the p99; `info
# variance slowest` lists the 16 slowest calls, the slowest being the
# report's max.
#
# Environment (make check): top_srcdir, VARPERF, FIXTURES and
# VARPERF_GDB_PLUGIN, the directories where the built _varperf module is.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd gdb python3
require_file "$VARPERF" "$FIXTURES/fx-percentiles" "$top_srcdir/gdb-plugin/varperf-gdb.py"
if [ -z "$VARPERF_GDB_PLUGIN" ]; then
	tap_skip_all "VARPERF_GDB_PLUGIN is not set (the GDB plugin is not built)"
fi
if [ "$(gdb -batch -nx -ex 'python print(6 * 7)' 2>/dev/null)" != 42 ]; then
	tap_skip_all "gdb has no Python"
fi

FX=$FIXTURES/fx-percentiles
LOADER=$top_srcdir/gdb-plugin/varperf-gdb.py
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 26

G() {
	gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" "$@" 2>&1
}

"$VARPERF" record --mode=probe -q -f main -f bimodal -f heavy -o p.data -- "$FX" >truth 2>err
tap_is 0 $? "record fx-percentiles"
[ -s err ] && tap_diag "$(cat err)"
# the recording's uprobes go in the background after record exits; until
# then the kernel's probe at heavy()'s entry takes GDB's breakpoint trap
_w=0
while ps -eo stat=,comm= 2>/dev/null | "$AWK" '$1 !~ /^Z/ && $2 == "varperf-unprobe" { f = 1 }
	END { exit !f }' && [ $_w -lt 600 ]; do
	sleep 0.1
	_w=$((_w + 1))
done
"$VARPERF" report --format json -i p.data >p.json 2>/dev/null ||
	tap_bail "varperf report cannot read p.data"

# J EXPR - EXPR of heavy's node n and the document d of the JSON report
J() {
	python3 -c 'import json, sys
d = json.load(open("p.json"))
n = [n for n in d["nodes"] if n["function"] == "heavy"][0]
print(eval(sys.argv[1]))' "$1"
}
calls=$("$AWK" '$1 == "asked" && $2 == "heavy" { sub("count=", "", $3); print $3 }' truth)
# threshold OUTPUT - the threshold in ns that `varperf break heavy
# --percentile 99` says it set, with `set variance raw on`
threshold() {
	printf '%s\n' "$1" | sed -n "s/^varperf: breakpoint 1 stops at the return of heavy when a call \
(in any context) takes longer than \([0-9]*\) ns: the measured p99 of 2000 recorded calls.*/\1/p"
}
tap_is "2000 2000" "$calls $(J 'n["count"]')" "the fixture and the recording: 2000 calls of heavy"

# ---- varperf break --percentile 99: the measured p99, about 1 % of the calls ----
out=$(G "$FX" -ex 'varperf load p.data' -ex 'set variance raw on' \
	-ex 'varperf break heavy --percentile 99')
tap_is "$(J 'n["percentiles"]["p99"]')" "$(threshold "$out")" \
	"varperf break --percentile 99: the threshold is the report's percentiles.p99 of heavy"

# Counted on on-CPU time (varperf load --time=cpu; the BPF backend records
# it): the stops' own waits for a CPU, long on a busy machine, are not in
# it, and the fixture's spins are the same in both runs.
if "$VARPERF" report --time=cpu --format json -i p.data >p.json 2>err; then
	cat >count.gdb <<'EOF'
python
stops = 0
gdb.execute("run")
while gdb.selected_inferior().pid:
    stops += 1
    gdb.execute("continue")
print("stopped %d times" % stops)
end
EOF
	out=$(G "$FX" -ex 'varperf load --time=cpu p.data' -ex 'set variance raw on' \
		-ex 'varperf break heavy --percentile 99' -x count.gdb)
	thr=$(threshold "$out")
	tap_is "$(J 'n["percentiles"]["p99"]')" "$thr" \
		"varperf load --time=cpu: the threshold is report --time=cpu's percentiles.p99"
	stops=$(printf '%s\n' "$out" | sed -n 's/^stopped \([0-9]*\) times$/\1/p')
	tap_is "$stops" "$(printf '%s\n' "$out" | grep -c '^varperf: heavy took ')" \
		"every stop is one of the breakpoint's"
	tap_ok "$(test "${stops:-0}" -ge 10 && test "${stops:-0}" -le 40; echo $?)" \
		"it stops at between 0.5 % and 2 % of the 2000 calls (${stops:-no} stops)"
	n=$(printf '%s\n' "$out" |
		sed -n 's/^Breakpoint -[0-9]*, .* in heavy (ns=ns@entry=\([0-9]*\)).*/\1/p' |
		"$AWK" -v t="$thr" '$1 <= t { n++ } END { print n + 0 }')
	tap_diag "$n of the stops were calls that asked for less than $thr ns"
	tap_like "$out" '^varperf: call [0-9]+ since breakpoint 1 was set; on-CPU time, ' \
		"timed in on-CPU time, as the recording's durations"
	tap_like "$out" '^varperf: 99\.[0-9]% of the 2000 recorded calls were faster; ' \
		"a stop says how many recorded calls were faster"
	tap_like "$out" 'exited normally' "and the program runs to its end"
	out=$(G "$FX" -ex 'varperf load --time=offcpu p.data' \
		-ex 'varperf break heavy --percentile 99')
	want="^varperf break: the durations of 'p\.data' are off-CPU time \(--time=offcpu\), which"
	want="$want cannot be timed across GDB's stops: load it with --time=wall or --time=cpu, or"
	tap_like "$out" "$want give --slower-than\$" "off-CPU durations give no threshold: an error"
else
	tap_skip "p.data has no on-CPU times ($(cat err))" 7
fi
"$VARPERF" report --format json -i p.data >p.json 2>/dev/null ||
	tap_bail "varperf report cannot read p.data"

# --chebyshev: Chebyshev's bound for 99 %, mean + 10 sigma
out=$(G "$FX" -ex 'varperf load p.data' -ex 'set variance raw on' \
	-ex 'varperf break heavy --chebyshev 0.99')
seen=$(printf '%s\n' "$out" | sed -n \
	's/^varperf: breakpoint 1 .* longer than \([0-9.e+]*\) ns: mean + 10 sigma (Chebyshev b.*/\1/p')
tap_within "$(J 'repr(n["mean"] + 10 * n["stddev"])')" "${seen:-0}" 1e-9 \
	"varperf break --chebyshev 0.99: mean + 10 sigma of the report"
out=$(G "$FX" -ex 'varperf load p.data' -ex 'varperf break heavy --percentile 99 --chebyshev 99' \
	-ex 'varperf break heavy --percentile 100' -ex 'varperf break heavy --chebyshev x' \
	-ex 'varperf break heavy --percentile 99.99' -ex 'echo alive\n')
want="^varperf break: options '--percentile' and '--chebyshev' cannot be used together\$"
tap_like "$out" "$want" "--percentile and --chebyshev together: an error"
want="^varperf break: invalid percentile '100': must be between 0 and 1 \(0% and 100%\), both"
tap_like "$out" "$want excluded\$" "--percentile 100: an error"
want="^varperf break: invalid percentile 'x': expected a probability such as 0\.99 or 99%\$"
tap_like "$out" "$want" "--chebyshev x: an error"
want="^warning: with 2000 recorded calls, the p99\.99 is the slowest one: only a call slower"
tap_like "$out" "$want than every recorded one stops\$" \
	"a percentile that is the slowest call: a warning"
tap_like "$out" '^alive$' "GDB goes on"

# ---- info variance, histogram, slowest at a stop in heavy() ----
out=$(G "$FX" -ex 'varperf load p.data' -ex 'break heavy' -ex 'run' -ex 'set variance raw on' \
	-ex 'info variance' -ex 'info variance histogram' -ex 'info variance slowest' \
	-ex 'kill')
field() {
	printf '%s\n' "$out" | "$AWK" -v k="$1" '$1 == k { print $2; exit }'
}
want=$(J '" ".join(str(n["percentiles"][k]) for k in ("p50", "p90", "p99", "p99_9", "max"))')
tap_is "$want" "$(field p50) $(field p90) $(field p99) $(field p99.9) $(field max)" \
	"info variance prints the report's p50, p90, p99, p99.9 and max of heavy"
tap_like "$out" '^  path      runs in 1 of 1 calls of main, 1$' \
	"and how often its caller calls it"
hist=$(printf '%s\n' "$out" | sed -n '/^  2000 calls from /,/^  the 16 slowest/p' |
	grep -E '^ +[0-9.]+ [num]?s - ')
tap_is 2000 "$(printf '%s\n' "$hist" | "$AWK" '{ n += $6 } END { print n }')" \
	"info variance histogram: its rows count the 2000 calls"
rows=$(printf '%s\n' "$hist" | wc -l)
tap_ok "$(test "$rows" -ge 10 && test "$rows" -le 24; echo $?)" "in at most 24 rows ($rows)"
p99=$(J 'n["percentiles"]["p99"]')
tap_is 1 "$(printf '%s\n' "$hist" | "$AWK" -v p="$p99" '
	/ p99$/ { n++; if ($1 <= p && p <= $4) ok++ }
	END { print (n == 1) ? ok + 0 : "rows marked p99: " n + 0 }')" \
	"one row is marked p99, and it holds the p99 ($p99 ns)"
slow=$(printf '%s\n' "$out" | sed -n '/^  the 16 slowest of 2000 calls, by start:$/,/^node /p' |
	grep -E '^ +[0-9]+ ns at ')
tap_is 16 "$(printf '%s\n' "$slow" | wc -l)" "info variance slowest lists 16 calls"
tap_is "$(J 'n["max"]')" "$(printf '%s\n' "$slow" | "$AWK" '$1 > m { m = $1 } END { print m }')" \
	"the slowest of them is the report's max"
out=$(G "$FX" -ex 'varperf load p.data' -ex 'info variance histogram main/bimodal' \
	-ex 'info variance histogram nosuch' -ex 'info variance slowest 0')
tap_like "$out" '^  main \[[^]]*\] → bimodal \[fx-percentiles\.c:[0-9]+\]$' \
	"info variance histogram CONTEXT: another context by name"
tap_like "$out" "^info variance histogram: 'nosuch' matches no recorded context\$" \
	"an unknown context: an error"
tap_like "$out" "^info variance slowest: no node 0 in 'p\.data' \(nodes are 1\.\.3\)\$" \
	"a node that does not exist: an error"
tap_done
