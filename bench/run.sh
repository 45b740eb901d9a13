#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run.sh - `make bench`: analysis throughput and peak memory of
# `varperf report` on a generated file of BENCH_EVENTS events (default
# 100 million), and what recording costs per probed call.  Prints the
# figures NEWS quotes.  Needs python3 (for child rusage) and, for the
# recording part, root and the uprobe PMU.
#
# Environment (set by make bench): VARPERF, GEN_EVENTS, BENCH_CALLS, DEMO.
set -eu
: "${BENCH_EVENTS:=100000000}"
: "${BENCH_DIR:=${TMPDIR:-/tmp}}"
work=$(mktemp -d "$BENCH_DIR/varperf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# run CMD...: wall seconds and peak RSS (KiB) of CMD, stdout discarded
run() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
dt = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("%.3f %d %d" % (dt, rss, rc))
PY
}

echo "== analysis throughput (one core) =="
n=$("$GEN_EVENTS" "$work/big.data" "$BENCH_EVENTS")
size=$(stat -c %s "$work/big.data")
echo "generated $n events, $size bytes ($(awk "BEGIN{printf \"%.2f\", $size/$n}") bytes/event)"
# warm the page cache so the figure is the analysis, not the disk
cat "$work/big.data" >/dev/null
# The calling-context tree and Kumar et al. 2008's analysis take one streaming
# pass; the sources of variance behind the VCG add passes of their own.
set -- $(run "$VARPERF" report -i "$work/big.data" --format json --max-passes 0)
[ "$3" = 0 ] || { echo "varperf report failed"; exit 1; }
awk -v n="$n" -v s="$1" -v m="$2" 'BEGIN {
	printf "varperf report --max-passes 0 (one pass): %.2f s, %.1f M events/s, peak RSS %.1f MiB\n",
		s, n / s / 1e6, m / 1024 }'
set -- $(run "$VARPERF" report -i "$work/big.data" --format json)
[ "$3" = 0 ] || { echo "varperf report failed"; exit 1; }
awk -v n="$n" -v s="$1" -v m="$2" 'BEGIN {
	printf "varperf report (with the VCG'"'"'s extra passes): %.2f s, %.1f M events/s, peak RSS %.1f MiB\n",
		s, n / s / 1e6, m / 1024 }'

# An earlier recording's probes, until the kernel has removed them (a
# background varperf-unprobe; minutes for thousands), slow down every
# probe opened meanwhile and the code they sit on: wait for them.
wait_unprobed() {
	for _i in $(seq 1 3000); do
		ps -o stat= -C varperf-unprobe 2>/dev/null | grep -qv '^Z' || return 0
		sleep 0.2
	done
}

echo "== recording cost per probed call =="
if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "skipped: needs root and the uprobe PMU"
	exit 0
fi
wait_unprobed
calls=200000
base=$("$BENCH_CALLS" $calls)
probed=$("$VARPERF" record -q --mode=probe -o "$work/calls.data" -f leaf -- "$BENCH_CALLS" $calls)
awk -v b="$base" -v p="$probed" -v n=$calls 'BEGIN {
	printf "leaf() x %d: %.1f ns/call unprobed, %.2f us/call probed (+%.2f us per call, push-first: emulated)\n",
		n, b / n, p / n / 1000, (p - b) / n / 1000 }'
wait_unprobed
set -- $(run "$DEMO")
plain=$1
set -- $(run "$VARPERF" record -q --mode=probe -o "$work/demo.data" -- "$DEMO")
awk -v a="$plain" -v b="$1" 'BEGIN {
	printf "demo: %.2f s unprobed, %.2f s recorded, every function probed (%+.1f%%)\n", a, b, (b - a) / a * 100 }'
sh "$(dirname "$0")/sample-bench.sh"
