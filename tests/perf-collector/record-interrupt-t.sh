#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-interrupt-t.sh - Ctrl-C (or SIGTERM) ends "varperf record"
# anywhere in auto mode without an error: in phase 1, between the phases
# (the program left running for phase 2 gets the signal, and phase 1's
# file says it ended), and in phase 2.  Each time: the exit status of the
# program's death by the signal, "interrupted after N s; the recording is
# complete up to there" exactly, N no more than the time it ran, no error
# or warning, a whole file that says it was interrupted (report header,
# JSON) and how the program ended, and counts that agree with what record
# said while and after it recorded.  Ctrl-C is typed on a pseudo-terminal
# (pty-run.py), as a user would: the program gets it too.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-basic"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

pty="python3 $top_srcdir/tests/perf-collector/pty-run.py"
screen="python3 $top_srcdir/tests/perf-collector/term-screen.py"
prog=$FIXTURES/fx-basic
hint='Ctrl-C stops and keeps the data'
said='interrupted after [0-9]+\.[0-9] s; the recording is complete up to there'

# j FILE EXPR: EXPR of the JSON report FILE (j: the document, t: its target,
# tot: its totals, s: its sampled part)
j() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t, tot, s = j["target"], j["totals"], j.get("sampled") or {}
v = eval(sys.argv[2])
print(" ".join(map(str, v)) if isinstance(v, tuple) else v)' "$@"
}

# now: seconds since the epoch, to the ms
now() {
	python3 -c 'import time; print("%.3f" % time.time())'
}

# secs_within LINE MIN T0 T1: whether the N of "interrupted after N s" in
# LINE is more than MIN and at most the T1 - T0 that record ran
secs_within() {
	echo "$1" | "$AWK" -v min="$2" -v t0="$3" -v t1="$4" \
		'{ n = $4 + 0; exit !(n > min && n <= t1 - t0 + 0.05) }'
}

# complaints FILE: its errors and warnings, but phase 2's that it covered
# little of the run or timed few calls (true of a short phase 2, and on a
# busy machine it begins late)
complaints() {
	grep '^varperf: \(error\|warning\): ' "$1" |
		grep -v '^varperf: warning: phase 2 \(probed [0-9.]* s of the program\|timed few calls\)'
}

# ---- phase 1, on a terminal ----
wait_unprobed
t0=$(now)
$pty --cols 200 --ctrl-c-after "phase 1/2: [0-9]+ samples" --times 2 --delay 0.2 p1.out -- \
	"$VARPERF" record --phase1-duration 20 -o p1.data -- "$prog" long
tap_is 130 $? "Ctrl-C in phase 1: exit 130 (the program's death by SIGINT)"
t1=$(now)
$screen p1.out >p1.screen
$screen --drawn p1.out | grep -v '^varperf: [a-z]' >p1.drawn
tap_like "$(sed -n 1p p1.drawn)" \
	"^varperf: 1 s, phase 1/2: [1-9][0-9]* samples, 0 lost; $hint\$" \
	"the status line says phase 1 and its samples"
line=$(grep '^varperf: interrupted' p1.screen)
tap_like "$line" "^varperf: $said\$" "... then: interrupted after N s"
# (the second status line came 2 s into the run)
tap_ok "$(secs_within "$line" 2 "$t0" "$t1"; echo $?)" "... N over 2 s and within what it ran"
tap_is "varperf: 'p1.data' holds the sampling run (phase 1) only: nothing was timed" \
	"$(grep "holds" p1.screen)" "... and what the file holds"
tap_is "" "$(complaints p1.screen)" "... no error or warning"
"$VARPERF" report -i p1.data --format json >p1.json 2>/dev/null
tap_is "True True True 2" "$(j p1.json 'j["interrupted"], t["interrupted"], tot["complete"], t["signal"]')" \
	"the file: interrupted, complete, the program killed by SIGINT"
last=$(sed -n 's/.* \([0-9]*\) samples, .*/\1/p' p1.drawn | tail -n 1)
tap_ok "$(j p1.json "s['samples'] >= $last >= 500" | grep -qx True; echo $?)" \
	"... with at least the $last samples the status line last counted"
"$VARPERF" report -i p1.data >p1.txt 2>/dev/null
tap_is "  interrupted:       by a signal to varperf; the recording is complete up to there" \
	"$(grep '^  interrupted:' p1.txt)" "the report's header says it was interrupted"
tap_like "$(grep '^  target:' p1.txt)" 'killed by signal 2 \(Interrupt\)$' \
	"... and how the program ended"

# ---- between the phases: SIGINT to varperf alone, while it plans ----
# (GDB holds it at the plan and delivers the signal: every time there)
if command -v gdb >/dev/null 2>&1; then
	wait_unprobed
	t0=$(now)
	gdb -q -batch -ex 'set pagination off' -ex 'break vp_plan_build' -ex run -ex delete \
		-ex 'signal SIGINT' -ex 'quit $_exitcode' \
		--args "$VARPERF" record -o b.data -- "$prog" long >b.gdb 2>b.err </dev/null
	tap_is 130 $? "SIGINT to varperf while it plans phase 2: exit 130 (it passed the signal on)"
	t1=$(now)
	line=$(grep '^varperf: interrupted' b.err)
	tap_like "$line" "^varperf: $said\$" "... interrupted after N s"
	tap_ok "$(secs_within "$line" 0 "$t0" "$t1"; echo $?)" "... N within what it ran"
	tap_is "varperf: 'b.data' holds the sampling run (phase 1) only: nothing was timed" \
		"$(grep "holds" b.err)" "... and what the file holds"
	tap_is "" "$(complaints b.err)" "... no error or warning"
	"$VARPERF" report -i b.data --format json >b.json 2>/dev/null
	tap_is "True True True True 2 0" \
		"$(j b.json 'j["interrupted"], t["interrupted"], tot["complete"], t["exited"], t["signal"], tot["events"]')" \
		"phase 1's file now says: interrupted, the program killed by SIGINT (no longer running)"
	tap_ok "$(j b.json "s['samples'] > 0" | grep -qx True; echo $?)" "... and keeps its samples"

	# Ctrl-C on the terminal ends the program too, maybe while phase 2
	# opens its probes, which then find no process: GDB stops record
	# there, ends the program with SIGINT and gives record its SIGINT
	cat >race.gdb <<-'GDB'
	set pagination off
	break vp_probes_open
	commands
	silent
	python
	import os, signal, time
	pid = int(gdb.parse_and_eval("pid"))
	if pid != gdb.selected_inferior().pid:
	    os.kill(pid, signal.SIGINT)
	    time.sleep(0.3)
	    gdb.execute("delete")
	    gdb.execute("signal SIGINT")
	else:
	    gdb.execute("continue")
	end
	end
	run
	quit $_exitcode
	GDB
	wait_unprobed
	gdb -q -batch -x race.gdb --args "$VARPERF" record -o r.data -- "$prog" long \
		>r.gdb 2>r.err </dev/null
	tap_is 130 $? "the program ended by Ctrl-C while phase 2's probes are opened: exit 130"
	tap_is "" "$(complaints r.err)" "... no error (such as 'process N has ended') or warning"
	tap_like "$(grep '^varperf: interrupted' r.err)" "^varperf: $said\$" "... interrupted after N s"
	"$VARPERF" report -i r.data --format json >r.json 2>/dev/null
	tap_is "True True 2" "$(j r.json 'j["interrupted"], tot["complete"], t["signal"]')" \
		"... phase 1's file: interrupted, complete, the program killed by SIGINT"
else
	tap_skip "no gdb to hold record between the phases" 11
fi

# ---- phase 2, on a terminal ----
wait_unprobed
t0=$(now)
$pty --cols 200 --ctrl-c-after "phase 2/2: [0-9]+ calls timed" --times 2 --delay 0.2 p2.out -- \
	"$VARPERF" record -o p2.data -- "$prog" long
tap_is 130 $? "Ctrl-C in phase 2: exit 130"
t1=$(now)
$screen p2.out >p2.screen
$screen --drawn p2.out | grep -v '^varperf: [a-z]' >p2.drawn
line=$(grep '^varperf: interrupted' p2.screen)
tap_like "$line" "^varperf: $said\$" "... interrupted after N s"
tap_ok "$(secs_within "$line" 2 "$t0" "$t1"; echo $?)" "... N over 2 s and within what it ran"
tap_is "" "$(complaints p2.screen)" "... no error or warning"
"$VARPERF" report -i p2.data --format json >p2.json 2>/dev/null
tap_is "True True True 2" "$(j p2.json 'j["interrupted"], t["interrupted"], tot["complete"], t["signal"]')" \
	"the file: interrupted, complete, the program killed by SIGINT"
events=$(sed -n 's/^varperf: recorded \([0-9]*\) events in .*/\1/p' p2.screen)
tap_is "$events" "$(j p2.json 'tot["events"]')" "the file has the events record said it wrote"
last=$(sed -n 's/.* \([0-9]*\) calls timed, .*/\1/p' p2.drawn | tail -n 1)
tap_ok "$(j p2.json "tot['invocations'] >= ${last:-0} > 1000" | grep -qx True; echo $?)" \
	"... and every call the status line last counted (${last:-none})"

# ---- phase 2, SIGTERM to varperf alone, off a terminal ----
wait_unprobed
"$VARPERF" record -o t.data -- "$prog" long >t.out 2>t.err &
vp=$!
for _i in $(seq 1 300); do
	grep -q '^varperf: probing ' t.err && break
	sleep 0.1
done
sleep 1
kill -TERM $vp
wait $vp
tap_is 143 $? "SIGTERM in phase 2: exit 143 (the program's death by the SIGTERM passed on)"
tap_like "$(grep '^varperf: interrupted' t.err)" "^varperf: $said\$" "... interrupted after N s"
tap_is "" "$(complaints t.err)" "... no error or warning"
"$VARPERF" report -i t.data --format json >t.json 2>/dev/null
tap_is "True True 15" "$(j t.json 'j["interrupted"], tot["complete"], t["signal"]')" \
	"the file: interrupted, complete, the program killed by SIGTERM"

tap_done
