#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# real-distributions.sh - the distribution, export and model features on
# a real -O2 program, bzip2 1.0.8 built from Debian's sources by
# real-programs.sh (run that first: it fills the cache).  On an input of
# in.tar with repetitive stretches spliced in (so that BZ2_blockSort
# sometimes falls back to fallbackSort), in probe mode on the block
# sorter and its callees:
#   - BZ2_blockSort's percentiles and path fractions (report --format json)
#   - its slowest calls and where their time went (report --slowest)
#   - the chrome, folded and html exports: size and time
#   - explain and bound on BZ2_blockSort
#   - what a node takes (bench/node-mem)
#   - predict: sampled runs on 2, 4, 8 and 10 MB prefixes, 6 MB predicted
# Prints what it measured; nothing is asserted.
#
# Environment: VARPERF (default ../cli/varperf), NODE_MEM (default
# ../bench/node-mem), VP_BENCH_CACHE (as real-programs.sh), BENCH_DIR.
set -euo pipefail
export LC_ALL=C

me=real-distributions.sh
here=$(cd "$(dirname "$0")" && pwd)
VARPERF=${VARPERF:-$here/../cli/varperf}
NODE_MEM=${NODE_MEM:-$here/node-mem}
cache=${VP_BENCH_CACHE:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/varperf-bench}
bzip2=$cache/bin/bzip2
input=$cache/input/in.tar
if [ ! -x "$bzip2" ] || [ ! -f "$input" ]; then
	echo "$me: skipped: no bzip2 in $cache (run bench/real-programs.sh first)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "$me: skipped: recording needs root"
	exit 0
fi
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/varperf-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# in.tar's first 6 MB with 1 MB of a repeated 8-byte pattern after each MB
for i in 0 1 2 3 4 5; do
	dd if="$input" bs=1M skip=$i count=1 status=none
	# (not a pipe: yes dies of SIGPIPE, and pipefail would end the script)
	head -c 1048576 < <(yes abcdefgh)
done >"$work/mix"

# seconds CMD...: wall seconds of CMD, its output discarded
seconds() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

echo "== bzip2 -9 on $(($(stat -c %s "$work/mix") / 1048576)) MB, probes on the block sorter =="
"$VARPERF" record -q --mode=probe -f BZ2_compressBlock -f BZ2_blockSort -f mainSort \
	-f fallbackSort -o "$work/b.data" -- "$bzip2" -9 -c "$work/mix" >/dev/null
"$VARPERF" report -i "$work/b.data" --format json >"$work/b.json" 2>/dev/null
python3 - "$work/b.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in j["nodes"]}
for n in j["nodes"]:
    if n["function"] not in ("BZ2_blockSort", "fallbackSort", "mainSort"):
        continue
    p = n.get("percentiles") or {}
    line = "%-14s N %4d  mean %8.2f ms  p50 %8.2f  p99 %8.2f  max %8.2f ms" % (
        n["function"], n["count"], n["mean"] / 1e6, p.get("p50", 0) / 1e6,
        p.get("p99", 0) / 1e6, p.get("max", 0) / 1e6)
    if n.get("path"):
        line += "  in %d of %d parent calls" % (n["path"]["calls"], n["path"]["of"])
    print(line)
PY
"$VARPERF" report -i "$work/b.data" --slowest=BZ2_blockSort --slowest-count=4 --wide 2>/dev/null |
	sed -n '1,12p'
for f in chrome folded html; do
	s=$(seconds "$VARPERF" report -i "$work/b.data" --format $f -o "$work/b.$f")
	echo "--format $f: $(stat -c %s "$work/b.$f") bytes in $s s"
done
# BZ2_blockSort has a context per call site of BZ2_compressBlock: the
# one of most invocations, as the error lists them
ctx=$({ "$VARPERF" explain BZ2_blockSort -i "$work/b.data" 2>&1 >/dev/null || true; } |
	sed -n 's/^  \(.*\) (\([0-9]*\) invocations)$/\2 \1/p' | sort -rn | sed -n '1s/^[0-9]* //p')
"$VARPERF" explain BZ2_blockSort ${ctx:+--context "$ctx"} -i "$work/b.data" 2>/dev/null |
	sed -n '1,10p' || true
"$VARPERF" bound BZ2_blockSort ${ctx:+--context "$ctx"} -i "$work/b.data" 2>/dev/null |
	tail -n 8 || true
"$NODE_MEM" "$work/b.data"

echo "== predict: bzip2 -9 sampled on prefixes of in.tar =="
for mb in 2 4 8 10; do
	head -c $((mb * 1048576)) "$input" >"$work/in$mb"
	# (bzip2's frames are large: 8 KB stack copies end short of main)
	"$VARPERF" record -q --mode=sample --stack-size 32768 --input-size $((mb * 1048576)) \
		-o "$work/p$mb.data" \
		-- "$bzip2" -9 -c "$work/in$mb" >/dev/null
done
head -c $((6 * 1048576)) "$input" >"$work/in6"
t=$(seconds "$bzip2" -9 -c "$work/in6")
"$VARPERF" predict --size $((6 * 1048576)) "$work"/p*.data 2>/dev/null | sed -n '1,40p'
echo "bzip2 -9 on 6 MB, measured: $t s wall"
