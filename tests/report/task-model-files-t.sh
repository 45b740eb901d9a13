#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# task-model-files-t.sh - varperf explain and bound over committed data
# files, no recording: a task with no completed call (fx-open killed
# inside main: main and loop are open at the end, 0 paired invocations)
# gets the "too few" error and exit 1 from both, where bound once
# shuffled an empty array and wrote below it (SIGSEGV); a leaf task
# (step, no callees: once memcpy from NULL, which the sanitizer build
# stops on) gets its model.  Run again under ASan and UBSan by setup.sh
# check.
#
# Environment (make check): top_srcdir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"
require_cmd python3
if ! "$VARPERF" version --build-options | grep -q '^gsl: on$'; then
	tap_skip_all "varperf was built without GSL"
fi
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
LC_ALL=C
export LC_ALL
cp "$top_srcdir/tests/fuzz/corpus/bound-zero-paired-fxopen.data" open.data &&
	cp "$top_srcdir/tests/fuzz/corpus/compare-self-unreliable-fxthreads.data" threads.data ||
	tap_bail "cannot copy the data files"

tap_plan 17

too_few() {
	echo "varperf: error: '$1' has 0 paired invocations in 'open.data': too few for a model" \
		"once the held-out ones (--train) and the bad samples (--cook) are set aside" \
		"(the training set needs more than 5)"
}

# ---- no completed call: an error, not a crash ----
for cmd in bound explain; do
	for task in main loop; do
		"$VARPERF" $cmd -i open.data $task >out 2>err
		st=$?
		tap_is "1 $(too_few $task)" "$st $(cat err)" "$cmd $task: 0 paired invocations, too few"
		tap_is "" "$(cat out)" "$cmd $task: nothing on stdout"
	done
done
# every split share and seed: the rows are counted before the split
"$VARPERF" bound -i open.data --train 0.01 --seed 7 main >out 2>err
st=$?
tap_is "1 $(too_few main)" "$st $(cat err)" "bound --train 0.01 main: too few"

# ---- a leaf task: its model ----
"$VARPERF" explain -i open.data step >out 2>err
tap_is "0" "$?" "explain step (a leaf) exits 0"
tap_like "$(cat out)" "invocations: 200, fitted on 200; candidate predictors: 0" \
	"explain step: 200 invocations, no predictor"
tap_is "" "$(cat err)" "explain step: no message"
"$VARPERF" bound -i open.data step >out 2>err
tap_is "0" "$?" "bound step (a leaf) exits 0"
tap_like "$(cat out)" "invocations: 200, fitted on 100 \\(100 held out or set aside\\)" \
	"bound step: half of 200 trains the model"
# step's 200 durations are far from normal (KS D 0.43): no probability,
# and the measured 0.925 quantile instead, the report's 185th shortest call
q=$("$VARPERF" report -i open.data --format json --slowest-count=4096 2>/dev/null |
	python3 -c 'import json, math, sys
n = [n for n in json.load(sys.stdin)["nodes"] if n["function"] == "step"][0]
d = sorted(c["duration"] for c in n["slowest"])
print(len(d), d[math.ceil(0.925 * len(d)) - 1] // 1000)')
tap_is "MET 512 us, no probability stated: the model fails its checks (residuals not normal)
measured instead: 92.5 % of the 200 invocations took at most ${q#200 } us (no model)" \
	"$(grep -A1 '^MET ' out)" \
	"bound step: residuals not normal, so no probability (1 - 3 alpha / 2) but the 0.925 quantile"
"$VARPERF" bound -i threads.data --context 'worker_a;work' --format json work >out \
	2>/dev/null
tap_is "0" "$?" "bound --format json of a leaf in one of its 2 contexts exits 0"
python3 -c 'import json, sys
j = json.load(open("out"))
print(j["invocations"], j["train"] + j["test"])' >n 2>&1
tap_is "3000 3000" "$(cat n)" "its JSON: 3000 invocations, each trains or tests"

tap_done
