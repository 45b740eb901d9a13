#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# explain-t.sh - varperf explain and bound against a task whose time is a
# known linear model of its call counts: fx-regress's task() calls
# child1() (20 us) and child2() (45 us) a varying number of times and
# prints the per-call cost it measured around each (probes included).
# All in on-CPU time (--time=cpu): the fixture's spins are CPU time, and
# a busy host's preemptions, which stretch wall-clock time by
# milliseconds, do not reach it.
# Durations as measured (--raw) must give coefficients whose intervals
# hold the fixture's measured costs; compensated ones lie between the
# costs it asked for and those it measured (probes included).  bound's
# maximal model and its MET must hold for the paper's probability
# 1 - (p+2)alpha/2 of the held-out invocations (the scheduler may stretch
# a few: the bound is probabilistic), and
# the paper's probability 1 - (p+2)alpha/2 is printed; planted outliers
# are set aside by Cook's distance, exactly those; and on the demo,
# explain names collide's call count.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-regress" "$DEMO"
if ! "$VARPERF" version --build-options | grep -q '^gsl: on$'; then
	tap_skip_all "varperf was built without GSL"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 23

"$VARPERF" record --mode=probe -q -f task -f child1 -f child2 -o r.data -- \
	"$FIXTURES/fx-regress" >truth 2>err
tap_is 0 $? "record fx-regress exits 0"
[ -s err ] && tap_diag "$(cat err)"
"$VARPERF" explain task -i r.data --time=cpu --format json >c.json 2>/dev/null &&
	"$VARPERF" explain task -i r.data --time=cpu --raw --format json >raw.json 2>/dev/null &&
	"$VARPERF" bound task -i r.data --time=cpu --format json >b.json 2>/dev/null ||
	tap_bail "varperf explain or bound cannot read r.data"

# "ok", or what is off
cat >check.py <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
what, func = sys.argv[2], sys.argv[3]
truth = {}
for line in open("truth"):
    w = line.split()
    if w[0] == "truth":
        truth[w[1]] = {k: float(v) for k, v in (x.split("=") for x in w[2:])}
t = [t for t in j["terms"] if t["function"] == func]
if not t:
    print("no term for %s" % func)
    sys.exit(0)
t = t[0]
if what == "measured":
    # the fixture's own measured per-call cost inside the interval
    # (widened by 1 % for the clock reads around each call)
    m = truth[func]["mean_ns"]
    print("ok" if 0.99 * t["b_minus"] <= m <= 1.01 * t["b_plus"] else
          "%s: measured %g not in [%g, %g]" % (func, m, t["b_minus"], t["b_plus"]))
elif what == "asked":
    # compensated: from what the fixture asked (its spin) up to what it
    # measured (the spin, its clock reads and the probes): the probes'
    # cost is calibrated on whichever vCPU the calibration ran, and the
    # two vCPUs of a VM can differ by microseconds, so compensation may
    # take off all of it or little
    a, m = truth[func]["asked_ns"], truth[func]["mean_ns"]
    print("ok" if 0.95 * a - 1000 <= t["b"] <= 1.01 * m + 1000 else
          "%s: b %g, asked %g, measured %g" % (func, t["b"], a, m))
elif what == "xmax":
    print("ok" if t["x_plus"] == float(sys.argv[4]) else "%s: X+ %g" % (func, t["x_plus"]))
PY

for f in child1 child2; do
	tap_is ok "$(python3 check.py raw.json measured $f)" \
		"explain --raw: calls($f)'s interval holds the fixture's measured cost"
	tap_is ok "$(python3 check.py c.json asked $f)" \
		"explain: calls($f) costs between what the fixture asked and what it measured"
done
tap_is ok "$(python3 -c 'import json
j = json.load(open("b.json"))
c = j["test_counts"]
n = c["over"] + c["under"]
# (the guarantee of the paper is 1 - (p+2)alpha/2, 0.875 here, not 95 %:
# CI once saw the maximal model cover 188 of 200)
p = j["probability"]
print("ok" if n == j["test"] and n > 0 and c["over"] >= p * n and
      c["above_met"] <= (1 - p) * n and
      j["train"] + j["test"] == j["invocations"] == 400 else
      "test %d: over %d, under %d, above the MET %d" % (j["test"], c["over"], c["under"],
                                                      c["above_met"]))')" \
	"bound: the maximal model and the MET hold for the paper's share (1 - (p+2)alpha/2) of held-out invocations"
tap_is "3 0.875" "$(python3 -c 'import json
j = json.load(open("b.json"))
print(len(j["terms"]), j["probability"])')" "bound: p = 3, probability 1 - (p+2)alpha/2"

"$VARPERF" bound task -i r.data --time=cpu >b.txt 2>/dev/null
tap_is 0 $? "bound as text exits 0"
# the probability only where the model passes its own checks (the
# fixture's timing noise is seldom normal): else what failed, as the JSON
# of the same model says, and the measured quantile
tap_is ok "$(python3 -c 'import json, re
j = json.load(open("b.json"))
met = [l for l in open("b.txt") if l.startswith("MET ")]
nxt = open("b.txt").read().split(met[0])[1].splitlines()[0] if met else ""
why = {"r2": "R\u00b2 %.2f, below 0.5" % j["r2"], "residuals": "residuals not normal",
       "coverage": "%d of %d test invocations above the MET" % (j["test_counts"]["above_met"],
                                                              j["test"])}
if j["probability_claimed"]:
    ok = met and re.match(r"MET .* with probability >= 0.875 \(1 - \(p\+2\)alpha/2, p = 3, "
                          r"alpha = 0.05\)$", met[0])
else:
    ok = (met and "no probability stated: the model fails its checks (%s" % "; ".join(
              why[c] for c in j["checks_failed"]) in met[0] and
          re.match(r"measured instead: 87.5 % of the 400 invocations took at most ", nxt))
print("ok" if ok else "%s: %r %r" % (j["checks_failed"], met, nxt))')" \
	"bound prints the MET with its probability, or why not and the measured quantile"
"$VARPERF" bound task -i r.data --time=cpu --max child1=50 --format json >m.json 2>/dev/null
tap_is ok "$(python3 check.py m.json xmax child1 50)" "bound --max child1=50: X+ is 50"

# planted outliers: set aside, exactly those (in on-CPU time too: on a
# busy host, being preempted adds milliseconds of wall-clock time to
# ordinary calls, and they are then as far off the line as the planted
# ones)
"$VARPERF" record --mode=probe -q -f task -f child1 -f child2 -o o.data -- \
	"$FIXTURES/fx-regress" 400 outliers >otruth 2>err
tap_is 0 $? "record fx-regress with outliers exits 0"
"$VARPERF" explain task -i o.data --time=cpu --format json >o.json 2>/dev/null
tap_is "$(sed -n 's/^outlier invocation=//p' otruth | sort -n | tr '\n' ' ')" \
	"$(python3 -c 'import json
print(" ".join(str(b["invocation"]) for b in sorted(json.load(open("o.json"))["bad_samples"],
                                                      key=lambda b: b["invocation"])), end=" ")')" \
	"Cook's distance sets the planted outliers aside, only them"
tap_diag "bad samples (invocation, on-CPU ns, Cook's distance): $(python3 -c 'import json
j = json.load(open("o.json"))
print(" ".join("%d:%d:%.2f" % (b["invocation"], b["duration"], b["cook"]) for b in j["bad_samples"]),
      "R2 %.3f" % j["r2"])')"

# the demo: physics' time is its calls of collide
"$VARPERF" record --mode=probe -q -f frame -f physics -f collide -o demo.data -- "$DEMO" 300 \
	>/dev/null 2>err
tap_is 0 $? "record the demo exits 0"
"$VARPERF" explain physics -i demo.data >d.txt 2>/dev/null
grep -qE '^time ≈ .* \+ [0-9.]+ [mun]?s × calls\(collide\)$' d.txt
tap_ok $? "explain physics names collide's call count"
# R² in on-CPU time: the busier the host, the more a preemption's
# milliseconds of wall-clock time hide the model (R² 0.43 once beside a
# CPU hog, 0.99 in on-CPU time)
"$VARPERF" explain physics -i demo.data --time=cpu >dcpu.txt 2>/dev/null
r2=$(sed -n 's/^R² \([0-9.]*\);.*/\1/p' dcpu.txt)
tap_is ok "$(awk -v r="$r2" 'BEGIN { print (r != "" && r + 0 >= 0.8) ? "ok" : "R² " r }')" \
	"with R² of 0.8 or more in on-CPU time (0.99 on a quiet machine)"

# the context: callers' names down to the task
"$VARPERF" explain physics --context 'frame;physics' -i demo.data >dc.txt 2>/dev/null
tap_ok $? "explain --context frame;physics"
cmp -s d.txt dc.txt
tap_ok $? "the same model: physics has that one context"
"$VARPERF" explain physics --context 'main;physics' -i demo.data >out 2>err
tap_is "1 varperf: error: no calling context 'main;physics' of 'physics' in 'demo.data'" \
	"$? $(grep -v warning: err)" "a context the task does not have is an error"

# contexts that differ only by their call sites: fx-callsites calls
# process() from two lines (200 us; 50-800 us) and step() twice on one
# line (20 us, then 60 us)
"$VARPERF" record --mode=probe -q -f main -f process -f step -o cs.data -- \
	"$FIXTURES/fx-callsites" >cstruth 2>/dev/null
a=$(sed -n 's/^line site_a //p' cstruth)
b=$(sed -n 's/^line site_b //p' cstruth)
"$VARPERF" explain process -i cs.data >out 2>err
tap_is "1 2" "$? $(grep -c "^  main@[^;]*;process@fx-callsites\.c:\($a\|$b\) (250 invocations)\$" err)" \
	"two contexts of process: an error listing both with their call sites"
"$VARPERF" explain process -i cs.data --context "process:$b" --raw --format json >b.json 2>/dev/null
want=$(sed -n "s|^truth process main/process:$b .*mean_ns=\([0-9.]*\) .*|\1|p" cstruth)
tap_is ok "$(python3 -c 'import json, sys
j = json.load(open("b.json")); t = j["terms"][0]; m = float(sys.argv[1])
print("ok" if j["invocations"] == 250 and t["b_minus"] <= m <= t["b_plus"] else
      "%d calls, [%g, %g] against %g" % (j["invocations"], t["b_minus"], t["b_plus"], m))' "$want")" \
	"--context process:$b: site B's calls, their mean in the interval"
# the two calls of step on one line: what the error lists, pasted back
# (on-CPU time: one preemption of a few ms moves a mean of 250 calls
# of 20 us by tens of us)
"$VARPERF" explain step -i cs.data >out 2>err
i=0
for want in 20000 60000; do
	i=$((i + 1))
	ctx=$(sed -n "s/^  \(.*\) (250 invocations)\$/\1/p" err | sed -n "${i}p")
	"$VARPERF" explain step -i cs.data --context "$ctx" --time=cpu --format json \
		>s.json 2>/dev/null
	tap_is ok "$(python3 -c 'import json, sys
j = json.load(open("s.json")); b = j["terms"][0]["b"]; w = float(sys.argv[1])
print("ok" if abs(b - w) <= 0.1 * w + 5000 else "%g against %g" % (b, w))' "$want")" \
		"step's call $i of one line, by the context the error listed: about $((want / 1000)) us"
done

# errors
"$VARPERF" explain nosuch -i r.data >out 2>err
tap_is "1 varperf: error: no probed function 'nosuch' in 'r.data'" "$? $(grep -v warning: err)" \
	"an unknown task is an error"
