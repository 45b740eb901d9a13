#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# auto-once-t.sh - auto mode runs the program once unless --rerun: a
# program that ends before phase 2 could probe it (fx-once appends a line
# to a file at its start, as one writing a log or a database would) is
# not run again behind the user's back.  Record says that nothing was
# timed, exits non-zero, keeps the sampled profile, and gives the command
# that times the plan's functions over a whole run - which is checked to
# work, with the fixture's own count of calls.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$DEMO" "$FIXTURES/fx-once"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 17

# q JSON EXPR: EXPR in Python with j the report
q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
def node(f):
    return [n for n in j["nodes"] if n["function"] == f]
print(eval(sys.argv[2]))' "$@"
}

# ---- a program shorter than phase 1: one run, nothing timed ----
# (100 ms of CPU time: fewer samples than phase 1 waits for, so it always
# ends within phase 1, however busy the host)
wait_unprobed
"$VARPERF" record -o once.data -- "$FIXTURES/fx-once" log 100 >out 2>err </dev/null
tap_is "1 1" "$? $(wc -l <log)" "a program shorter than phase 1: record exits 1, and it ran once"
tap_like "$(cat err)" "^varperf: warning: the program ended within phase 1: 'once\.data' holds the sampling run \(phase 1\) only$" \
	"... says what the file holds"
tap_like "$(cat err)" "^varperf: error: nothing was timed: '.*fx-once' ended within phase 1, after [0-9.]+ s, and runs once unless --rerun is given$" \
	"... and that nothing was timed, naming --rerun"
cmd=$(sed -n 's/^varperf: to time the [0-9]* functions\{0,1\} phase 2 would probe, over a whole run: //p' err)
tap_like "$cmd" "^varperf record --mode=probe( -f [a-z_]+)* -f step( -f [a-z_]+)* -o once\.data -- .*fx-once log 100$" \
	"... gives the command that probes the plan's functions, step() among them"
tap_like "$(cat err)" "^varperf: or probe sooner with --phase1-duration [0-9.]+, or let record run the program again with --rerun \(if running it twice does no harm\)$" \
	"... and the options that would time it"
"$VARPERF" report -i once.data --format json >once.json 2>/dev/null
tap_is "0 2 True" "$? $(q once.json "'%d %s' % (j['mode'], j['sampled']['samples'] > 0)")" \
	"... the file is the sampled profile, reportable"
"$VARPERF" report -i once.data >once.txt 2>&1
tap_unlike "$(cat once.txt)" "no significant node" "... whose report never says 'no significant node'"

# ---- the command it gave: every call of step() timed ----
wait_unprobed
set -- $cmd
shift
"$VARPERF" "$@" >out 2>err </dev/null
tap_is "0 2" "$? $(wc -l <log)" "the command given records the program (its second run, asked for)"
calls=$(sed -n 's/^fx-once: \([0-9]*\) step calls$/\1/p' out)
"$VARPERF" report -i once.data --format json >probe.json 2>/dev/null
tap_is "$calls" "$(q probe.json "sum(n['count'] for n in node('step'))")" \
	"... and times every call of step() the fixture counted ($calls)"

# ---- --rerun: the user allows a second run ----
wait_unprobed
rm -f log
"$VARPERF" record --rerun -o rerun.data -- "$FIXTURES/fx-once" log 100 >out 2>err </dev/null
tap_is "0 2" "$? $(wc -l <log)" "--rerun: record exits 0, the program ran twice"
tap_like "$(cat err)" "^varperf: '.*fx-once' ended within phase 1: running it again for phase 2$" \
	"... and says so"
calls=$(sed -n 's/^fx-once: \([0-9]*\) step calls$/\1/p' out | tail -n 1)
"$VARPERF" report -i rerun.data --format json >rerun.json 2>/dev/null
tap_is "False $calls" "$(q rerun.json "'%s %d' % (j['one_run'], sum(n['count'] for n in node('step')))")" \
	"... phase 2 timed every call of step() in the second run ($calls)"

"$VARPERF" record --rerun --mode=probe -f step -o x.data -- "$FIXTURES/fx-once" log 10 >out 2>err
tap_is "129 varperf: error: --rerun is for --mode=auto with a program to run" "$? $(cat err)" \
	"--rerun with --mode=probe: a usage error"

# ---- the program ends while phase 2 is planned: not run again ----
# (GDB holds varperf where it plans phase 2 until the demo has ended)
if command -v gdb >/dev/null; then
	wait_unprobed
	HOLD_AT=select_planned gdb -q -batch -x "$top_srcdir/tests/perf-collector/hold-at.py" \
		--args "$VARPERF" record -o planned.data -- "$DEMO" 400 >out 2>err </dev/null
	tap_is "1 1" "$? $(grep -c '^vp-demo: 400 frames' out)" \
		"the demo ended while phase 2 was planned: record exits 1, one run"
	tap_like "$(cat err)" "^varperf: error: nothing was timed: '.*vp-demo' ended while phase 2 was planned, after [0-9.]+ s, and runs once unless --rerun is given$" \
		"... says that nothing was timed"
	cmd=$(sed -n 's/^varperf: to time the [0-9]* functions\{0,1\} phase 2 would probe, over a whole run: //p' err)
	tap_like "$cmd" "^varperf record --mode=probe( -f [a-z_]+)* -f frame( -f [a-z_]+)* -o planned\.data -- .*vp-demo 400$" \
		"... and gives the plan's functions to probe, frame() among them"
	wait_unprobed
	set -- $cmd
	shift
	"$VARPERF" "$@" >out 2>err </dev/null
	"$VARPERF" report -i planned.data --format json >planned.json 2>/dev/null
	tap_is 400 "$(q planned.json "sum(n['count'] for n in node('frame'))")" \
		"... which times all 400 frames"
else
	tap_skip "no gdb" 4
fi

tap_done
