#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# compensate-t.sh - probe-cost compensation.  fx-compensate's parent()
# calls 0 to 30 probed children of each class (emulated push, and a
# single-stepped sub that no probe can skip) per call, so its raw mean
# carries a varying number of probe costs.  The fixture timed unprobed is
# the ground truth, for parent and for each child: the compensated means
# must be within 3 % of it (the median of five runs each, on a machine
# that may be busy; for the single-stepped child, whose probes cost more
# than its own time, within 15 % of what the probes added), the raw mean
# of parent clearly above it, and the children's counts exact.  The same holds for the fixture built with
# -O2 -fcf-protection, where parent and child_push start with endbr64 and
# their probes go on the push after it, and while another recording runs:
# each calibration runs on code no other varperf probes.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-compensate" "$FIXTURES/fx-compensate-cf"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# median of the numbers on standard input
median() {
	sort -n | "$AWK" '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# the mean of the first node of FUNCTION in each JSON file given
node_means() { # FUNCTION JSON...
	python3 -c 'import json, sys
for path in sys.argv[2:]:
	j = json.load(open(path))
	print([n for n in j["nodes"] if n["function"] == sys.argv[1]][0]["mean"])' "$@"
}

node_field() { # JSON FUNCTION FIELD
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print([n for n in j["nodes"] if n["function"] == sys.argv[2]][0][sys.argv[3]])' "$@"
}

# "emulated FULL_NS single-stepped FULL_NS" of each JSON file given
probe_costs() { # JSON...
	python3 -c 'import json, sys
for path in sys.argv[1:]:
	j = json.load(open(path))
	print(" ".join("%s %d" % (c["class"], c["full_ns"]) for c in j["probe_costs"]))' "$@"
}

# FIELD ("mean_ns", "disturbed_ns") of FUNCTION in the fixture's output
# FILE, 0 when it has none
fixture_field() { # FILE FUNCTION FIELD
	"$AWK" -v f="$2" -v k="$3=" '$1 == "truth" && $2 == f {
		v = 0
		for (i = 3; i <= NF; i++)
			if (index($i, k) == 1)
				v = substr($i, length(k) + 1)
		print v }' "$1"
}

# measure FIXTURE TAG - five unprobed runs, then five probed ones
# (reported both ways).  Leaves the medians in $truth_F and $comp_F for F
# in parent, child_push and child_sub, and the raw ones in $raw_F.
# What disturbed child calls added to their mean, the fixture's own count
# of it in each run, is left out of both.
measure() {
	fx=$1
	tag=$2
	wait_unprobed
	for i in 1 2 3 4 5; do
		"$fx" >$tag-truth$i || tap_bail "$fx does not run"
	done
	for i in 1 2 3 4 5; do
		wait_unprobed
		"$VARPERF" record -q --mode=probe -f parent -f child_push -f child_sub \
			-o $tag$i.data -- "$fx" >$tag-probed$i 2>$tag-err$i ||
			tap_diag "$(cat $tag-err$i)"
		"$VARPERF" report -i $tag$i.data --format json >$tag$i.json 2>>$tag-err$i
		"$VARPERF" report --raw -i $tag$i.data --format json >$tag-raw$i.json \
			2>>$tag-err$i
	done
	for f in parent child_push child_sub; do
		: >$tag-plain-$f
		: >$tag-comp-$f
		: >$tag-raw-$f
		for i in 1 2 3 4 5; do
			"$AWK" -v m="$(fixture_field $tag-truth$i $f mean_ns)" \
				-v d="$(fixture_field $tag-truth$i $f disturbed_ns)" \
				'BEGIN { printf "%.0f\n", m - d }' >>$tag-plain-$f
			"$AWK" -v m="$(node_means $f $tag$i.json)" \
				-v d="$(fixture_field $tag-probed$i $f disturbed_ns)" \
				'BEGIN { printf "%.0f\n", m - d }' >>$tag-comp-$f
			"$AWK" -v m="$(node_means $f $tag-raw$i.json)" \
				-v d="$(fixture_field $tag-probed$i $f disturbed_ns)" \
				'BEGIN { printf "%.0f\n", m - d }' >>$tag-raw-$f
		done
		eval "truth_$f=\$(median <$tag-plain-$f)"
		eval "comp_$f=\$(median <$tag-comp-$f)"
		eval "raw_$f=\$(median <$tag-raw-$f)"
		tap_diag "$tag $f: unprobed $(tr '\n' ' ' <$tag-plain-$f)ns;" \
			"compensated $(tr '\n' ' ' <$tag-comp-$f)ns; raw $(tr '\n' ' ' <$tag-raw-$f)ns"
	done
}

within() { # TRUTH SEEN RELTOL
	"$AWK" -v t="$1" -v c="$2" -v r="$3" 'BEGIN { d = c - t; if (d < 0) d = -d; exit !(d <= r * t) }'
}

# The relative tolerance that leaves at most 15 % of what the probes
# added (RAW - TRUTH) uncompensated.
effect15() { # TRUTH RAW
	"$AWK" -v t="$1" -v r="$2" 'BEGIN { printf "%.9g\n", 0.15 * (r - t) / t }'
}

all_within() {
	within "$truth_parent" "$comp_parent" 0.03 &&
		within "$truth_child_push" "$comp_child_push" 0.03 &&
		within "$truth_child_sub" "$comp_child_sub" "$(effect15 "$truth_child_sub" "$raw_child_sub")"
}

# The cost of a trap drifts from run to run in a VM and the calibration,
# made just before each recording, cannot see a drift during it: one more
# round of five when the first misses, the same asked of it.  A 20 us
# child_sub carries 11-17 us of single-step probe: the cost in the target
# differed from the one calibrated just before by -1 to +4 us in ten runs
# here (varperf -v record, raw mean minus the unprobed one): the two
# vCPUs differ (the calibration's unprobed loop takes 31 ns on one and
# 45 ns on the other, and a single-step 10.6 us and 14-16 us), and the
# calibration runs on one of them.  3 % of the child's time (0.6 us) is
# beyond a calibration made on another CPU than the target's; what is
# asked of it is that compensation removes 85 % of what the probes added.
measure_checked() { # FIXTURE TAG
	measure "$1" "$2"
	if ! all_within; then
		tap_diag "outside the tolerances: one more round"
		measure "$1" "$2"
	fi
	tap_within "$truth_parent" "$comp_parent" 0.03 \
		"$2: compensated mean of parent within 3% of the unprobed program's own"
	tap_within "$truth_child_push" "$comp_child_push" 0.03 \
		"$2: compensated mean of child_push (emulated) within 3% of its own"
	tap_within "$truth_child_sub" "$comp_child_sub" "$(effect15 "$truth_child_sub" "$raw_child_sub")" \
		"$2: compensated mean of child_sub (stepped): 85% of the probes' cost removed"
}

measure_checked "$FIXTURES/fx-compensate" O0
tap_is True "$("$AWK" -v t="$truth_parent" -v r="$raw_parent" 'BEGIN { print (r > 1.1 * t) ? "True" : r }')" \
	"the raw mean is over 10% higher: the probes' cost is not small here"
tap_is True "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["compensated"])' O01.json)" "the report says it compensated"
tap_is False "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["compensated"])' O0-raw1.json)" "--raw says it did not"
tap_is "$("$AWK" '$1 == "count" && $2 == "child_push" { print $3 }' O0-truth1)" "$(node_field O01.json child_push count)" \
	"child_push: every call"
tap_is "$("$AWK" '$1 == "count" && $2 == "child_sub" { print $3 }' O0-truth1)" "$(node_field O01.json child_sub count)" \
	"child_sub: every call"
"$VARPERF" report -i O01.data >text 2>&1
tap_like "$(cat text)" "probe cost per call: .*subtracted from the durations \(--raw: as measured\)" \
	"the text report says the costs are subtracted"
# The text report shows only nodes that vary a lot: ask the JSON one.
# child_push (20 us, a leaf) is under 10 probe costs on the perf backend
# (4.5 us) and over them on BPF (1.7-2.3 us): the flag follows the rule
tap_is "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
cost = [c["full_ns"] for c in j["probe_costs"] if c["class"] == "emulated"][0]
n = [n for n in j["nodes"] if n["function"] == "child_push"][0]
print(n["mean"] < 10 * cost)' O01.json)" "$(node_field O01.json child_push unreliable)" \
	"a leaf under 10 probe costs is flagged unreliable, over them not"

# -O2 -fcf-protection: endbr64 first, the probes of parent and child_push
# on the push after it.
"$VARPERF" record --list --no-calibrate --mode=probe -f parent -f child_push -f child_sub \
	-- "$FIXTURES/fx-compensate-cf" >list-cf 2>list-cf.err
tap_is "child_push emulated
child_sub stepped
parent emulated" "$("$AWK" '{ print $NF, $3 }' list-cf | sort)" \
	"-O2 -fcf-protection: parent and child_push probed past endbr64, on a push"
measure_checked "$FIXTURES/fx-compensate-cf" cf

# Another recording, its calibration probes in place and tracking, while
# these calibrate and record.
"$VARPERF" record -q --mode=probe -f parent -o bg.data \
	-- "$FIXTURES/fx-compensate" --idle 60 >bg.out 2>&1 &
bg=$!
target=
# as test-subr.sh's, and the background target goes too
trap 'tap_st=$?; [ -z "$target" ] || kill "$target" 2>/dev/null; rm -rf "$TMPDIR_T"; exit $tap_st' EXIT
for _i in $(seq 1 100); do
	target=$(ps -o pid=,comm= --ppid $bg 2>/dev/null | "$AWK" '$2 == "fx-compensate" { print $1 }')
	[ -n "$target" ] && break
	sleep 0.1
done
if [ -z "$target" ]; then
	tap_diag "$(cat bg.out)"
	tap_bail "the background recording did not start its target"
fi
measure_checked "$FIXTURES/fx-compensate" concurrent
probe_costs O0[1-5].json >costs-alone
probe_costs concurrent[1-5].json >costs-concurrent
tap_diag "probe costs alone: $(tr '\n' ';' <costs-alone)"
tap_diag "probe costs next to another recording: $(tr '\n' ';' <costs-concurrent)"
tap_within "$("$AWK" '{ print $2 }' costs-alone | median)" \
	"$("$AWK" '{ print $2 }' costs-concurrent | median)" 0.5 \
	"next to another recording, the calibrated emulated cost is what it is alone (+/-50%)"
kill "$target"
wait "$bg"
target=

tap_done
