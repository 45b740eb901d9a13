#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-durations-t.sh - durations reconstructed from samples against the
# ones fx-durations measures itself with the thread CPU clock: steady()
# spins 800 us and varied() 200 us to 2 ms, alternately.  At 10 kHz every
# invocation spans 2 to 20 samples: the report must count them (a sample
# missed or not unwound may merge two, rarely), and give means and
# CoVs close to the fixture's; at 1 kHz varied() spans about one sample
# and the report must not give it a duration at all.

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-durations"
if [ "$(id -u)" -ne 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 1 ]; then
	tap_skip_all "sampling needs root or kernel.perf_event_paranoid <= 1"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# node JSON FUNCTION FIELD - FIELD of the sampled node of FUNCTION under main
node() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["sampled"]
ids = {n["id"]: n for n in s["nodes"]}
n = [n for n in s["nodes"] if n["function"] == sys.argv[2] and n["parent"] is not None
     and ids[n["parent"]]["function"] == "main"][0]
v = n[sys.argv[3]]
print("null" if v is None else v)' "$@"
}

# truth FUNCTION FIELD - the fixture's own figure (calls, mean_ns, cov)
truth() {
	"$AWK" -v f="$1" -v k="$2" '$1 == "calls" && $2 == f {
		for (i = 4; i < NF; i += 2) if ($i == k) print $(i + 1)
		if (k == "calls") print $3 }' truth
}

ROUNDS=800
# (-e cpu-clock: where a hardware PMU exists the default samples cycles,
# which give no durations)
"$VARPERF" record -q --mode=sample -e cpu-clock -F 10000 -o d.data -- "$FIXTURES/fx-durations" $ROUNDS \
	>truth 2>err
tap_is 0 $? "sampling fx-durations at 10 kHz"
[ -s err ] && tap_diag "$(cat err)"
"$VARPERF" report -i d.data --format json >d.json 2>err
tap_is 0 $? "report --format json"
broken=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sampled"]["broken"])' \
	d.json)
# A call that no sample fell in (a late timer on a busy VM, a stack not
# unwound) merges its two neighbours: at most 1% of them, never more.
for f in steady varied; do
	n=$(node d.json $f spans)
	tap_ok "$([ "$n" -le "$ROUNDS" ] && [ "$n" -ge $((ROUNDS - broken - ROUNDS / 100)) ]
		echo $?)" "$f: $n spans for $ROUNDS calls ($broken stacks not unwound)"
	tap_within "$(truth $f mean_ns)" "$(node d.json $f cpu_per_span)" 0.03 \
		"$f: sampled mean within 3% of the fixture's CPU time per call"
done
tap_within "$(truth varied cov)" "$(node d.json varied sampled_cov)" 0.10 \
	"varied: sampled CoV within 10% of the fixture's"
# (a busy machine takes the CPU from a spin now and then, which varies its
# CPU time: the fixture sees that too)
tap_is ok "$(python3 -c 'import sys
s, t = float(sys.argv[1]), float(sys.argv[2])
print("ok" if s <= t + 0.05 else "%s > %s + 0.05" % (s, t))' \
	"$(node d.json steady sampled_cov)" "$(truth steady cov)")" \
	"steady: a sampled CoV within 0.05 of its own once whole periods' share is out"
# One period relative to the mean: 100 us in 800, where the timer keeps
# its period.  A busy machine's timer fires late, and the period a sample
# stands for is then what the fixture ran per sample: its CPU time (both
# functions' calls) over the samples.
quant=$(python3 -c 'import json, sys
cpu = 0
for line in open("truth"):
    w = line.split()
    if w[0] == "calls":
        cpu += int(w[2]) * float(w[4])
s = json.load(open(sys.argv[1]))["sampled"]["samples"]
steady = [float(l.split()[4]) for l in open("truth") if l.startswith("calls steady ")][0]
print("%.6g" % max(0.125, cpu / s / steady))' d.json)
tap_within "$quant" "$(node d.json steady quantisation)" 0.05 \
	"steady: its quantisation, one period in 8 (or what the samples were apart), is stated"
"$VARPERF" report -i d.data >d.txt 2>&1
"$VARPERF" report -i d.data --wide >w.txt 2>&1
# Spans are not invocations: in the default table their figures are
# marked "~" (sample-derived), never "P" (probed, exact); with --wide they
# have columns of their own, and the N, mean and CoV columns stay blank.
tap_like "$(grep -E '^ +varied \[' d.txt | head -1)" \
	'^ +varied \[[^]]*\] +[0-9.]+% \+- *[0-9.]+[ ~]( +[0-9.]+% \+- *[0-9.]+[ ~]| {15}) ~ +[0-9]+ +[0-9.]+ [mu]s +0\.[0-9]+$' \
	"varied: its spans, ~CPU/span and ~CoV marked sample-derived (~), not probed (P)"
cols() {
	"$AWK" '/^ +total .* N +mean +CoV +spans ~CPU\/span +~CoV +calling context/ {
		n = index($0, "     N      mean   CoV"); s = index($0, "spans ~CPU/span") }
	n && / varied \[/ { print "[" substr($0, n, s - n) "][" substr($0, s, 5) "]"; exit }' w.txt
}
tap_like "$(cols)" '^\[ +\]\[ *[0-9]+\]$' \
	"--wide: varied's N, mean and CoV blank, its span count under spans"
tap_is "absent" "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["sampled"]["nodes"]
print("present" if any("invocations" in n or "sampled_mean" in n for n in s) else "absent")' \
	d.json)" "json: sampled nodes have spans and cpu_per_span, no invocations or mean"

"$VARPERF" record -q --mode=sample -e cpu-clock -o k.data -- "$FIXTURES/fx-durations" 300 >/dev/null 2>err
"$VARPERF" report -i k.data --format json >k.json 2>err
tap_is "null null" "$(node k.json varied cpu_per_span) $(node k.json varied sampled_cov)" \
	"at 1 kHz varied spans about one sample: no duration is given"

tap_done
