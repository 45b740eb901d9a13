#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# attach-t.sh - varperf record -p: attach to fx-attach (two threads calling
# work() about 100 us each, folding the results into checksums) in sample,
# probe and combined mode, stop on --duration, on Ctrl-C and when the
# process exits, and check that the process runs on unharmed - the same
# checksums as a run nobody attached to - and that the data are complete.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-attach"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampled"]
print(eval(sys.argv[2]))' "$@"
}

CALLS=40000 # about 4 s per thread
"$FIXTURES/fx-attach" $CALLS >ref || tap_bail "fx-attach does not run"

# start_target - run fx-attach in the background, wait for "started".
start_target() {
	rm -f out
	"$FIXTURES/fx-attach" "${1:-$CALLS}" >out &
	pid=$!
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		grep -q started out 2>/dev/null && return 0
		sleep 0.1
	done
	tap_bail "fx-attach did not start"
}

# ---- sample mode, --duration ----
start_target
"$VARPERF" record --mode=sample -p $pid --duration 0.5 -o s.data >rec.out 2>err
tap_is 0 $? "sample mode: record -p exits 0"
tap_like "$(cat err)" "^varperf: detached from process $pid after 0\.[5-9] s; it keeps running$" \
	"... detaches after --duration and says so"
tap_ok "$(kill -0 $pid 2>/dev/null; echo $?)" "... and the process still runs"
wait $pid
tap_is 0 $? "... and exits 0 in the end"
tap_diff "... with the same checksums as unattached" ref out
"$VARPERF" report -i s.data --format json >s.json 2>err
tap_is "True True True" "$(q s.json "'%s %s %s' % (s['samples'] >= 400, s['broken'] <= s['samples'] // 50,
	any(n['function'] == 'work' for n in s['nodes']))")" \
	"... its samples: about 1000 in 0.5 s, unwound, with work() in them"
"$VARPERF" report -i s.data >s.txt 2>&1
tap_like "$(cat s.txt)" "attached to a running process, which kept running" \
	"... and the report says the process kept running"

# ---- probe mode, Ctrl-C ----
start_target
"$VARPERF" record --mode=probe -f work -p $pid -o p.data >rec.out 2>err &
vp=$!
sleep 1.5
kill -INT $vp
wait $vp
tap_is 0 $? "probe mode: Ctrl-C to varperf ends the recording with status 0"
tap_ok "$(kill -0 $pid 2>/dev/null; echo $?)" "... and the process still runs (Ctrl-C is not passed on)"
wait $pid
tap_is 0 $? "... and exits 0 in the end"
tap_diff "... with the same checksums: return probes pending at detach did no harm" ref out
"$VARPERF" report --raw -i p.data --format json >p.json 2>err
tap_is True "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
w = [n for n in j["nodes"] if n["function"] == "work"]
print(sum(n["count"] for n in w) > 1000 and all(100000 <= n["mean"] < 400000 for n in w))' p.json)" \
	"... work(): over 1000 calls of about 100 us"

# ---- combined mode, the process exits while attached ----
# (1.5 s: calibrating the probes' cost and attaching take a while)
start_target 15000
"$VARPERF" record --mode=combined -f work -p $pid -o c.data >rec.out 2>err
tap_is 0 $? "combined mode: the process exiting ends the recording with status 0"
tap_like "$(cat err)" "^varperf: process $pid exited after [0-9.]+ s of recording$" \
	"... and says so"
wait $pid
"$FIXTURES/fx-attach" 15000 >ref3
tap_diff "... the process's own output is complete" ref3 out
"$VARPERF" report -i c.data --format json >c.json 2>err
tap_is True "$(q c.json "(j['totals']['complete'] and s['samples'] > 100 and
	s['broken'] <= s['samples'] // 20)")" \
	"... the file is complete and the stacks repaired around the return probes"

# ---- errors ----
"$VARPERF" record --mode=sample -p $pid -o x.data >out 2>err
tap_is "varperf: error: cannot attach to process $pid: no such process" "$(cat err)" \
	"a process that is gone: no such process"
"$VARPERF" record --mode=sample -p $$ --duration 0.2 -o self.data >out 2>err
tap_is 0 $? "attaching to an idle shell works (nothing to sample is no error)"

tap_done
