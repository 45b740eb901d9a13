#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-shares-t.sh - sampling mode against known shares: fx-shares spends
# its CPU time in alpha(), beta() and gamma_() (part of it in the inlined
# gamma_inner()) and measures each share itself.  Over five recordings the
# report's 95% interval must hold the fixture's share in the large majority
# of cases (at least 17 of the 20; about 19 are expected), the inlined
# function must be a node of its own, no stack may be cut, and the sample
# arithmetic of Schneider's "Statistical Profiling: An Analysis" must come out as the paper's.

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-shares"
if [ "$(id -u)" -ne 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 1 ]; then
	tap_skip_all "sampling needs root or kernel.perf_event_paranoid <= 1"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# q JSON EXPR - print EXPR evaluated with j = the report, in Python.
q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampled"]
def fn(name):
    return [f for f in s["functions"] if f["function"] == name][0]
print(eval(sys.argv[2]))' "$@"
}

RUNS=5
inside=0
checked=0
run=0
# (-e cpu-clock: shares of time at a fixed 1 ms period, PMU or not)
while [ $run -lt $RUNS ]; do
	run=$((run + 1))
	"$VARPERF" record -q --mode=sample -e cpu-clock -o "s$run.data" -- "$FIXTURES/fx-shares" \
		>"truth$run" 2>"err$run"
	rc=$?
	"$VARPERF" report -i "s$run.data" --format json >"r$run.json" 2>>"err$run" ||
		rc=1
	if [ $rc -ne 0 ]; then
		tap_diag "$(cat "err$run")"
		continue
	fi
	for f in alpha beta gamma_ gamma_inner; do
		want=$("$AWK" -v f=$f '$1 == "share" && $2 == f { print $3 }' "truth$run")
		got=$(q "r$run.json" "'%s %s %s' % (fn('$f')['share'], fn('$f')['share_lo'], fn('$f')['share_hi'])")
		checked=$((checked + 1))
		if echo "$want $got" | "$AWK" '{ exit !($1 >= $3 && $1 <= $4) }'; then
			inside=$((inside + 1))
		else
			tap_diag "run $run: $f: fixture $want, sampled share [lo hi]: $got"
		fi
	done
done
tap_is 20 $checked "5 runs recorded and reported, 4 shares each"
tap_ok "$([ $inside -ge 17 ]; echo $?)" \
	"the fixture's share lies in the 95% interval in $inside of $checked cases"

R=r1.json
tap_is "True 1" "$(q $R "'%s %s' % (fn('gamma_inner')['inlined'], s['period'] // 1000000)")" \
	"gamma_inner is a node of its own, marked inlined; period 1 ms"
# A sample taken while the kernel faults in a stack page (ld.so at start)
# gets no copy, or one that stops at that page, whatever its size: under
# load one sample now and then (sample-errors-t.sh).  None truncated, 2%
# at most not unwound.
tap_is "0 True" "$(q $R "'%d %s' % (s['truncated'], s['broken'] <= s['samples'] // 50)")" \
	"every stack unwound to its outermost frame (but the odd one a page fault cut)"
tap_is yes "$(q $R "'yes' if s['samples'] >= 1000 else s['samples']")" \
	"at least 1000 samples (1 kHz for about 1.7 s)"
tap_is True "$(q $R "any(n['function'] == 'gamma_inner' and n['inlined'] and
	j['sampled']['nodes'][n['parent'] - 1]['function'] == 'gamma_' for n in s['nodes'])")" \
	"the inlined function hangs under the function it was inlined into"
tap_is True "$(q $R "any(n['function'].startswith('__vdso_clock_gettime') for n in s['nodes'])")" \
	"frames of the vDSO are unwound and named"
"$VARPERF" report -i s1.data >text 2>err
tap_like "$(cat text)" '^ +alpha \[fx-shares\.c:[0-9]+\] +[0-9.]+% \+- *[0-9.]+[ ~]' \
	"the text report gives alpha its call site, a share and its interval"
tap_like "$(cat text)" '^ +(\[[0-9]+\] )?__vdso_clock_gettime( \[[^]]*\])? +[0-9.]+% \+- *[0-9.]+[ ~] +[0-9.]+% \+- *[0-9.]+' \
	"... and a self share its interval too (alpha's time is spent in the vDSO)"
tap_like "$(cat err)" "sampled shares are wider than \+/-1% at 95% confidence" \
	"a warning says the default +/-1% needs more samples"
"$VARPERF" report -i s1.data --precision 10% >/dev/null 2>err
# (a sample not unwound, as above, has a warning of its own)
tap_is "" "$(grep -v 'samples could not be unwound to their outermost frame' err)" \
	"no warning when +/-10% is enough"

# Schneider, "Analysis": N = Z^2 p q / e^2; 1 % to +/-0.1 % at 95 % takes 38032 samples
# with the paper's Z = 1.96, 38031 with Z = 1.959964.
out=$("$VARPERF" record --precision 0.5% --confidence 99%)
tap_is 0 $? "--precision alone exits 0"
tap_like "$out" "any share \(p = 50%\): 66349 samples, 66.3 s of CPU time at 1000 Hz" \
	"worst case at 99%, +/-0.5%: 66349 samples (2.5758^2 / 4 / 0.005^2)"
out=$("$VARPERF" record --precision 0.1% -F 500)
tap_like "$out" "a 1% share: +38031 samples, 76.1 s" \
	"a 1% share to +/-0.1% at 95%: 38031 samples (the paper's 38032 with Z = 1.96)"

tap_done
