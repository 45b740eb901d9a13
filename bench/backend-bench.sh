#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# backend-bench.sh - the probe backends side by side (part of `make
# bench`): what a probed call costs with an emulated and a single-stepped
# first instruction (to the kernel's backends; the user backend patches
# both alike), how long 1000 probes take to go away after the program has
# ended, and how many records a second arrive without loss.
#
# Environment (set by make bench): VARPERF, BENCH_CALLS, CC.
set -eu
: "${BENCH_DIR:=${TMPDIR:-/tmp}}"
: "${CC:=cc}"
work=$(mktemp -d "$BENCH_DIR/varperf-backend.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

now_ns() {
	date +%s%N
}

# wait_unprobed: until no varperf-unprobe runs (the perf backend's
# background removal); prints how long that took in ms
wait_unprobed() {
	_t=$(now_ns)
	while ps -o stat= -C varperf-unprobe 2>/dev/null | grep -qv '^Z'; do
		sleep 0.05
	done
	echo $(( ($(now_ns) - _t) / 1000000 ))
}

echo "== probe backends =="
if [ "$(id -u)" != 0 ]; then
	echo "skipped: needs root"
	exit 0
fi
backends=perf
if "$VARPERF" record -q --mode=probe --backend=bpf -f leaf -o "$work/x.data" -- \
	"$BENCH_CALLS" 10 >/dev/null 2>"$work/err"; then
	backends="perf bpf"
else
	echo "bpf: not available here: $(cat "$work/err")"
fi
wait_unprobed >/dev/null
# the user backend: x86-64, and a program it can patch (else it falls back)
if "$VARPERF" record -q --mode=probe --backend=user -f leaf -o "$work/x.data" -- \
	"$BENCH_CALLS" 10 >/dev/null 2>"$work/err" && [ ! -s "$work/err" ]; then
	backends="$backends user"
else
	echo "user: not available here: $(cat "$work/err")"
fi

calls=200000
for how in emulated stepped; do
	fn=leaf arg=
	[ $how = stepped ] && fn=leaf_stepped arg=stepped
	base=$("$BENCH_CALLS" $calls $arg)
	for b in $backends; do
		p=$("$VARPERF" record -q --mode=probe --backend=$b -f $fn -o "$work/c.data" -- \
			"$BENCH_CALLS" $calls $arg 2>"$work/err")
		wait_unprobed >/dev/null
		if [ -s "$work/err" ]; then
			echo "$b, $how first instruction: $(head -1 "$work/err")"
			continue
		fi
		awk -v b="$base" -v p="$p" -v n=$calls -v be=$b -v h=$how 'BEGIN {
			printf "%s, %s first instruction: +%.2f us per probed call (entry and return; %d calls)\n",
				be, h, (p - b) / n / 1000, n }'
	done
done

# 1000 functions, each probed at its entry and return: how long until the
# probes are gone once the program has ended (the perf backend leaves that
# to varperf-unprobe, in the background)
{
	i=0
	while [ $i -lt 1000 ]; do
		echo "__attribute__((noinline)) int f$i(int x) { return x + $i; }"
		i=$((i + 1))
	done
	echo "int main(void) { int s = 0;"
	i=0
	while [ $i -lt 1000 ]; do
		echo "s = f$i(s);"
		i=$((i + 1))
	done
	echo "return s == 42; }"
} >"$work/many.c"
"$CC" -O0 -o "$work/many" "$work/many.c"
for b in $backends; do
	t0=$(now_ns)
	"$VARPERF" record -q --mode=probe --backend=$b --no-calibrate -f 'f*' -o "$work/m.data" -- \
		"$work/many" >/dev/null 2>&1 || true
	rec=$(( ($(now_ns) - t0) / 1000000 ))
	bg=$(wait_unprobed)
	echo "$b: 1000 functions probed: record took $rec ms, then $bg ms until every probe was removed"
done

# throughput: 4 M records (2 M probed calls) and what was lost
n=2000000
for b in $backends; do
	t0=$(now_ns)
	"$VARPERF" record --mode=probe --backend=$b --no-calibrate -f leaf -o "$work/t.data" -- \
		"$BENCH_CALLS" $n >/dev/null 2>"$work/err"
	ms=$(( ($(now_ns) - t0) / 1000000 ))
	wait_unprobed >/dev/null
	lost=$(sed -n 's/.*events in .*), \([0-9]*\) lost.*/\1/p' "$work/err")
	awk -v n=$((2 * n)) -v ms=$ms -v b=$b -v l="$lost" 'BEGIN {
		printf "%s: %d records in %.2f s (%.2f M records/s), %s lost\n", b, n, ms / 1000,
			n / ms / 1000, l }'
done
