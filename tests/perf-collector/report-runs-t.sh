# SPDX-License-Identifier: GPL-3.0-or-later
# report-runs-t.sh - `varperf report a.data b.data ...`: recordings of one
# program merged exactly, the runs as replicates.  Two runs of
# tests/fixtures/fx-basic merged: every context's count is the sum, its
# mean and variance the pooled ones of the two single reports (to 1e-9),
# each run's own figures kept; a run made slower ("slow": every work()
# call 300 us longer) puts work()'s variance between the runs, with the
# run means the fixture measured itself; another program is refused,
# naming both files and build-ids; formats that read one file's calls
# again are refused.  Needs root and the uprobe PMU.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF" "$FIXTURES/fx-basic" "$FIXTURES/fx-threads"
require_cmd python3 readelf
require_root_uprobes
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

# CHAIN: function names from the top, "/"-separated
cat >runs.py <<'PY'
import json, sys

def load(p):
    return json.load(open(p))

def node(j, chain):
    byid = {n["id"]: n for n in j["nodes"]}
    want = chain.split("/")
    for n in j["nodes"]:
        path, m = [], n
        while m is not None:
            path.insert(0, m["function"])
            m = byid.get(m["parent"]) if m["parent"] is not None else None
        if path == want:
            return n
    sys.exit("no node " + chain)

def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))

cmd = sys.argv[1]
if cmd == "pooled":
    # merged node = the two single reports' figures pooled (Chan et al.)
    a, b, m = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    x, y, z = node(a, sys.argv[5]), node(b, sys.argv[5]), node(m, sys.argv[5])
    n = x["count"] + y["count"]
    mean = (x["count"] * x["mean"] + y["count"] * y["mean"]) / n
    m2 = (x["count"] * x["variance"] + y["count"] * y["variance"] +
          x["count"] * (x["mean"] - mean) ** 2 + y["count"] * (y["mean"] - mean) ** 2)
    bad = []
    if z["count"] != n:
        bad.append("count %d, pooled %d" % (z["count"], n))
    if not close(z["mean"], mean):
        bad.append("mean %r, pooled %r" % (z["mean"], mean))
    if not close(z["variance"], m2 / n):
        bad.append("variance %r, pooled %r" % (z["variance"], m2 / n))
    if z["total"] != x["total"] + y["total"]:
        bad.append("total %d, summed %d" % (z["total"], x["total"] + y["total"]))
    if z["min"] != min(x["min"], y["min"]) or z["max"] != max(x["max"], y["max"]):
        bad.append("min/max")
    print("; ".join(bad) if bad else "ok")
elif cmd == "runs":
    # each run's entry of the merged node = that single report's node
    m, chain = load(sys.argv[2]), sys.argv[3]
    z = node(m, chain)
    bad = []
    for i, single in enumerate(sys.argv[4:]):
        x = node(load(single), chain)
        r = [e for e in m["runs"][i]["nodes"] if e["id"] == z["id"]]
        if len(r) != 1 or r[0]["count"] != x["count"] or not close(r[0]["mean"], x["mean"]) \
           or not close(r[0]["variance"], x["variance"]):
            bad.append("run %d: %r, single %r" % (i, r, (x["count"], x["mean"], x["variance"])))
    print("; ".join(bad) if bad else "ok")
elif cmd == "split":
    print(node(load(sys.argv[2]), sys.argv[3])["between_runs"][sys.argv[4]])
elif cmd == "runmean":
    m, chain, i = load(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    z = node(m, chain)
    print([e for e in m["runs"][i]["nodes"] if e["id"] == z["id"]][0]["mean"])
elif cmd == "truth":
    # fixtures/README: mean_b - 3 % - 2 us - disturbed_ns <= mean <= mean_b
    mean, truth, func = float(sys.argv[2]), sys.argv[3], sys.argv[4]
    for line in open(truth):
        f = line.split()
        if f[:2] == ["truth", func]:
            t = dict(kv.split("=") for kv in f[3:])
            hi = float(t["mean_ns"])
            lo = hi * 0.97 - 2000 - float(t["disturbed_ns"])
            print("ok" if lo <= mean <= hi else "mean %g outside [%g, %g]" % (mean, lo, hi))
            break
    else:
        print("no truth for " + func)
elif cmd == "truthshare":
    # the between-run share the fixture's own brackets give (merge.h's
    # formulas over each run's count, mean and population stddev)
    func, runs = sys.argv[2], []
    for truth in sys.argv[3:]:
        for line in open(truth):
            f = line.split()
            if f[:2] == ["truth", func]:
                t = dict(kv.split("=") for kv in f[3:])
                runs.append((int(t["count"]), float(t["mean_ns"]), float(t["stddev_ns"])))
    N, k = sum(r[0] for r in runs), len(runs)
    mean = sum(r[0] * r[1] for r in runs) / N
    ssw = sum(r[0] * r[2] ** 2 for r in runs)
    ssb = sum(r[0] * (r[1] - mean) ** 2 for r in runs)
    msw, msb = ssw / (N - k), ssb / (k - 1)
    n0 = (N - sum(r[0] ** 2 for r in runs) / N) / (k - 1)
    vb = max(0.0, (msb - msw) / n0)
    print(vb / (vb + msw))
elif cmd == "path":
    import os
    print(os.path.realpath(sys.argv[2]))
PY

tap_plan 24

rec() { # FILE FIXTURE [ARG]
	wait_unprobed
	"$VARPERF" record -q --mode=probe -o "$1" -- "$FIXTURES/$2" $3 >"$1.truth" 2>"$1.err" ||
		tap_bail "cannot record $2 $3: $(cat "$1.err")"
}
rec a.data fx-basic
rec b.data fx-basic
rec s.data fx-basic slow
rec t.data fx-threads
for f in a b s; do
	"$VARPERF" report --format json "$f.data" >"$f.json" 2>/dev/null ||
		tap_bail "cannot report $f.data"
done

# two runs merged are their pooled statistics
"$VARPERF" report --format json a.data b.data >ab.json 2>err
tap_is "0" "$?" "report --format json a.data b.data: exit 0"
for chain in main/run main/run/work main/run/leaf; do
	tap_is "ok" "$(python3 runs.py pooled a.json b.json ab.json $chain)" \
		"$chain merged: count, total, min, max exact; mean and variance pooled to 1e-9"
done
tap_is "ok" "$(python3 runs.py runs ab.json main/run/work a.json b.json)" \
	"main/run/work: each run's count, mean and variance as its own report"
tap_is "800 2400" "$(python3 runs.py pooled a.json b.json ab.json main/run/work >/dev/null;
	python3 -c 'import json; j = json.load(open("ab.json"))
c = {n["function"]: n["count"] for n in j["nodes"]}
print(c["work"], c["leaf"])')" "counts: 2 x 400 work(), 2 x 1200 leaf()"
tap_is "2" "$(python3 -c 'import json; print(len(json.load(open("ab.json"))["runs"]))')" \
	"JSON: two runs"

# a slower run: work() varies between the runs, leaf() within them
"$VARPERF" report --format json a.data s.data >as.json 2>err
tap_is "0" "$?" "report --format json a.data s.data: exit 0"
# what the fixture measured decides how high: a call the machine's load
# stretched by milliseconds is variance within its run
share=$(python3 runs.py split as.json main/run/work share)
truth=$(python3 runs.py truthshare work a.data.truth s.data.truth)
tap_is "ok" "$(python3 -c "print('ok' if abs($share - $truth) <= 0.1 else 'no')")" \
	"main/run/work: between-run share $share, the fixture's own $truth (+/-0.1)"
p=$(python3 runs.py split as.json main/run/work p)
if python3 -c "import sys; sys.exit(not $truth > 0.6)"; then
	tap_is "ok" "$(python3 -c "print('ok' if $share > 0.6 else 'no')")" \
		"main/run/work: between-run share high ($share > 0.6), within-run low"
	tap_is "ok" "$(python3 -c "print('ok' if $p < 1e-6 else 'no')")" \
		"main/run/work: F test p $p < 1e-6"
else
	tap_skip "the fixture itself saw a between-run share of $truth: a disturbed run" 2
fi
share=$(python3 runs.py split as.json main/run/leaf share)
tap_is "ok" "$(python3 -c "print('ok' if $share < 0.5 else 'no')")" \
	"main/run/leaf (unchanged): between-run share $share < 0.5"
m0=$(python3 runs.py runmean as.json main/run/work 0)
m1=$(python3 runs.py runmean as.json main/run/work 1)
tap_is "ok" "$(python3 runs.py truth "$m0" a.data.truth work)" \
	"run 1's mean of work() ($m0 ns) as fx-basic measured it"
tap_is "ok" "$(python3 runs.py truth "$m1" s.data.truth work)" \
	"run 2's (slow) mean of work() ($m1 ns) as fx-basic slow measured it"
tap_is "ok" "$(python3 runs.py pooled a.json s.json as.json main/run/work)" \
	"main/run/work of a.data + s.data: the pooled statistics"

# the text section
"$VARPERF" report a.data s.data >as.txt 2>err
tap_is "0" "$?" "report a.data s.data: exit 0"
prog=$(python3 runs.py path "$FIXTURES/fx-basic")
tap_is "Runs: 2 recordings of $prog, merged" "$(head -n 1 as.txt)" "text: the Runs section first"
line=$(grep '^  main/run/work ' as.txt)
tap_like "$line" '^  main/run/work +800 ' "text: main/run/work with its 800 calls"
tap_like "$(grep -A1 '^  main/run/work ' as.txt | tail -n 1)" \
	'^    run means: [0-9.]+[mu]?s [0-9.]+[mu]?s$' \
	"text: its two run means"

# another program is refused, naming both files and build-ids
bid() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *//p'
}
tprog=$(python3 runs.py path "$FIXTURES/fx-threads")
"$VARPERF" report a.data t.data >out 2>err
st=$?
tap_is "1 varperf: error: 'a.data' and 't.data' are not recordings of one program: their main modules are '$prog' (build-id $(bid "$prog")) and '$tprog' (build-id $(bid "$tprog"))" \
	"$st $(grep -v '^varperf: warning:' err)" "another program: refused, exit 1"
tap_is "" "$(cat out)" "another program: no report"

# what reads one file's calls again takes one file
"$VARPERF" report --format chrome a.data b.data >out 2>err
tap_is "129 varperf: error: '--format chrome' takes one recording: it reads every call of the file again, and 2 recordings do not make one timeline (text, json, dot and pprof merge them)" \
	"$? $(cat err)" "--format chrome of two recordings: usage error"
"$VARPERF" report --slowest a.data b.data >out 2>err
tap_is "129 varperf: error: '--slowest' takes one recording: a slowest call is a time and a thread of its own run" \
	"$? $(cat err)" "--slowest of two recordings: usage error"
"$VARPERF" report a.data a.data >out 2>err
tap_is "0" "$?" "one recording twice merges (its own replicate)"
tap_done
