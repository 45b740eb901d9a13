#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# predict-t.sh - varperf predict against a program that measures itself:
# fx-phases runs 30 ms of setup, then two phases of 20 us and 10 us per
# unit of its size argument, of CPU time (its wall-clock time is the
# machine's load's).  Recorded in sample mode at 5 sizes with --input-size,
# predict must give the CPU time the fixture measures at a size it was not
# recorded with within 10 % (both strategies), with a 95 % interval, and
# print the leave-one-out table of the 5 recordings; a manifest gives the
# same model; bad input gets an error, not a model.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-phases"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 19

ok=0
for n in 2000 4000 6000 8000 10000; do
	"$VARPERF" record --mode=sample -q --input-size "$n" -o "p$n.data" -- \
		"$FIXTURES/fx-phases" "$n" >>truth 2>err && ok=$((ok + 1))
	[ -s err ] && tap_diag "$(cat err)"
done
# in the order the shell lists them, as on the command lines below
for f in p*.data; do
	n=${f#p}
	echo "$f ${n%.data}" >>manifest
done
tap_is 5 "$ok" "5 sizes recorded"

"$VARPERF" report -i p4000.data >report.txt 2>/dev/null
tap_like "$(cat report.txt)" '  input size:        4000' "report shows the input size in the header"
"$VARPERF" report --format json -i p4000.data >report.json 2>/dev/null
tap_is 4000 "$(python3 -c 'import json; print(json.load(open("report.json"))["input_size"])' 2>&1)" \
	"report --format json: header input_size"

# the fixture's own run time at a size not recorded
"$FIXTURES/fx-phases" 7000 >truth7000 || tap_bail "fx-phases 7000 failed"
"$VARPERF" predict --size 7000 --format json p*.data >p.json 2>err
tap_is 0 $? "predict exits 0"
[ -s err ] && tap_diag "$(cat err)"
for s in representative sample; do
	tap_is ok "$(python3 - "$s" <<'PY' 2>&1
import json, sys
s = sys.argv[1]
j = json.load(open("p.json"))
truth = int(open("truth7000").read().split("cpu_ns=")[1].split()[0])
p = j["prediction"][s]
err = abs(p["ns"] - truth) / truth
if err > 0.10:
    print("%s: predicted %.0f ns, measured %d ns: %.1f%% off" % (s, p["ns"], truth, err * 100))
elif not p["low_ns"] <= p["ns"] <= p["high_ns"]:
    print("%s: interval %s does not hold the prediction" % (s, p))
else:
    print("ok")
PY
)" "predict --size 7000, $s: within 10% of the fixture's measured run time, inside its interval"
done
tap_is ok "$(python3 - <<'PY' 2>&1
import json
j = json.load(open("p.json"))
sizes = sorted(r["size"] for r in j["leave_one_out"]["runs"])
bad = [r for r in j["leave_one_out"]["runs"]
       if abs(r["sample"]["ns"] - r["measured_ns"]) / r["measured_ns"] != r["sample"]["relative_error"]]
mean = sum(r["sample"]["relative_error"] for r in j["leave_one_out"]["runs"]) / 5
if sizes != [2000, 4000, 6000, 8000, 10000] or bad:
    print(sizes, bad)
elif abs(mean - j["leave_one_out"]["sample"]["mean_relative_error"]) > 1e-12:
    print("mean %g vs %g" % (mean, j["leave_one_out"]["sample"]["mean_relative_error"]))
else:
    print("ok")
PY
)" "JSON leave-one-out: one row per recording, errors and their mean consistent"
tap_is ok "$(python3 -c '
import json
j = json.load(open("p.json"))
l = j["leave_one_out"]
print("ok" if l["sample"]["mean_relative_error"] < 0.10 and
      l["representative"]["mean_relative_error"] < 0.10 else l)' 2>&1)" \
	"leave-one-out mean relative errors below 10%"
# every recording's measured time against the fixture's own total
tap_is ok "$(python3 - <<'PY' 2>&1
import json
j = json.load(open("p.json"))
truth = {}
for line in open("truth"):
    w = dict(x.split("=") for x in line.split()[1:])
    truth[float(w["size"])] = int(w["cpu_ns"])
off = [(r["size"], r["run_time_ns"], truth[r["size"]]) for r in j["recordings"]
       if abs(r["run_time_ns"] - truth[r["size"]]) > 0.05 * truth[r["size"]]]
print("ok" if not off else off)
PY
)" "each recording's sampled run time within 5% of the fixture's"

"$VARPERF" predict --time=wall --size 7000 --format json p*.data >w.json 2>&1
tap_is ok "$(python3 - <<'PY' 2>&1
import json
c, w = json.load(open("p.json")), json.load(open("w.json"))
cpu = {r["file"]: r["run_time_ns"] for r in c["recordings"]}
low = [r for r in w["recordings"] if r["run_time_ns"] < 0.99 * cpu[r["file"]]]
print("ok" if c["time"] == "cpu" and w["time"] == "wall" and not low else (c["time"], w["time"], low))
PY
)" "--time=wall: every recording's run time at least its CPU time"

"$VARPERF" predict --size 7000 p*.data >p.txt 2>&1
tap_like "$(cat p.txt)" '^leave-one-out \(each recording predicted from the others\):' \
	"text: the leave-one-out table"
tap_like "$(cat p.txt)" '^mean relative error: representative [0-9.]+% \(std [0-9.]+%\), sample [0-9.]+% \(std [0-9.]+%\)$' \
	"text: the mean relative errors"
tap_like "$(cat p.txt)" '^  sample +[0-9.]+ ms \(95% interval [0-9.]+ ms to [0-9.]+ ms\)$' \
	"text: the sample strategy's prediction with its interval"

"$VARPERF" predict --size 7000 --format json --manifest manifest >m.json 2>&1
tap_diff "a manifest of the same files and sizes gives the same model" p.json m.json

# bad input: named, non-zero, no model
"$VARPERF" record --mode=sample -q -o nosize.data -- "$FIXTURES/fx-phases" 1000 >/dev/null 2>&1
"$VARPERF" predict p2000.data nosize.data >out 2>err
tap_is "1 varperf: error: 'nosize.data' has no input size (record it with --input-size)" \
	"$? $(cat err)" "a recording without an input size: error"
"$VARPERF" predict p2000.data >out 2>err
tap_is "1 varperf: error: predict needs recordings of at least 2 input sizes, got 1 recording" \
	"$? $(cat err)" "one recording: error"
n2000=$(python3 -c 'import json; print([r["samples"] for r in json.load(open("p.json"))["recordings"] if r["size"] == 2000][0])')
"$VARPERF" predict --intervals 100000 --manifest manifest p2000.data >out 2>err
tap_is "1 varperf: error: no interval length leaves the shortest recording (p2000.data, $n2000 samples) 2 intervals: give shorter ones with --intervals" \
	"$? $(cat err)" "intervals longer than the runs: error"
"$VARPERF" record --mode=probe -q -f phase_a --input-size 1000 -o probe.data -- \
	"$FIXTURES/fx-phases" 1000 >/dev/null 2>&1
"$VARPERF" predict p2000.data probe.data >out 2>err
tap_is "1 varperf: error: 'probe.data' was recorded in probe mode, without samples: record it with --mode=sample or --mode=combined" \
	"$? $(cat err)" "a probe-mode recording: error"
"$VARPERF" record --input-size -3 -- true >out 2>err
tap_is "129 varperf: error: invalid value '-3' for '--input-size': must be a whole number" "$? $(cat err)" \
	"record --input-size -3: usage error"
tap_done
