#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# runs-files-t.sh - `varperf report` of several recordings over the
# committed corpus, without recording: a recording merged with itself
# doubles every count and keeps every mean and variance, with nothing
# between the runs; recordings of two programs, or without build-ids,
# are refused naming both; formats that read a file's calls again and
# files that cannot be read are errors.
#
# Environment (make check): top_srcdir, top_builddir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"
require_cmd python3
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
LC_ALL=C
export LC_ALL
corpus="$top_srcdir/tests/fuzz/corpus"
cp "$corpus/compare-self-unreliable-fxthreads.data" t.data &&
	cp "$corpus/bound-zero-paired-fxopen.data" o.data &&
	cp "$corpus/deep-sample-5000.data" d.data || tap_bail "cannot copy the corpus"
tap_plan 15

"$VARPERF" report --format json t.data >t.json 2>/dev/null || tap_bail "cannot report t.data"
"$VARPERF" report --format json t.data t.data >tt.json 2>err
tap_is "0" "$?" "report t.data t.data: exit 0"
cat >check.py <<'PY'
import json
one, two = json.load(open("t.json")), json.load(open("tt.json"))
bad = []
if len(one["nodes"]) != len(two["nodes"]):
    bad.append("%d nodes, %d merged" % (len(one["nodes"]), len(two["nodes"])))
def paths(j):
    byid = {n["id"]: n for n in j["nodes"]}
    def key(n):
        k = []
        while n is not None:
            k.insert(0, (n["function"], json.dumps(n["callsite"])))
            n = byid.get(n["parent"]) if n["parent"] is not None else None
        return tuple(k)
    return {key(n): n for n in j["nodes"]}
p1, p2 = paths(one), paths(two)
if set(p1) != set(p2):
    bad.append("other contexts")
for k in p1:
    x, y = p1[k], p2.get(k, {"count": -1, "total": -1, "mean": -1, "variance": -1,
                              "between_runs": {}})
    if y["count"] != 2 * x["count"] or y["total"] != 2 * x["total"]:
        bad.append("%s: count %d, merged %d" % (x["function"], x["count"], y["count"]))
    if abs(x["mean"] - y["mean"]) > 1e-9 * max(1, x["mean"]) or \
       abs(x["variance"] - y["variance"]) > 1e-9 * max(1, x["variance"]):
        bad.append("%s: mean or variance moved" % x["function"])
    b = y["between_runs"]
    if not b or b["ss_between"] != 0 or b["var_between"] != 0 or b["share"] != 0 or b["runs"] != 2:
        bad.append("%s: between runs %r" % (x["function"], b))
print("; ".join(bad) if bad else "ok")
PY
tap_is "ok" "$(python3 check.py)" \
	"every node: twice the count and total, the same mean and variance, nothing between runs"
tap_is "2 t.data t.data" \
	"$(python3 -c 'import json; r = json.load(open("tt.json"))["runs"]; print(len(r), r[0]["name"], r[1]["name"])')" \
	"JSON: the two runs by name"
"$VARPERF" report t.data t.data >tt.txt 2>err
tap_like "$(head -n 1 tt.txt)" "^Runs: 2 recordings of .*/fx-threads, merged$" \
	"text: the Runs section"

# each file's program and build-id, as merging it with itself says them
prog() {
	"$VARPERF" report "$1" "$1" 2>/dev/null | sed -n '1s/^Runs: 2 recordings of \(.*\), merged$/\1/p'
}
bid() {
	"$VARPERF" report --format json "$1" "$1" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["build_id"])'
}
"$VARPERF" report t.data o.data >out 2>err
st=$?
tap_is "1 varperf: error: 't.data' and 'o.data' are not recordings of one program: their main modules are '$(prog t.data)' (build-id $(bid t.data)) and '$(prog o.data)' (build-id $(bid o.data))" \
	"$st $(grep -v '^varperf: warning:' err)" "two programs: refused, naming both files and build-ids"
"$VARPERF" report d.data d.data >out 2>err
tap_is "1 varperf: error: 'd.data' and 'd.data' are not recordings of one program: their main modules are '/crafted/prog' (no build-id) and '/crafted/prog' (no build-id)" \
	"$? $(grep -v '^varperf: warning:' err)" "no build-id: one program cannot be told"
"$VARPERF" report --format folded t.data t.data >out 2>err
tap_is "129 varperf: error: '--format folded' takes one recording: it reads every call of the file again, and 2 recordings do not make one timeline (text, json, dot and pprof merge them)" \
	"$? $(cat err)" "--format folded of two recordings: usage error"
"$VARPERF" report --pid 1 t.data t.data >out 2>err
tap_is "129 varperf: error: '--pid' takes one recording: each run has processes of its own" \
	"$? $(cat err)" "--pid of two recordings: usage error"
"$VARPERF" report t.data nothere.data >out 2>err
tap_is "1 varperf: error: cannot open 'nothere.data': No such file or directory" \
	"$? $(grep -v '^varperf: warning:' err)" "a missing file: named"
"$VARPERF" report -o t.data t.data t.data >out 2>err
tap_is "129 varperf: error: cannot write 't.data': it is the input 't.data'" "$? $(cat err)" \
	"-o one of the inputs: refused"

# compare of two groups: "A1 A2 -- B1 ...", its two-file form unchanged
"$VARPERF" compare t.data t.data -- t.data >out 2>err
st=$?
tap_is "0 varperf compare: profile 't.data+t.data', regression 't.data'" "$st $(head -n 1 out)" \
	"compare t.data t.data -- t.data: the groups agree, exit 0"
"$VARPERF" compare t.data o.data -- t.data >out 2>err
st=$?
tap_is "2 varperf: error: 't.data' and 'o.data' are not recordings of one program: their main modules are '$(prog t.data)' (build-id $(bid t.data)) and '$(prog o.data)' (build-id $(bid o.data))" \
	"$st $(grep -v '^varperf: warning:' err)" "compare: a group of two programs refused, exit 2"
"$VARPERF" compare t.data t.data t.data >out 2>err
tap_is "129 varperf: error: unexpected argument 't.data' (several recordings a side go as <profile.data>... -- <regression.data>...)" \
	"$? $(head -n 1 err)" "compare of three files without '--': usage error"
"$VARPERF" compare t.data -- >out 2>err
tap_is "129 varperf: error: no regression recording after '--'" "$? $(head -n 1 err)" \
	"compare A --: usage error"
"$VARPERF" compare t.data -- t.data -- t.data >out 2>err
tap_is "129 varperf: error: unexpected argument '--': one '--' parts the profile's recordings from the regression's" \
	"$? $(head -n 1 err)" "compare with two '--': usage error"
tap_done
