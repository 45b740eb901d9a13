# SPDX-License-Identifier: GPL-3.0-or-later
# compare-raw-t.sh - `varperf compare` reads a recording as `varperf report`
# does: probe costs subtracted (--raw: as measured) and lost records warned
# about.  gen-crafted writes two recordings with calibrated probe costs
# (300 ns inside a probed call, 700 ns in its caller) and 3 lost records:
# main calls work 5 times, work takes 2000 + 400 k ns and 30 us more in
# every fourth invocation of main, so work's mean is 10300 ns as measured
# and 10000 ns compensated, main's 60550 ns and 56750 ns (its own 300 and
# five calls' 700).  Needs no root and no recording.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd python3
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

"$gen" costly 200 a.data && "$gen" costly 300 b.data ||
	tap_bail "gen-crafted cannot write the recordings"

tap_plan 17

# means.py REPORT-A REPORT-B COMPARE - "function:mean-A:mean-B" per context
# of the comparison, each mean "=report" when it is the very double the
# report of that file has for the context, else the two numbers.
cat >means.py <<'EOF'
import json, sys

def report_means(path):
    d = json.load(open(path))
    by_id = {n["id"]: n for n in d["nodes"]}
    def chain(n):
        return (chain(by_id[n["parent"]]) if n["parent"] is not None else ()) + (n["function"],)
    return {chain(n): n["mean"] for n in d["nodes"]}

ra, rb = report_means(sys.argv[1]), report_means(sys.argv[2])
c = json.load(open(sys.argv[3]))
out = []
for x in sorted(c["contexts"], key=lambda x: x["functions"]):
    key = tuple(x["functions"])
    sides = []
    for side, rep in (("profile", ra), ("regression", rb)):
        m = x[side]["mean"]
        sides.append("=report" if rep.get(key) == m else "%r!=%r" % (m, rep.get(key)))
    out.append("%s:%s:%s" % ("/".join(key), sides[0], sides[1]))
print(" ".join(out))
EOF

# ground.py COMPARE RAW - work's and main's means in both recordings
# against what the generator wrote, to 1e-9
cat >ground.py <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
raw = sys.argv[2] == "raw"
want = {("main",): 60550 if raw else 56750, ("main", "work"): 10300 if raw else 10000}
bad = []
for x in c["contexts"]:
    w = want[tuple(x["functions"])]
    for side in ("profile", "regression"):
        if abs(x[side]["mean"] - w) > 1e-9 * w:
            bad.append("%s %s: %r, not %r" % ("/".join(x["functions"]), side, x[side]["mean"], w))
print("; ".join(bad) if bad else "ok %d" % len(c["contexts"]))
EOF

# ---- compensated, the default of both ----
"$VARPERF" report --format json -i a.data >ra.json 2>/dev/null &&
	"$VARPERF" report --format json -i b.data >rb.json 2>/dev/null ||
	tap_bail "varperf report cannot read the recordings"
"$VARPERF" compare --all --format json a.data b.data >c.json 2>err
tap_is 0 "$?" "compare: exit 0, the recordings agree"
tap_is "main:=report:=report main/work:=report:=report" "$(python3 means.py ra.json rb.json c.json)" \
	"compare's means are report's, probe costs subtracted"
tap_is "ok 2" "$(python3 ground.py c.json compensated)" \
	"... 56750 ns for main, 10000 ns for work: the generator's minus the probe costs"
tap_is "true" "$(python3 -c 'import json; print(str(json.load(open("ra.json"))["compensated"]).lower())')" \
	"... which report says it subtracted"
tap_is "True True" "$(python3 -c 'import json; c = json.load(open("c.json"))["compensated"]; print(c["profile"], c["regression"])')" \
	"... and compare too, for each file"
tap_is "varperf: warning: 'a.data': 3 records were lost while recording; their invocations are counted as unpaired
varperf: warning: 'b.data': 3 records were lost while recording; their invocations are counted as unpaired" \
	"$(cat err)" "compare warns of the lost records of each file, as report does"

# ---- --raw: as measured ----
"$VARPERF" report --raw --format json -i a.data >ra.json 2>/dev/null &&
	"$VARPERF" report --raw --format json -i b.data >rb.json 2>/dev/null ||
	tap_bail "varperf report --raw cannot read the recordings"
"$VARPERF" compare --raw --all --format json a.data b.data >c.json 2>err
tap_is 0 "$?" "compare --raw: exit 0"
tap_is "main:=report:=report main/work:=report:=report" "$(python3 means.py ra.json rb.json c.json)" \
	"compare --raw's means are report --raw's"
tap_is "ok 2" "$(python3 ground.py c.json raw)" \
	"... 60550 ns for main, 10300 ns for work: as measured"
tap_is "False False" "$(python3 -c 'import json; c = json.load(open("c.json"))["compensated"]; print(c["profile"], c["regression"])')" \
	"... and its JSON says so"

# ---- the text, and --strict ----
"$VARPERF" compare --wide a.data b.data >out 2>err
tap_like "$(cat out)" '^  kept +1 .* 10\.0 us +10\.0 us .*  work \[prog\.c:7\]$' \
	"text: work's compensated mean in both"
tap_like "$(cat out)" '^  durations: probe costs subtracted \(--raw: as measured\)$' \
	"text: the header says the costs were subtracted"
"$VARPERF" compare --wide --raw a.data b.data >out 2>err
tap_like "$(cat out)" '^  kept +1 .* 10\.3 us +10\.3 us .*  work \[prog\.c:7\]$' \
	"text --raw: work's mean as measured"
tap_like "$(cat out)" '^  durations: as measured, probe costs included$' \
	"text --raw: the header says they were not"
"$VARPERF" compare --help >out 2>&1
tap_like "$(cat out)" '^    --raw  +durations as measured, probe costs included$' "--help lists --raw"
# a truncated file: a warning, and with --strict an error naming it
head -c "$(($(wc -c <b.data) - 30))" b.data >t.data
"$VARPERF" compare a.data t.data >out 2>err
tap_like "$? $(sed -n 2p err)" "^0 varperf: warning: 't\.data': offset [0-9]+: file ends inside a chunk header \(truncated\); read up to the last complete chunk$" \
	"a truncated recording: compared, with the reader's warning"
"$VARPERF" compare --strict a.data t.data >out 2>err
tap_like "$? $(tail -n 1 err)" "^2 varperf: error: 't\.data': offset [0-9]+: file ends inside a chunk header \(truncated\); read up to the last complete chunk$" \
	"--strict: it is trouble (exit 2), named"

tap_done
