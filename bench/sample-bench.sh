#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-bench.sh - the sampling side of `make bench` (run.sh calls it):
# unwinding throughput on one core, sampling overhead next to
# `perf record --call-graph dwarf` at the same frequency on the same
# program, auto mode's overhead and result on the demo and on fx-o2 (two
# threads, -O2), and where probes land on -O2 code.  Needs root, python3
# and, for the comparison, perf.
#
# Environment (set by make bench): VARPERF, DEMO, FX_O2.
set -eu
: "${BENCH_DIR:=${TMPDIR:-/tmp}}"
: "${REPS:=7}"
: "${FX_O2:=${top_builddir:-.}/tests/fixtures/fx-o2}"
work=$(mktemp -d "$BENCH_DIR/varperf-sbench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "skipped: needs root and the uprobe PMU"
	exit 0
fi

# The probes of one run are removed in the background after it; until
# then they slow down the next run of the same program.
wait_unprobed() {
	for _i in $(seq 1 3000); do
		ps -o stat= -C varperf-unprobe 2>/dev/null | grep -qv '^Z' || return 0
		sleep 0.2
	done
}

# o2 CMD...: fx-o2's own run time (mean of its threads' seconds), the last
# run's if CMD ran it more than once
o2() {
	"$@" 2>/dev/null | awk '/^thread/ { s[++n] = $NF } END {
		printf "%.4f", (s[n] + s[n - 1]) / 2 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

wait_unprobed
echo "== unwinding throughput (one core, a second of samples at a time) =="
"$VARPERF" -v record --mode=sample -F 10000 -o "$work/u.data" -- "$FX_O2" 2>&1 >/dev/null |
	sed -n 's/^varperf: unwound /unwound /p'

echo "== sampling overhead: fx-o2 (2 threads, compute-bound), its own run time =="
: >"$work/plain"
for f in 1000 10000; do : >"$work/vp$f"; : >"$work/perf$f"; done
# vp F, pf F: one run of each recorder at F Hz
vp() {
	o2 "$VARPERF" record -q --mode=sample -F "$1" -o "$work/s.data" -- "$FX_O2" 40000 \
		>>"$work/vp$1"
	echo >>"$work/vp$1"
}
pf() {
	command -v perf >/dev/null 2>&1 || return 0
	o2 perf record -q -F "$1" --call-graph dwarf -o "$work/perf.data" -- "$FX_O2" 40000 \
		>>"$work/perf$1"
	echo >>"$work/perf$1"
}
# Each recorder goes first in every other round: what a run leaves behind
# (page cache, the other's files) must not favour one of them.
for i in $(seq 1 "$REPS"); do
	o2 "$FX_O2" 40000 >>"$work/plain"; echo >>"$work/plain"
	for f in 1000 10000; do
		if [ $((i % 2)) = 1 ]; then
			vp $f
			pf $f
		else
			pf $f
			vp $f
		fi
	done
done
plain=$(median <"$work/plain")
echo "unrecorded: $plain s"
for f in 1000 10000; do
	vp=$(median <"$work/vp$f")
	if [ -s "$work/perf$f" ]; then
		pf=$(median <"$work/perf$f")
		# the ratio of the overheads means something only when they are
		# above the noise of a run (a few per cent here)
		awk -v p="$plain" -v v="$vp" -v q="$pf" -v f=$f 'BEGIN {
			ov = (v - p) / p * 100; op = (q - p) / p * 100
			printf "%5d Hz: varperf %+.1f%%, perf record --call-graph dwarf %+.1f%%", f, ov, op
			if (op > 3)
				printf ": overhead ratio %.2f", (v - p) / (q - p)
			else
				printf ": both within the noise"
			printf " (run time ratio %.3f)\n", v / q }'
	else
		awk -v p="$plain" -v v="$vp" -v f=$f 'BEGIN {
			printf "%5d Hz: varperf %+.1f%% (perf not installed)\n", f, (v - p) / p * 100 }'
	fi
done

echo "== probe placement on -O2 code =="
# emulated NAME BINARY [OPTION]: how many probes sit on emulated instructions
emulated() {
	"$VARPERF" record --mode=probe --list ${3:-} -- "$2" | awk -v what="$1" '{ n[$3]++ } END {
		printf "%s: %d of %d functions probed on an emulated instruction\n", what,
			n["emulated"], n["emulated"] + n["stepped"] + n["unknown"] }'
}
emulated "fx-o2 (-O2), probes placed" "$FX_O2"
emulated "fx-o2, first instructions" "$FX_O2" --no-move-probes
emulated "varperf itself (-O2), probes placed" "$VARPERF"
emulated "varperf itself, first instructions" "$VARPERF" --no-move-probes
emulated "the demo (-O1, frame pointers)" "$DEMO"
wait_unprobed
p=$(o2 "$FX_O2")
for m in "" --no-move-probes; do
	wait_unprobed
	q=$(o2 "$VARPERF" record -q --mode=probe $m -o "$work/p.data" -- "$FX_O2")
	awk -v p="$p" -v q="$q" -v m="${m:-placed}" 'BEGIN {
		printf "fx-o2, every function probed (%s): %.3f s against %.3f s unprobed (%+.0f%%)\n",
			m, q, p, (q - p) / p * 100 }'
done
# A real -O2 program: varperf's own report of a recording, every one of its
# functions probed (its main()'s duration, as recorded: 22 000 calls or so).
# Removing a recording's probes takes the kernel minutes here (70 ms each),
# and blocks the next recording's: wait for it.
"$VARPERF" record -q --mode=probe -o "$work/d.data" -- "$DEMO" >/dev/null 2>&1
cp "$VARPERF" "$work/vp-target"
for m in "" --no-move-probes; do
	wait_unprobed
	"$VARPERF" record -q --mode=probe $m -o "$work/r.data" -- "$work/vp-target" report \
		-i "$work/d.data" --format json >/dev/null 2>&1
	"$VARPERF" report --raw -i "$work/r.data" --format json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
m = [n for n in j["nodes"] if n["function"] == "main"][0]
print("varperf report, every function probed (%s): main %.1f ms, %d calls" % (
    sys.argv[1], m["mean"] / 1e6, j["totals"]["invocations"]))' "${m:-placed}"
done

echo "== auto mode =="
wait_unprobed
set -- $("$DEMO" | awk '{ print $7 }')
plain=$1
wait_unprobed
auto=$("$VARPERF" record -q -o "$work/a.data" -- "$DEMO" 2>"$work/err" | awk 'END { print $7 }')
awk -v p="$plain" -v a="$auto" 'BEGIN {
	printf "demo: frame time %.3f ms unrecorded, %.3f ms in phase 2 (%+.1f%%; budget 5%%)\n",
		p, a, (a - p) / p * 100 }'
grep -E "stopped probing|probes cost about" "$work/err" | sed 's/^varperf: /  /' || true
wait_unprobed
p=$(o2 "$FX_O2" 4000 20)
wait_unprobed
a=$(o2 "$VARPERF" record -q -o "$work/o2.data" -- "$FX_O2" 4000 20 2>"$work/err")
awk -v p="$p" -v a="$a" 'BEGIN {
	printf "fx-o2 4000 20: %.3f s unrecorded, %.3f s in phase 2 (%+.1f%%; budget 5%%)\n",
		p, a, (a - p) / p * 100 }'
grep -E "stopped probing|probes cost about" "$work/err" | sed 's/^varperf: /  /' || true
wait_unprobed
"$VARPERF" record -q --mode=probe -o "$work/full.data" -- "$DEMO" >/dev/null 2>&1
wait_unprobed
"$VARPERF" record -q --mode=probe -o "$work/o2full.data" -- "$FX_O2" 4000 20 >/dev/null 2>&1
# the Pattern Sets, heaviest (VIM) first
for f in "full:demo, full probe run" "a:demo, auto mode" "o2full:fx-o2, full probe run" \
	"o2:fx-o2, auto mode"; do
	"$VARPERF" report -i "$work/${f%%:*}.data" --format json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
ps = sorted(j["patterns"], key=lambda p: -p["vim"])
print(sys.argv[1], "patterns:", ", ".join(">".join(p["functions"]) for p in ps))' "${f#*:}"
done
