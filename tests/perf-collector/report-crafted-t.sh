# SPDX-License-Identifier: GPL-3.0-or-later
# report-crafted-t.sh - `varperf report` and `varperf compare` on data files
# crafted to hurt them, valid to the last checksum (gen-crafted writes them
# with core's writer): sampled stacks deeper than any stack frame budget,
# a frame of thousands of inlined levels in a stack of thousands of frames
# (millions of contexts from a few kilobytes), 20 000 children of one
# context (once a dense covariance of 1.6 GB), and FIFOs given as data
# files.
# Each must end in a result or in the exact error, within a small stack,
# a memory limit and a timeout.  Needs no root and no recording.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd timeout python3
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

"$gen" deep-sample 100000 deep.data &&
	"$gen" inline-frame 3000 inline.data &&
	"$gen" wide 20000 wide.data &&
	"$gen" wide-var 20000 widevar.data &&
	"$gen" wide 3000 wide3000.data ||
	tap_bail "gen-crafted cannot write the crafted files"

# limited VMEM-KB STACK-KB CMD... - CMD with at most that much address
# space and stack, and a minute: a report that recursed per level, or built
# what a file of a few kilobytes describes in gigabytes, fails in them
# instead of taking the machine.  Under AddressSanitizer (setup.sh check
# sets ASAN_OPTIONS), whose shadow memory reserves terabytes of address
# space, the stack and the time are limited only.
limited() {
	_v=$1 _s=$2
	shift 2
	if [ -n "${ASAN_OPTIONS+set}" ]; then
		(ulimit -s "$_s" && exec timeout 120 "$@")
	else
		(ulimit -v "$_v" && ulimit -s "$_s" && exec timeout 60 "$@")
	fi
}

# json_field - the cut samples, cut nodes and deepest depth of the sampled
# tree in the report's JSON on stdin (nothing when it is no JSON)
json_field() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
s = d["sampled"]
print(s["cut"], sum(1 for n in s["nodes"] if n["kind"] == "cut"),
      max(n["depth"] for n in s["nodes"]))' 2>/dev/null
}

tap_plan 39

# ---- sampled stacks of 100 000 frames, with a 256 KiB stack ----
#
# The text renderer and the matching of sampled nodes to probed ones once
# recursed per level: 100 000 levels overflowed 8 MiB of stack.  Now the
# path is cut at 4096 nodes (4095 and the cut node), and neither recurses:
# 4096 levels fit in 256 KiB.
limited 1000000 256 "$VARPERF" report -i deep.data >out 2>err
tap_is "0" "$?" "deep stacks: exit status"
tap_is "" "$(cat err)" "deep stacks: no message"
tap_is "1" "$(grep -cE '\[deeper levels cut\] +[0-9.]+% \+-' out)" "deep stacks: one cut row"
tap_like "$(cat out)" '^ +\[4095\] \[deeper levels cut\] +100\.0% \+- 0\.0  +100\.0% \+- 0\.0 ?$' \
	"deep stacks: the cut node at depth 4095 has every sample's self"
tap_like "$(cat out)" '^  2 samples deeper than 4095 levels: cut, under \[deeper levels cut\]$' \
	"deep stacks: the footnote counts the 2 samples cut"
# main, work, main, ...: the outermost 4095 levels, then the cut
tap_is "4096" "$(grep -cE '^ +[^ ].* 100\.0% \+- 0\.0' out)" \
	"deep stacks: 4095 function rows and the cut row"
limited 1000000 256 "$VARPERF" report -i deep.data --format json >out.json 2>err
tap_is "0" "$?" "deep stacks, JSON: exit status"
tap_is "2 1 4096" "$(json_field <out.json)" \
	"deep stacks, JSON: sampled.cut 2, one node of kind cut, the deepest at 4096"

# ---- 3000 frames of 3000 inlined levels: 9 million contexts in 36 KB ----
#
# Once 2 GB and a crash; the cut keeps 4096 nodes.  256 MiB of address
# space is plenty for that and far too little for the 9 million.
limited 262144 8192 "$VARPERF" report -i inline.data >out 2>err
tap_is "0" "$?" "inlined levels: exit status within 256 MiB"
tap_is "" "$(cat err)" "inlined levels: no message"
tap_like "$(cat out)" '^  1 sample deeper than 4095 levels: cut, under \[deeper levels cut\]$' \
	"inlined levels: the sample is cut"
tap_is "4094" "$(grep -cE 'work \[prog\.c:[0-9]+\] +[0-9.]+% \+-' out)" \
	"inlined levels: 4094 inlined rows below the outermost work"
# the sampled tree's nodes are charged to --max-memory too
limited 262144 8192 "$VARPERF" report -i inline.data --max-memory 256K >out 2>err
tap_is "1" "$?" "inlined levels in 256 KiB: exit status"
tap_is "varperf: error: 'inline.data': analysing it would take more than --max-memory allows (256 KiB): give it more, or 0 for no limit" \
	"$(cat err)" "inlined levels in 256 KiB: the error names the file and the budget"
tap_is "" "$(cat out)" "inlined levels in 256 KiB: nothing on stdout"

# ---- one context with 20 000 children ----
#
# Their dense covariance matrix took 20 001 x 20 002 / 2 doubles, 1.6 GB,
# and every invocation updated all of it.  Now a node's first 256 children
# have a variable each and the others one "other" variable together: the
# file is analysed within the default --max-memory and 512 MiB of address
# space.
limited 524288 8192 "$VARPERF" report -i wide.data >out 2>err
tap_is "0" "$?" "20 000 children: exit status"
tap_is "" "$(cat err)" "20 000 children: no message"
limited 524288 8192 "$VARPERF" compare wide.data wide3000.data >out 2>err
tap_is "0" "$?" "compare, 20 000 children: exit status 0"
tap_is "" "$(cat err)" "compare, 20 000 children: no message"
# 2000 invocations of a high-variance main, each calling work from 10 new
# call sites: 20 000 children, whose matrix update per invocation took
# minutes for all of them; under the minute of limited now, and the
# contributors name the other 19 744 callees, in text and in JSON
limited 524288 8192 "$VARPERF" report -i widevar.data >out 2>err
tap_is "0" "$?" "20 000 children with variance: exit status"
tap_is "" "$(cat err)" "20 000 children with variance: no message"
tap_like "$(cat out)" '^  main \(node 1, depth 1\): sigma 23\.6 us over 2000 calls
 +9[0-9]\.[0-9]%  \(19744 other callees\)$' \
	"20 000 children with variance: the other callees lead the contributors"
limited 524288 8192 "$VARPERF" report -i widevar.data --format json >out.json 2>err
tap_is "0 19744 258 (19744 other callees) None True" "$?$(python3 -c 'import json, sys
d = json.load(sys.stdin)
n = [n for n in d["nodes"] if n["function"] == "main"][0]
c = n["children_covariance"]
s = sum(sum(r) for r in c["matrix"])
print("", c["other_callees"], len(c["labels"]), c["labels"][-1], c["nodes"][-1],
      abs(s - n["variance"]) <= 1e-9 * n["variance"])' <out.json 2>/dev/null)" \
	"20 000 children, JSON: other_callees, 258 variables, the last the other ones, sum = variance"
# 3000 children are analysed, and refused under 512 KiB
limited 524288 8192 "$VARPERF" report -i wide3000.data --format json >out.json 2>err
tap_is "0 3000" "$?$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print("", sum(1 for n in d["nodes"] if n.get("function") == "work"))' <out.json 2>/dev/null)" \
	"3000 children: analysed, 3000 contexts of work"
"$VARPERF" report -i wide3000.data --max-memory 512K >out 2>err
tap_is "1 varperf: error: 'wide3000.data': analysing it would take more than --max-memory allows (512 KiB): give it more, or 0 for no limit" \
	"$? $(cat err)" "3000 children in 512 KiB: refused"
"$VARPERF" report -i wide3000.data --max-memory 16X >out 2>err
tap_is "129 varperf: error: invalid value '16X' for '--max-memory': must be a size in bytes with an optional K, M, G or T suffix (0: no limit)" \
	"$? $(cat err)" "--max-memory 16X: a usage error"

# ---- FIFOs: opened without waiting for a writer, then refused ----
#
# Opening a FIFO for reading waits for a writer: report, compare and
# record --phase1 once hung there, before the check for a regular file.
mkfifo fifo || tap_bail "cannot make a FIFO"
timeout 20 "$VARPERF" report -i fifo >out 2>err
tap_is "1" "$?" "report -i FIFO: exit status 1, at once"
tap_is "varperf: error: 'fifo' is not a regular file" "$(cat err)" "report -i FIFO: message"
tap_is "" "$(cat out)" "report -i FIFO: nothing on stdout"
timeout 20 "$VARPERF" compare wide3000.data fifo >out 2>err
tap_is "2" "$?" "compare with a FIFO: exit status 2, at once"
tap_is "varperf: error: 'fifo' is not a regular file" "$(cat err)" "compare with a FIFO: message"
# checked before anything is run or calibrated
timeout 20 "$VARPERF" record --phase1 fifo -o never.data -- true >out 2>err
tap_is "1" "$?" "record --phase1 FIFO: exit status 1, at once"
tap_is "varperf: error: cannot read the sampling run: 'fifo' is not a regular file" \
	"$(cat err)" "record --phase1 FIFO: message"
tap_ok "$([ ! -e never.data ]; echo $?)" "record --phase1 FIFO: no output file"

# ---- durations compensation clamped: ~0, not 0 ns ----
# (work's first three calls of five take 200 ns, under the 300 ns its
# probes cost inside: 3 of 5 clamped, so its median is one of them)
"$gen" clamped 40 clamped.data && "$gen" costly 40 costly.data &&
	"$VARPERF" report -i costly.data --format json >costly.json 2>/dev/null ||
	tap_bail "gen-crafted cannot write clamped.data or costly.data"
"$VARPERF" report -i clamped.data >clamped.txt 2>/dev/null
tap_like "$(cat clamped.txt)" "^ +p50 ~0, p90 4\.70 us, p99 4\.70 us, p99\.9 4\.70 us, max 4\.70 us$" \
	"clamped: the pattern's median is ~0, not 0 ns"
tap_like "$(tr -s ' \n' '  ' <clamped.txt)" "clamped durations: 120 \(probe costs over the time measured; by 100 ns at most; shown as ~0\)" \
	"clamped: the header counts them and says how they show"
tap_like "$(grep '^\*.*work \[prog.c:7\]' clamped.txt)" " ~0 4\.70us 4\.70us " \
	"clamped: work's p50 column too; main's sigma of 0 is no clamped duration"
# the calibration's spread, 70 ns of 700: each mean known within 10 % of
# what the probes cost inside it (work's own 700 ns; main's and its five
# calls' of work, 4200 ns), said beside the (!) of an unreliable one
"$VARPERF" report -i clamped.data --format json >clamped.json 2>/dev/null
tap_is "work 70 main 420 | None" "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
u = dict((n["function"], n["mean_uncertainty"]) for n in j["nodes"] if n["function"])
o = json.load(open(sys.argv[2]))
print("work %g main %g |" % (u["work"], u["main"]),
      set(n["mean_uncertainty"] for n in o["nodes"]).pop())' clamped.json costly.json 2>&1)" \
	"mean_uncertainty: the probes' cost inside times the spread; none without a spread"
tap_like "$(grep '^\*.*work \[prog.c:7\]' clamped.txt)" "work \[prog\.c:7\] \(! \+-70ns\)$" \
	"... and in the text, beside the (!)"

tap_done
