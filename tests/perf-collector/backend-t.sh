#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# backend-t.sh - the two probe backends.  Both record fx-threads exactly
# (every call of three threads) and say which one recorded; the BPF one
# (uprobe_multi links restricted to the target and the children it
# follows) leaves another process running the same binary alone, gives
# each call its off-CPU time (against fx-offcpu's own clocks), records as
# a user with CAP_BPF and CAP_PERFMON only, and, in auto mode, stops
# probing a function called 5 * 10^7 times (fx-hot) at once while
# still timing its parent.  Where the BPF backend cannot run here (an old
# kernel, no BTF) those tests skip and the fallback is what is tested;
# here it is also tested by taking away the right to load BPF programs.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-threads" "$FIXTURES/fx-offcpu" "$FIXTURES/fx-hot" \
	"$FIXTURES/fx-fork"

. "$top_srcdir/tests/lib/json-subr.sh"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# truth FUNC CTX FIELD: a field of the fixture's "truth" line in out.
truth() {
	"$AWK" -v f="$1" -v c="$2" -v k="$3" '$1 == "truth" && $2 == f && $3 == c {
		for (i = 4; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' out
}

# ---- options ----
"$VARPERF" record --backend=nope -- "$FIXTURES/fx-threads" >out 2>err
tap_is "129 varperf: error: invalid value 'nope' for '--backend': must be 'auto', 'bpf', 'perf' or 'user'" \
	"$? $(head -1 err)" "--backend with an unknown value: a usage error"
"$VARPERF" record --mode=sample --backend=bpf -- "$FIXTURES/fx-threads" >out 2>err
tap_is "129 varperf: error: --backend places probes: --mode=sample places none" \
	"$? $(head -1 err)" "--backend in sample mode: a usage error"

# ---- the choice: without the right to load BPF programs ----
# (CAP_PERFMON alone: auto falls back to perf and says why, which then
# needs CAP_SYS_ADMIN; --backend=bpf is an error that says why)
# (a varperf built without BPF says that instead, whatever the rights)
if "$VARPERF" version --build-options | grep -q '^bpf: on$'; then
	why_not="loading BPF programs is not permitted (it needs CAP_BPF and CAP_PERFMON, or root)"
else
	why_not="varperf was built without libbpf and clang's BPF target"
fi
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	np=$(mktemp -d "${TMPDIR:-/tmp}/varperf-np.XXXXXX") && chmod 777 "$np"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		--inh-caps=+perfmon --ambient-caps=+perfmon -- \
		"$VARPERF" record --mode=probe -o "$np/x.data" -- "$FIXTURES/fx-threads" >out 2>err
	tap_is "1 varperf: probing with perf_event uprobes: $why_not" \
		"$? $(head -1 err)" "CAP_PERFMON only, --backend=auto: perf, and why not BPF"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		--inh-caps=+perfmon --ambient-caps=+perfmon -- \
		"$VARPERF" record --mode=probe --backend=bpf -o "$np/x.data" -- "$FIXTURES/fx-threads" \
		>out 2>err
	tap_is "1 varperf: error: cannot probe with --backend=bpf: $why_not" \
		"$? $(cat err)" "CAP_PERFMON only, --backend=bpf: an error that says why"
	tap_is "" "$(ls "$np")" "... neither leaves a file"
	rm -rf "$np"
else
	tap_skip "no setpriv or no user nobody" 3
fi

# ---- both backends: exact counts, and the report names the backend ----
if "$VARPERF" record -q --mode=probe --backend=bpf -f work -o probe.data -- "$FIXTURES/fx-threads" \
	>/dev/null 2>err; then
	have_bpf=1
else
	have_bpf=
	tap_diag "no BPF backend here: $(cat err)"
	tap_like "$(cat err)" "^varperf: error: cannot probe with --backend=bpf: " \
		"--backend=bpf where it cannot work: an error that says why"
fi
for b in perf ${have_bpf:+bpf}; do
	wait_unprobed
	"$VARPERF" record -q --mode=probe --backend=$b -o $b.data -- "$FIXTURES/fx-threads" \
		>out 2>err
	tap_is 0 $? "--backend=$b records fx-threads"
	"$VARPERF" report -i $b.data --format json >$b.json 2>err
	tap_is "$b 5000 3 0 0" "$(j $b.json "'%s %d %d %d %d' % (j['backend'],
		sum(n['count'] for n in node('work')), j['totals']['threads'],
		j['totals']['unpaired'], j['totals']['lost'])")" \
		"--backend=$b: every call of work() in three threads, named in the JSON"
	"$VARPERF" report -i $b.data >$b.txt 2>&1
	case $b in
	bpf) want="BPF uprobe_multi" ;;
	perf) want="perf_event uprobes" ;;
	esac
	tap_like "$(cat $b.txt)" "^  probes: +$want" "... and in the text report's header"
done
[ -n "$have_bpf" ] || {
	tap_skip "no BPF backend here" 15
	tap_done
}

# ---- another process running the same binary is left alone ----
# Alone, fx-hot 1000 times its parent() calls; run while a recording
# probes hot() (20000 calls per parent() call) in another fx-hot, it must
# not be trapped: a probed hot() would make each parent() call 100 times
# longer.  Two CPUs, one of them busy with the recorded run: a generous
# factor 3.
"$FIXTURES/fx-hot" 1000 >out 2>/dev/null
alone=$(truth parent main mean_ns)
"$VARPERF" record -q --mode=probe --backend=bpf -f hot -f parent -o busy.data -- \
	"$FIXTURES/fx-hot" 30 >/dev/null 2>err &
vp=$!
sleep 0.5
"$FIXTURES/fx-hot" 1000 >out 2>/dev/null
wait $vp
tap_is 0 $? "a recording probes hot() in one fx-hot ..."
beside=$(truth parent main mean_ns)
tap_is True "$(python3 -c "print($beside < 3 * $alone)")" \
	"... another fx-hot runs at its own speed meanwhile ($beside ns a call, alone $alone)"
"$VARPERF" report -i busy.data --format json >busy.json 2>/dev/null
tap_is "0 1 600000 30" "$(j busy.json "'%d %d %d %d' % (j['totals']['foreign'],
	j['totals']['threads'], node('hot')[0]['count'], node('parent')[0]['count'])")" \
	"... and none of its calls reached the recording"

# ---- off-CPU time per call ----
"$VARPERF" record -q --mode=probe --backend=bpf -f work -o off.data -- "$FIXTURES/fx-offcpu" \
	>out 2>err
"$VARPERF" report -i off.data --time=wall --format json >off.json 2>/dev/null
# within 10% of the fixture's own mean, plus what the scheduler disturbed
off=$(truth work offcpu mean_ns)
on=$(truth work oncpu mean_ns)
dist=$(truth work wall disturbed_ns)
tap_is True "$(j off.json "abs(node('work')[0]['offcpu']['mean'] - $off) <= 0.1 * $off + 2 * $dist + 50000")" \
	"fx-offcpu: off-CPU time per call as the fixture measured ($off ns)"
tap_is True "$(j off.json "abs(node('work')[0]['mean'] - node('work')[0]['offcpu']['mean'] - $on) <= 0.1 * $on + 2 * $dist + 50000")" \
	"... and the rest on the CPU ($on ns)"
"$VARPERF" report -i off.data --time=cpu --format json >cpu.json 2>/dev/null
tap_is True "$(j cpu.json "abs(node('work')[0]['mean'] - $on) <= 0.1 * $on + 2 * $dist + 50000")" \
	"--time=cpu: the mean is the on-CPU time"

# ---- a user with CAP_BPF and CAP_PERFMON, not root ----
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	# (a directory of its own: the test's is root's alone)
	np=$(mktemp -d "${TMPDIR:-/tmp}/varperf-np.XXXXXX") && chmod 777 "$np"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		--inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon -- \
		"$VARPERF" record -q --mode=probe --backend=bpf -o "$np/x.data" -- \
		"$FIXTURES/fx-threads" >out 2>err
	st=$?
	[ -s err ] && tap_diag "$(cat err)"
	"$VARPERF" report -i "$np/x.data" --format json >np.json 2>/dev/null
	rm -rf "$np"
	tap_is "0 5000" "$st $(j np.json "sum(n['count'] for n in node('work'))")" \
		"a user with CAP_BPF and CAP_PERFMON records on the BPF backend"
else
	tap_skip "no setpriv or no user nobody"
fi

# ---- auto mode and a function too hot to probe ----
# (6000 rounds, some 1 s: at the default 0.44 s a busy host once left
# phase 2 no parent() call after the first 100 ms it leaves out)
"$FIXTURES/fx-hot" 6000 >out 2>/dev/null
# (in CPU time: a plain run and a recorded one meet the host in other
# moods, and a busy moment stretched the wall-clock mean 30 %)
plain_mean=$(truth parent main_cpu mean_ns)
t0=$(date +%s%N)
"$FIXTURES/fx-hot" 6000 >/dev/null 2>&1
plain=$(( $(date +%s%N) - t0 ))
t0=$(date +%s%N)
"$VARPERF" record --backend=bpf -o hot.data -- "$FIXTURES/fx-hot" 6000 >out 2>err </dev/null
st=$?
took=$(( $(date +%s%N) - t0 ))
tap_is 0 $st "auto mode records fx-hot"
tap_like "$(cat err)" "^varperf: warning: phase 2: stopped probing 'hot' after [0-9]+ calls in [0-9.]+ ms" \
	"... stops probing hot() within milliseconds"
# generous: varperf's own start (calibration) and a loaded 2-CPU machine
tap_is True "$(python3 -c "print($took < 4 * $plain + 2e9)")" \
	"... and the run takes $took ns (plain $plain ns)"
"$VARPERF" report -i hot.data --format json >hot.json 2>/dev/null
"$VARPERF" report -i hot.data --time=cpu --format json >hotc.json 2>/dev/null
tap_is True "$(j hotc.json "abs(node('parent')[0]['mean'] - $plain_mean) <= 0.15 * $plain_mean")" \
	"... parent's on-CPU mean as the fixture measures it unprobed ($plain_mean ns)"
# explain of parent names what the budget dropped, and how to time it
"$VARPERF" explain parent -i hot.data --format json >hotx.json 2>/dev/null
tap_is "['hot'] varperf record --mode=probe -f parent -f hot -- $FIXTURES/fx-hot 6000" \
	"$(j hotx.json "'%s %s' % (j['budget_dropped'], j['rerecord'])")" \
	"explain parent: hot()'s probes were dropped, and the command that times both"
"$VARPERF" explain --wide parent -i hot.data >hotx.txt 2>/dev/null
tap_is "not timed to the end: the overhead budget removed the probes of hot during the recording:
  varperf record --mode=probe -f parent -f hot -- $FIXTURES/fx-hot 6000" \
	"$(sed -n '/^not timed to the end/p; /^  varperf record/p' hotx.txt)" "... in its text too"
# what phase 2's probes cost, in the file, and the warning when over
"$VARPERF" report -i hot.data >/dev/null 2>rep.err
over=$(j hot.json "j['totals']['probe_overhead']['over_budget']")
if [ "$over" = True ]; then
	tap_like "$(cat err)" "^varperf: warning: phase 2: the probes cost about [0-9.]+% of the target's CPU time, over the 5% budget" \
		"... over its budget: record warns"
	tap_like "$(cat rep.err)" "phase 2's probes cost about [0-9.]+% of the program's CPU time, over the 5% budget" \
		"... and report repeats it"
else
	tap_like "$(cat err)" "^varperf: phase 2: the probes cost about [0-9.]+% of the target's CPU time \(5% budget\)$" \
		"... within its budget: record says what the probes cost"
	tap_unlike "$(cat rep.err)" "over the" "... and report does not warn"
fi
tap_unlike "$(cat err)" "recorded whole" "... and parent's calls were recorded"

# ---- the program ends before the watchdog's first look is applied ----
# (GDB holds varperf where it leaves out what hot()'s probes stretched
# until fx-hot has ended: then every call of parent() is left out, and
# record must say so, or the report's missing node would be a mystery;
# with no call timed at all, record fails)
if command -v gdb >/dev/null; then
	wait_unprobed
	HOLD_AT=discard_stretched gdb -q -batch -x "$top_srcdir/tests/perf-collector/hold-at.py" \
		--args "$VARPERF" record --backend=bpf -o held.data -- "$FIXTURES/fx-hot" 6000 \
		>out 2>err </dev/null
	tap_is "1 1" "$? $(grep -c "^varperf: error: nothing was timed: no call of the 3 functions probed was recorded in phase 2 " err)" \
		"fx-hot ended while varperf was held: nothing was timed, record says so and exits 1"
	tap_like "$(cat err)" "^varperf: warning: phase 2: none of the ([0-9]+ calls of 'parent'|calls of 'main' and 1 other function) was recorded whole: they came while costlier probes were on, and were left out with them, or were under way at the end; record a longer run, or use --mode=probe$" \
		"... warns that no call of parent() was recorded whole"
	"$VARPERF" report -i held.data --format json >held.json 2>/dev/null
	tap_is 0 "$(j held.json "len(node('parent'))")" "... which the report has no node of"
	"$VARPERF" report -i held.data >held.txt 2>/dev/null
	tap_is "2 0" "$(grep -c '^  (none: no call was timed, the recording holds samples only)$' held.txt) $(grep -c 'no significant node' held.txt)" \
		"... and whose patterns say no call was timed, not 'no significant node'"
else
	tap_skip "no gdb" 4
fi

tap_done
