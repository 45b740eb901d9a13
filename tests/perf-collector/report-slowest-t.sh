#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# report-slowest-t.sh - the slowest calls a report keeps against the
# fixture's own: fx-slowest calls outer() 400 times, 24 of them 1 to
# 5.6 ms slower in parta(), partb() or outer()'s own code (8 each), and
# prints every call's start, duration and the brackets of its two calls.
# Durations and starts are on-CPU time (--time=cpu, where a thread's
# clock advances by its on-CPU time only), as the fixture works and
# measures: on a busy host, preemptions of milliseconds would make
# ordinary calls the slowest in wall-clock time, and the fixture's
# brackets and the probes' window can hold different parts of them.
# The report's K slowest calls of outer() (16, and 5 with --slowest-count)
# and of parta() (its 8 slow ones) must be the fixture's K longest, in
# start order: same order, each duration within 10 % + 20 us of the
# fixture's (what the probes cost is subtracted from varperf's, not from
# the fixture's brackets), outer()'s starts drifting from the fixture's
# by no more than that per call in between, and the parta and partb parts
# of each split within the same tolerance of the fixture's brackets.
# Every split in the JSON report adds up to its call's duration exactly,
# and every call's on-CPU time is within the fixture's own of it.
# Then the text report of --slowest: its contexts, its rows, its
# z-scores, its errors.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-slowest" "$FIXTURES/fx-open"
# on-CPU time needs the threads' off-CPU times, which the BPF backend records
if ! "$VARPERF" version --build-options | grep -q '^bpf: on$'; then
	tap_skip_all "varperf was built without BPF: its recordings have no off-CPU times (--time=cpu)"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 23

"$VARPERF" record --mode=probe -q -f main -f outer -f parta -f partb -o s.data -- \
	"$FIXTURES/fx-slowest" >truth 2>err
tap_is 0 $? "record exits 0"
[ -s err ] && tap_diag "$(cat err)"
"$VARPERF" report --time=cpu --format json -i s.data >s.json 2>/dev/null &&
	"$VARPERF" report --time=cpu --format json --slowest-count=5 -i s.data >s5.json 2>/dev/null &&
	"$VARPERF" report --time=cpu --format json --slowest-count=8 -i s.data >s8.json 2>/dev/null &&
	"$VARPERF" report --time=cpu --raw --format json --slowest-count=4096 -i s.data \
		>all.json 2>/dev/null ||
	tap_bail "varperf report cannot read s.data"

# check.py JSON FUNC FIELD K: "ok", or what differs between the slowest
# calls of FUNC's node and the K calls the fixture measured longest (FIELD
# of its lines: duration_ns for outer, parta_ns, partb_ns)
cat >check.py <<'PY'
import json, sys

REL, ABS = 0.10, 20000      # durations: probes cost a few us per call
TIE = 20000                 # the fixture's K-th and K+1-th may swap
doc = json.load(open(sys.argv[1]))
# start: compensation moves each later start earlier by the cost of the
# three probed calls (outer, parta, partb) of each call in between, as
# calibrated (-O0: each starts with an emulated push): 20 us where a
# probed call costs 2 us, ten times that cost where probes cost more
DRIFT = max(20000, 10 * [c["full_ns"] for c in doc["probe_costs"]
                         if c["class"] == "emulated"][0])
func, field, k = sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = {}
for line in open("truth"):
    w = line.split()
    if w[0] == "call":
        calls[int(w[1])] = {a: int(b) for a, b in (x.split("=") for x in w[2:])}
node = [n for n in doc["nodes"] if n["function"] == func][0]
seen = node["slowest"]
problems = []

def close(a, b):
    return abs(a - b) <= REL * b + ABS

# the fixture's K longest, in start order; calls within TIE of the K-th
# may stand in for each other at the boundary
by_len = sorted(calls, key=lambda i: -calls[i][field])
edge = calls[by_len[k - 1]][field]
sure = [i for i in calls if calls[i][field] > edge + TIE]
maybe = [i for i in calls if abs(calls[i][field] - edge) <= TIE]
cand = sorted(sure + maybe)
if len(seen) != k:
    problems.append("%d calls kept, wanted %d" % (len(seen), k))
# align the report's calls (start order) with the candidates (index order)
match, pos = [], 0
for c in seen:
    while pos < len(cand) and cand[pos] in maybe and not close(c["duration"],
                                                                calls[cand[pos]][field]):
        pos += 1
    if pos == len(cand):
        problems.append("call of %d ns at %d ns: not among the fixture's longest"
                        % (c["duration"], c["start"]))
        break
    match.append((cand[pos], c))
    pos += 1
missed = set(sure) - set(i for i, _ in match)
if missed:
    problems.append("the fixture's calls %s are missing" % sorted(missed))
for i, c in match:
    want = calls[i][field]
    if not close(c["duration"], want):
        problems.append("call %d: %d ns, the fixture's %d ns" % (i, c["duration"], want))
# starts (the fixture's are outer()'s): compensation moves later events
# earlier, by the probes' cost of each call in between
for (i, c), (j, d) in zip(match, match[1:] if func == "outer" else []):
    fgap = calls[j]["start_ns"] - calls[i]["start_ns"]
    gap = d["start"] - c["start"]
    if not (fgap - (j - i) * DRIFT - 50000 <= gap <= fgap + 50000):
        problems.append("calls %d to %d: %d ns apart, the fixture's %d ns" % (i, j, gap, fgap))
if func == "outer":
    for i, c in match:
        parts = {p["callee"].split("@")[0]: p["time"] for p in c["split"]}
        for f in ("parta", "partb"):
            if not close(parts.get(f, 0), calls[i][f + "_ns"]):
                problems.append("call %d: %s %d ns, the fixture's %d ns"
                                % (i, f, parts.get(f, 0), calls[i][f + "_ns"]))
print("ok" if not problems else "; ".join(problems[:6]))
PY

# every call, kept (4096 of 400): its on-CPU time no more than what the
# thread ran in the fixture's bracket of it (wall-clock time less its
# run-queue waits: time the host stole counts there, and may count as
# on-CPU time, for the scheduler folds it in at ticks), and less than the
# fixture's CPU clock by no more than the probes' costs (50 us).  Both
# brackets enclose the probes' window, so this holds whatever the host
# does; off-CPU time from traced switches had missed those from tasks a
# host hides from tracing (milliseconds a call).
tap_is ok "$(python3 -c 'import json
calls = [dict(x.split("=") for x in l.split()[2:]) for l in open("truth") if l.startswith("call ")]
n = [n for n in json.load(open("all.json"))["nodes"] if n["function"] == "outer"][0]
seen = sorted(n["slowest"], key=lambda c: c["start"])
bad = ["call %d: %d ns on-CPU, the fixture %s on-CPU, %s ran" %
       (i, c["duration"], f["duration_ns"], f["ran_ns"])
       for i, (c, f) in enumerate(zip(seen, calls))
       if not int(f["duration_ns"]) - 50000 <= c["duration"] <= int(f["ran_ns"]) + 1000]
print("ok" if len(seen) == len(calls) == 400 and not bad else
      "%d calls kept of %d; " % (len(seen), len(calls)) + "; ".join(bad[:4]))')" \
	"outer: each of the 400 calls' on-CPU time within what the fixture measured of it"
tap_is ok "$(python3 check.py s.json outer duration_ns 16)" \
	"outer: the 16 slowest calls are the fixture's 16 longest, in start order"
tap_is ok "$(python3 check.py s5.json outer duration_ns 5)" \
	"--slowest-count=5: the fixture's 5 longest"
# parta's 8 slow calls: its 9th longest is an ordinary one, among others
# within a few us, some of them lengthened between bracket and probe
tap_is ok "$(python3 check.py s8.json parta parta_ns 8)" \
	"parta: the 8 slowest calls are the fixture's 8 longest brackets of it"
tap_is ok "$(python3 -c 'import json
bad = [(n["id"], c["start"]) for n in json.load(open("s.json"))["nodes"] for c in n["slowest"]
       if sum(p["time"] for p in c["split"]) != c["duration"]]
print("ok" if not bad else "node, start: %s" % bad[:5])')" \
	"every split adds up to its call's duration exactly"
tap_is ok "$(python3 -c 'import json
d = json.load(open("s.json"))
ids = {n["id"]: n for n in d["nodes"]}
bad = []
for n in d["nodes"]:
    if n["count"] != len(n["slowest"]) and len(n["slowest"]) != 16:
        bad.append("node %d: %d kept of %d" % (n["id"], len(n["slowest"]), n["count"]))
    if [c["start"] for c in n["slowest"]] != sorted(c["start"] for c in n["slowest"]):
        bad.append("node %d: not in start order" % n["id"])
    for c in n["slowest"]:
        for p in c["split"]:
            if (p["node"] is None) != (p["callee"] == "self") or \
               (p["node"] is not None and ids[p["node"]]["parent"] != n["id"]):
                bad.append("node %d: part %s" % (n["id"], p))
print("ok" if not bad else "; ".join(bad[:5]))')" \
	"every node keeps min(16, its calls) in start order, its parts are its children"

# the text report
line_a=$(awk '$1 == "line" && $2 == "parta" { print $3 }' truth)
"$VARPERF" report --time=cpu --slowest=main/outer -i s.data >t-outer 2>err
tap_is 0 $? "--slowest=main/outer exits 0"
tap_is "1 16" "$(grep -c '^  400 calls, mean' t-outer) $(grep -c '^ *[0-9.]* ms ' t-outer)" \
	"one node, 16 calls"
"$VARPERF" report --time=cpu --slowest='main;outer' -i s.data >t-semi 2>/dev/null
tap_diff "main;outer: the same" t-outer t-semi
"$VARPERF" report --time=cpu --slowest="outer:$line_a" -i s.data >t-none 2>err
tap_is "1 varperf: error: no calling context of 's.data' matches 'outer:$line_a'" \
	"$? $(grep error: err)" "outer:LINE: outer is not called from line $line_a (parta is)"
"$VARPERF" report --time=cpu --slowest="parta:$line_a" -i s.data >t-parta 2>/dev/null
tap_like "$(grep -A1 '(node' t-parta | tr '\n' ' ')" \
	"^main \[.*\] → outer \[.*\] → parta \[fx-slowest.c:$line_a\] \(node [0-9]+\): +400 calls" \
	"parta:LINE: its one context"
"$VARPERF" report --time=cpu --slowest="/main/outer/parta@fx-slowest.c:$line_a" -i s.data >t-label 2>/dev/null
tap_diff "/main/outer/parta@FILE:LINE, as the reports label it: the same" t-parta t-label
"$VARPERF" report --time=cpu --slowest=/outer -i s.data >out 2>err
tap_is "1 varperf: error: no calling context of 's.data' matches '/outer'" "$? $(grep error: err)" \
	"/outer: anchored at the top, where main is"
tap_is "" "$(cat out)" "no output then"
# the slowest call's row: its z-score and its largest part first
tap_is ok "$(python3 -c 'import json, re
n = [n for n in json.load(open("s.json"))["nodes"] if n["function"] == "outer"][0]
c = max(n["slowest"], key=lambda c: c["duration"])
z = "%+.2f" % ((c["duration"] - n["mean"]) / n["stddev"])
big = max(c["split"], key=lambda p: p["time"])["callee"]
start = "%.3f ms" % (c["start"] / 1e6)
rows = [l for l in open("t-outer") if l.strip().startswith(start + " ")]
want = re.compile(r"^ +%s +[0-9]+ +[0-9.]+ ms +%s  [0-9.]+ [mu]s %s, " % (re.escape(start), re.escape(z), re.escape(big)))
print("ok" if len(rows) == 1 and want.match(rows[0]) else "wanted %s %s %s in %s" % (start, z, big, rows))')" \
	"the slowest call's row: start, z-score, its largest part first"
"$VARPERF" report --time=cpu --slowest -i s.data >t-all 2>/dev/null
tap_is "$(python3 -c 'import json
print(sum(1 for n in json.load(open("s.json"))["nodes"] if n["significant"]))')" \
	"$(grep -c '(node [0-9]*):' t-all)" "--slowest: every significant node"
"$VARPERF" report --time=cpu --slowest --slowest-count=3 -i s.data >t-3 2>/dev/null
tap_is "$(grep -c '(node [0-9]*):' t-all) 3" \
	"$(grep -c '(node [0-9]*):' t-3) $($AWK '/\(node/ { on = /→ outer \[[^]]*\] \(node/ }
		on && /^ +[0-9.]+ ms / { n++ } END { print n + 0 }' t-3)" \
	"--slowest-count=3: three calls a node"
"$VARPERF" report --time=cpu --slowest-count=0 -i s.data >out 2>err
tap_is "129 varperf: error: invalid value '0' for '--slowest-count': must be a whole number from 1 to 4096" \
	"$? $(head -n 1 err)" "--slowest-count=0: a usage error"
"$VARPERF" report --time=cpu --slowest --format json -i s.data >out 2>err
tap_like "$? $(head -n 1 err)" "^129 varperf: error: '--slowest' is for the text report" \
	"--slowest --format json: a usage error"
"$VARPERF" report --time=cpu --slowest=main//outer -i s.data >out 2>err
tap_is "129 varperf: error: invalid context 'main//outer': an empty function name" \
	"$? $(head -n 1 err)" "an empty element: a usage error"

# fx-open's main and loop never return (loop calls exit())
"$VARPERF" record --mode=probe -q -o o.data -- "$FIXTURES/fx-open" >/dev/null 2>&1
"$VARPERF" report --slowest=main/loop -i o.data >t-open 2>err
tap_is 0 $? "--slowest=main/loop: a context whose calls never returned is no error"
tap_like "$(cat t-open)" '^main \[.*\] → loop \[.*\] \(node [0-9]+\): no call returned \(1 unpaired\)$' \
	"... and says so"
tap_done
