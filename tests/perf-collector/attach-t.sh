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

# cpu_ms PID - the CPU time all of PID's threads have run so far, in ms
# (the scheduler's own count: /proc/PID/task/*/schedstat, first field)
cpu_ms() {
	cat /proc/$1/task/*/schedstat 2>/dev/null | "$AWK" '{ s += $1 } END { printf "%.0f\n", s / 1e6 }'
}

# at_least CAP SHARE - what a count must reach: CAP, what a quiet machine
# gives, or SHARE if less (what the target ran on a busy one allows)
at_least() {
	"$AWK" -v c="$1" -v s="$2" 'BEGIN { printf "%d\n", s < c ? s : c }'
}

# the emulated probe cost the recording calibrated, in us
cost_us() {
	python3 -c 'import json, sys
print([c["full_ns"] for c in json.load(open(sys.argv[1]))["probe_costs"]
       if c["class"] == "emulated"][0] / 1000)' "$1" 2>/dev/null || echo 0
}

CALLS=40000 # about 4 s per thread
"$FIXTURES/fx-attach" $CALLS >ref || tap_bail "fx-attach does not run"

# start_target - run fx-attach in the background, wait for "started".
# (Only once the probes of the run before are gone: a sampling run waits
# for them, and would start after the process has run out its calls.)
start_target() {
	wait_unprobed
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
c0=$(cpu_ms $pid)
"$VARPERF" record --mode=sample -p $pid --duration 0.5 -o s.data >rec.out 2>err
st=$?
ran=$(($(cpu_ms $pid) - c0))
tap_is 0 $st "sample mode: record -p exits 0"
tap_like "$(cat err)" "^varperf: detached from process $pid after 0\.[5-9] s; it keeps running$" \
	"... detaches after --duration and says so"
tap_ok "$(kill -0 $pid 2>/dev/null; echo $?)" "... and the process still runs"
wait $pid
tap_is 0 $? "... and exits 0 in the end"
tap_diff "... with the same checksums as unattached" ref out
"$VARPERF" report -i s.data --format json >s.json 2>err
# cpu-clock at 1 kHz: a sample per ms each thread runs.  The two threads
# ran $ran ms while record ran, its own start and end included: half of
# that at least, and 400 where they had the CPUs to themselves.
want=$(at_least 400 $((ran / 2)))
tap_diag "the threads ran $ran ms while record ran: $want samples or more"
tap_is "True True True" "$(q s.json "'%s %s %s' % (s['samples'] >= $want, s['broken'] <= s['samples'] // 50,
	any(n['function'] == 'work' for n in s['nodes']))")" \
	"... its samples: about 1000 in 0.5 s (or what it ran), unwound, with work() in them"
"$VARPERF" report -i s.data >s.txt 2>&1
tap_like "$(cat s.txt)" "attached to a running process, which kept running" \
	"... and the report says the process kept running"

# ---- probe mode, Ctrl-C ----
start_target
"$VARPERF" record --mode=probe -f work -p $pid -o p.data >rec.out 2>err &
vp=$!
# the CPU time the threads run once the probes are placed (a busy
# machine can take most of 1.5 s to calibrate and place them)
for _i in $(seq 1 300); do
	grep -q '^varperf: probing ' err && break
	sleep 0.1
done
c0=$(cpu_ms $pid)
sleep 1.5
ran=$(($(cpu_ms $pid) - c0))
kill -INT $vp
wait $vp
st=$?
tap_is 0 $st "probe mode: Ctrl-C to varperf ends the recording with status 0"
tap_ok "$(kill -0 $pid 2>/dev/null; echo $?)" "... and the process still runs (Ctrl-C is not passed on)"
wait $pid
tap_is 0 $? "... and exits 0 in the end"
tap_diff "... with the same checksums: return probes pending at detach did no harm" ref out
"$VARPERF" report --raw -i p.data --format json >p.json 2>err
# A call spins 100 us on the wall clock, of which a busy machine may take
# some CPU time away, and its two probes cost what the calibration says:
# each ms the threads ran made 1000 / (100 + 2 x cost) calls or more.
# Half of them at least (the probes go in as varperf says so, and come
# out after Ctrl-C), 1000 where the CPUs were free.  Raw means: 100 us and more, and under 400 us
# plus the off-CPU time per call the recording saw (none on the perf
# backend, whose files have none).
cost=$(cost_us p.json)
want=$("$AWK" -v r="$ran" -v c="$cost" 'BEGIN { w = r * 1000 / (100 + 2 * c) / 2
	printf "%d\n", w < 1000 ? w : 1000 }')
"$VARPERF" report --raw --time=offcpu -i p.data --format json >p-off.json 2>/dev/null ||
	echo '{"nodes": []}' >p-off.json
tap_diag "the threads ran $ran ms with probes costing $cost us: $want calls or more"
tap_is True "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
off = {n["id"]: n["mean"] for n in json.load(open(sys.argv[2]))["nodes"]}
w = [n for n in j["nodes"] if n["function"] == "work"]
print(sum(n["count"] for n in w) >= int(sys.argv[3]) and
      all(100000 <= n["mean"] < 400000 + off.get(n["id"], 0) for n in w))' p.json p-off.json $want)" \
	"... work(): over 1000 calls (or what it ran) of about 100 us"

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
tap_is "True False None" "$(q c.json "'%s %s %s' % (j['target']['exited_while_attached'],
	j['target']['detached'], j['target']['exit_code'])")" \
	"... and says the process exited while attached, its status unknown"
"$VARPERF" report -i c.data 2>/dev/null | grep '^  target:' >c.txt
tap_is "  target:                       exited while varperf was attached (status unknown)" \
	"$(cat c.txt)" "... in the text report too"

# ---- auto mode: sample the process for a while, then probe it ----
# (the budget at its largest: where a probed call costs 7 us, not 2,
# work()'s probes take over 5 % of its 100 us and the watchdog would
# stop them; the budget is auto-t.sh's subject)
start_target
c0=$(cpu_ms $pid)
"$VARPERF" record --overhead 999% -p $pid --duration 3 -o a.data >rec.out 2>err
st=$?
ran=$(($(cpu_ms $pid) - c0))
tap_is 0 $st "auto mode: record -p exits 0"
tap_like "$(cat err)" "^varperf: phase 1 of 2: sampling process $pid \(.*fx-attach\) for 0\.8 s$" \
	"... samples first, a quarter of --duration"
tap_like "$(cat err)" "^varperf: phase 2 of 2: probing process $pid " "... then probes"
tap_like "$(cat err)" "^varperf:   work +[0-9.]+%" "... work() among what it probes"
wait $pid
tap_diff "... and the process runs on unharmed" ref out
"$VARPERF" report -i a.data --format json >a.json 2>/dev/null
# As above, with 0.8 s of the 3 sampled and the rest probed: half of what
# the threads' CPU time allows, or 300 samples and 1000 calls.
cost=$(cost_us a.json)
want_s=$("$AWK" -v r="$ran" 'BEGIN { w = r * 0.8 / 3 / 2; printf "%d\n", w < 300 ? w : 300 }')
want_c=$("$AWK" -v r="$ran" -v c="$cost" 'BEGIN { w = r * 2.2 / 3 * 1000 / (100 + 2 * c) / 2
	printf "%d\n", w < 1000 ? w : 1000 }')
tap_diag "the threads ran $ran ms with probes costing $cost us: $want_s samples, $want_c calls or more"
tap_is "3 True True True" "$(q a.json "'%d %s %s %s' % (j['mode'], s['samples'] >= $want_s,
	sum(n['count'] for n in j['nodes'] if n['function'] == 'work') >= $want_c,
	j['target']['detached'])")" \
	"... one file: mode auto, its samples, work() timed, detached"
"$VARPERF" report -i a.data 2>/dev/null >a.txt
tap_like "$(cat a.txt)" "^  sampled: +[0-9]+ samples .*\(phase 1: the process's first seconds\)$" \
	"... the report says phase 1 was the first part of the recording"
"$FIXTURES/fx-compensate" --idle 5 &
idle=$!
"$VARPERF" record -p $idle --duration 0.5 -o idle.data >out 2>err
tap_is "0 varperf: warning: --duration ended in phase 1: 'idle.data' holds the sampling run (phase 1) only" \
	"$? $(grep warning err)" \
	"auto mode on an idle process: phase 1 waits for samples, --duration ends it"
kill $idle
wait $idle 2>/dev/null
sleep 5 &
idle=$!
# (until the child has exec'd sleep: on a busy machine it may still be
# the shell that forked it)
for _i in $(seq 1 50); do
	case $(readlink /proc/$idle/exe 2>/dev/null) in
	*/sleep) break ;;
	esac
	sleep 0.1
done
"$VARPERF" record -p $idle --duration 0.2 -o stripped.data >out 2>err
st=$?
tap_like "$st $(grep warning err)" "^0 varperf: warning: no function symbols in '.*sleep' .*: sampling only$" \
	"auto mode on a stripped program: nothing to probe, it samples"
kill $idle
wait $idle 2>/dev/null
"$VARPERF" record --mode=probe --phase1-duration 1 -- "$FIXTURES/fx-attach" 10 >out 2>err
tap_is "129 varperf: error: --phase1-duration is for --mode=auto without --phase1" \
	"$? $(head -1 err)" "--phase1-duration in probe mode: a usage error"

# ---- errors ----
"$VARPERF" record --mode=sample -p $pid -o x.data >out 2>err
tap_is "varperf: error: cannot attach to process $pid: no such process" "$(cat err)" \
	"a process that is gone: no such process"
"$VARPERF" record --mode=sample -p $$ --duration 0.2 -o self.data >out 2>err
tap_is 0 $? "attaching to an idle shell works (nothing to sample is no error)"
# a zombie: sleep 0.3 exits, and its parent (exec'd to sleep 5) never
# reaps it.  (The child must outlive the exec: a shell reaps a child
# that is already gone before it runs its next command.)
sh -c 'sleep 0.3 & echo $! >zpid; exec sleep 5' &
zparent=$!
for _i in $(seq 1 50); do
	zpid=$(cat zpid 2>/dev/null)
	[ -n "$zpid" ] && [ "$(cut -d' ' -f3 "/proc/$zpid/stat" 2>/dev/null)" = Z ] && break
	sleep 0.1
done
"$VARPERF" record --mode=sample -p "$zpid" -o z.data >out 2>err
tap_is "1 varperf: error: cannot attach to process $zpid: it has exited (a zombie, waiting for its parent)" \
	"$? $(cat err)" "a zombie: it has exited"
kill $zparent 2>/dev/null
wait $zparent 2>/dev/null

tap_done
