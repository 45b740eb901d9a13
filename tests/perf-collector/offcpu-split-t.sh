#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# offcpu-split-t.sh - off-CPU time split into preempted and blocked, per
# call.  fx-blocked, recorded beside two programs that keep both CPUs
# busy, measures its own parts: the time nap() slept (blocked) and then
# waited for a CPU, crunch()'s on-CPU time.  The BPF backend's blocked
# and preempted means must agree with them, nap's waits must be the
# syscalls it slept in, and with preemption most of the variance the
# default report is in own time (wall clock less preemption), where
# crunch's mean is its on-CPU time; --time=wall, blocked and preempted
# give each part alone.  A version-4 file still reads, and says why it
# has no blocked time base.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-blocked"

. "$top_srcdir/tests/lib/json-subr.sh"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
# the default time base is what is tested here (test-subr.sh sets wall)
unset VARPERF_TIME

# truth FUNC CTX FIELD: a field of the fixture's "truth" line in out.
truth() {
	"$AWK" -v f="$1" -v c="$2" -v k="$3" '$1 == "truth" && $2 == f && $3 == c {
		for (i = 4; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' out
}

# ---- an old file: read, without a split ----
old=$top_srcdir/tests/fuzz/corpus/compare-self-unreliable-fxthreads.data
"$VARPERF" report -i "$old" --format json >old.json 2>err
tap_is "0 wall False False" "$(j old.json "'0 %s %s %s' % (j['time'], j['time_default'],
	any('preempted' in (n.get('offcpu') or {}) for n in j['nodes']))")" \
	"a version-4 file with off-CPU times: read in wall-clock time, not split"
"$VARPERF" report -i "$old" --time=blocked >out 2>err
tap_is "1 varperf: error: '$old': its off-CPU times are not split into blocked and preempted (recorded before format version 5): --time=blocked cannot be used" \
	"$? $(cat err)" "... --time=blocked on it: an error that says why"
"$VARPERF" report -i "$old" --time=asleep >out 2>err
tap_is "129 varperf: error: invalid value 'asleep' for '--time': must be 'wall', 'cpu', 'offcpu', 'blocked', 'preempted' or 'own'" \
	"$? $(cat err)" "--time with an unknown value: a usage error"

if ! "$VARPERF" record -q --mode=probe --backend=bpf -f nap -o probe.data \
	-- "$FIXTURES/fx-blocked" 4 >/dev/null 2>err; then
	tap_diag "no BPF backend here: $(cat err)"
	tap_skip "no BPF backend" 22
	tap_done
fi

# ---- beside two CPU hogs ----
hogs=
for i in 1 2; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
trap 'kill $hogs 2>/dev/null' EXIT
wait_unprobed
"$VARPERF" record -q --mode=probe --backend=bpf -f step -f nap -f crunch -o split.data \
	-- "$FIXTURES/fx-blocked" >out 2>err
rc=$?
kill $hogs 2>/dev/null
trap - EXIT
tap_is 0 "$rc" "fx-blocked recorded beside two CPU hogs"
[ $rc = 0 ] || tap_diag "$(cat err)"
"$VARPERF" report -i split.data --format json >own.json 2>/dev/null
"$VARPERF" report -i split.data --time=wall --format json >wall.json 2>/dev/null

on=$(truth crunch oncpu mean_ns)
cw=$(truth crunch wall mean_ns)
tap_is True "$(python3 -c "print($cw > 1.3 * $on)")" \
	"the hogs preempted crunch (wall clock $cw ns a call, on the CPU $on ns)"

# blocked within 15 % of what the fixture measured; preempted the rest
nb=$(truth nap blocked mean_ns)
np=$(truth nap preempted mean_ns)
tap_is True "$(j wall.json "abs(node('nap')[0]['offcpu']['blocked']['mean'] - $nb) <= 0.15 * $nb")" \
	"nap: blocked $(j wall.json "round(node('nap')[0]['offcpu']['blocked']['mean'])") ns a call, the fixture's $nb ns (within 15 %)"
tap_is True "$(j wall.json "abs(node('nap')[0]['offcpu']['preempted']['mean'] - $np) <= 0.15 * ($nb + $np) + 20000")" \
	"nap: preempted $(j wall.json "round(node('nap')[0]['offcpu']['preempted']['mean'])") ns a call, the fixture's $np ns"
sb=$(truth step blocked mean_ns)
sp=$(truth step preempted mean_ns)
tap_is True "$(j wall.json "abs(node('step')[0]['offcpu']['blocked']['mean'] - $sb) <= 0.15 * $sb")" \
	"step: blocked $(j wall.json "round(node('step')[0]['offcpu']['blocked']['mean'])") ns a call, the fixture's $sb ns"
tap_is True "$(j wall.json "abs(node('step')[0]['offcpu']['preempted']['mean'] - $sp) <= 0.15 * $sp + 20000")" \
	"step: preempted $(j wall.json "round(node('step')[0]['offcpu']['preempted']['mean'])") ns a call, the fixture's $sp ns"
tap_is True "$(j wall.json "(node('crunch')[0]['offcpu']['blocked']['mean'] == 0 and
	node('crunch')[0]['offcpu']['preempted']['share'] > 0.9)")" \
	"crunch: never blocked; preemption makes its variance"
# shares of the variance add up to the off-CPU share
tap_is True "$(j wall.json "all(abs(n['offcpu']['blocked']['share'] + n['offcpu']['preempted']['share']
	- n['offcpu']['variance_share']) < 1e-9 for n in j['nodes'])")" \
	"each node's blocked and preempted shares add up to its off-CPU share"

# the waits: 25 naps in nanosleep, 25 in a read of the pipe (a read
# finds its answer there already when the thread was preempted long enough)
tap_is True "$(j wall.json "([(w['reason'], w['count']) for w in node('nap')[0]['offcpu']['waits']
	if w['reason'] == 'clock_nanosleep'] == [('clock_nanosleep', 25)] and
	0 < sum(w['count'] for w in node('nap')[0]['offcpu']['waits'] if w['reason'] == 'read') <= 25)")" \
	"nap's waits: clock_nanosleep 25 times, read on the pipe"
tap_is True "$(j wall.json "(node('step')[0]['offcpu']['waits'] == node('nap')[0]['offcpu']['waits']
	and node('crunch')[0]['offcpu']['waits'] == [])")" \
	"step waits as nap, its callee; crunch never"

# ---- the default: own time, said ----
tap_is "own True" "$(j own.json "'%s %s' % (j['time'], j['time_default'])")" \
	"preemption makes the variance: the default is own time"
tap_is True "$(j own.json "j['preempted_share'] >= 0.5")" \
	"... as preemption made $(j own.json "round(100 * j['preempted_share'])") % of it"
tap_is True "$(j own.json "abs(node('crunch')[0]['mean'] - $on) <= 0.1 * $on")" \
	"own time: crunch's mean $(j own.json "round(node('crunch')[0]['mean'])") ns, its on-CPU time $on ns (within 10 %)"
tap_is True "$(j own.json "abs(node('nap')[0]['mean'] - $nb) <= 0.15 * $nb + 20000")" \
	"own time: nap's mean is its blocked time"
"$VARPERF" report -i split.data >own.txt 2>/dev/null
# (the report folds it at 100 columns: its continuation lines indented)
tap_like "$("$AWK" '/^note: preemption/ { l = $0; on = 1; next }
	on && /^    / { sub(/^ +/, ""); l = l " " $0; next } { on = 0 } END { print l }' own.txt)" \
	"^note: preemption \(the machine taking the CPU away\) made [0-9]+% of the high-variance nodes' wall-clock variance: the durations below are own time, wall clock less preemption; --time=wall for plain wall-clock time$" \
	"the text report says so at the top, and how to get wall-clock time"
tap_like "$(grep -A1 '^  [* ] nap' own.txt | tail -1)" "^      waits: (read|clock_nanosleep) " \
	"... and lists nap's waits"
"$VARPERF" explain -i split.data crunch >/dev/null 2>err
tap_like "$(grep 'note:' err)" "^varperf: note: '.*split.data': preemption .* analysing own time, wall clock less preemption; --time=wall for plain wall-clock time$" \
	"explain follows the same rule and says so"

# ---- each part alone ----
tap_is "wall False" "$(j wall.json "'%s %s' % (j['time'], j['time_default'])")" \
	"--time=wall: wall-clock time, as asked"
"$VARPERF" report -i split.data --time=blocked --format json >blocked.json 2>/dev/null
tap_is True "$(j blocked.json "(abs(node('nap')[0]['mean'] - $nb) <= 0.15 * $nb and
	node('crunch')[0]['mean'] == 0)")" "--time=blocked: the blocked time alone"
"$VARPERF" report -i split.data --time=preempted --format json >pre.json 2>/dev/null
tap_is True "$(python3 -c "import json
w = json.load(open('wall.json')); p = json.load(open('pre.json'))
f = lambda j: [n for n in j['nodes'] if n['function'] == 'crunch'][0]
print(abs(f(p)['mean'] - f(w)['offcpu']['preempted']['mean']) <= 0.01 * f(w)['offcpu']['preempted']['mean'] + 1000)")" \
	"--time=preempted: the preempted time alone"

# ---- VARPERF_TIME: another default ----
VARPERF_TIME=wall "$VARPERF" report -i split.data --format json >env.json 2>/dev/null
tap_is "wall False" "$(j env.json "'%s %s' % (j['time'], j['time_default'])")" \
	"VARPERF_TIME=wall: wall-clock time by default"
VARPERF_TIME=asleep "$VARPERF" report -i split.data >out 2>err
tap_is "129 varperf: error: invalid value 'asleep' for VARPERF_TIME: must be 'wall', 'cpu', 'offcpu', 'blocked', 'preempted' or 'own'" \
	"$? $(cat err)" "VARPERF_TIME with an unknown value: an error that names it"

tap_done
