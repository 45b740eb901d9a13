#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# compensate-t.sh - probe-cost compensation.  fx-compensate's parent()
# calls 0 to 30 probed children of each class (emulated push, and a
# single-stepped sub that no probe can skip) per call, so its raw mean
# carries a varying number of probe costs.  The fixture timed unprobed is
# the ground truth: the compensated mean of parent must be within 3 % of
# it (the median of five runs each, on a machine that may be busy), the
# raw mean clearly above it, and the children's counts exact.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-compensate"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# median of the numbers on standard input
median() {
	sort -n | "$AWK" '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

node_mean() { # JSON FUNCTION
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print([n for n in j["nodes"] if n["function"] == sys.argv[2]][0]["mean"])' "$@"
}

node_field() { # JSON FUNCTION FIELD
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print([n for n in j["nodes"] if n["function"] == sys.argv[2]][0][sys.argv[3]])' "$@"
}

# The kernel removes probes after varperf exits, in a background process
# (varperf-unprobe); until then they still fire, in every process that
# runs the code.  Wait for them to be gone before timing anything.
wait_unprobed() {
	for _i in $(seq 1 100); do
		ps -o stat= -C varperf-unprobe 2>/dev/null | grep -qv '^Z' || return 0
		sleep 0.2
	done
}

# measure - five unprobed runs, then five probed ones (reported both ways).
measure() {
	: >plain
	: >comp
	: >raw
	wait_unprobed
	for i in 1 2 3 4 5; do
		"$FIXTURES/fx-compensate" >truth$i || tap_bail "fx-compensate does not run"
		"$AWK" '$1 == "truth" { sub("mean_ns=", "", $5); print $5 }' truth$i >>plain
	done
	for i in 1 2 3 4 5; do
		wait_unprobed
		"$VARPERF" record -q --mode=probe -f parent -f child_push -f child_sub \
			-o c$i.data -- "$FIXTURES/fx-compensate" >probed$i 2>err$i ||
			tap_diag "$(cat err$i)"
		"$VARPERF" report -i c$i.data --format json >c$i.json 2>>err$i
		"$VARPERF" report --raw -i c$i.data --format json >r$i.json 2>>err$i
		node_mean c$i.json parent >>comp
		node_mean r$i.json parent >>raw
	done
	truth=$(median <plain)
	tap_diag "parent: unprobed $(tr '\n' ' ' <plain)ns; compensated $(tr '\n' ' ' <comp)ns; raw $(tr '\n' ' ' <raw)ns"
}

# The cost of a trap drifts from run to run in a VM (15-22 us for a
# single-step here) and the calibration, made just before each recording,
# cannot see a drift during it: one more round of five when the first
# misses, the same 3 % asked of it.
measure
if ! "$AWK" -v t="$truth" -v c="$(median <comp)" 'BEGIN { d = c - t; if (d < 0) d = -d; exit !(d <= 0.03 * t) }'; then
	tap_diag "outside 3%: one more round"
	measure
fi
tap_within "$truth" "$(median <comp)" 0.03 \
	"compensated mean of parent within 3% of the unprobed program's own"
tap_is True "$(median <raw | "$AWK" -v t="$truth" '{ print ($1 > 1.1 * t) ? "True" : $1 }')" \
	"the raw mean is over 10% higher: the probes' cost is not small here"
tap_is True "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["compensated"])' c1.json)" "the report says it compensated"
tap_is False "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["compensated"])' r1.json)" "--raw says it did not"
tap_is "$("$AWK" '$2 == "child_push" { print $3 }' truth1)" "$(node_field c1.json child_push count)" \
	"child_push: every call"
tap_is "$("$AWK" '$2 == "child_sub" { print $3 }' truth1)" "$(node_field c1.json child_sub count)" \
	"child_sub: every call"
"$VARPERF" report -i c1.data >text 2>&1
tap_like "$(cat text)" "probe cost per call: .*subtracted from the durations \(--raw: as measured\)" \
	"the text report says the costs are subtracted"
tap_like "$(cat text)" "\(!\)" "a node under 10 probe costs is flagged unreliable"

tap_done
