#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# text-width-t.sh - the default text report of every recording at hand
# (the committed corpus and gen-crafted's shapes, without recording one)
# fits 100 display columns in a pipe, and $COLUMNS when it is given;
# folding loses no character; --wide prints lines whole; the report is
# ASCII where the locale is not UTF-8; siblings of one function make one
# row of the sampled table, with their shares summed, and frames of code
# no symbol covers fold into one row named by their module (gen-crafted
# siblings: three quarters of the samples in work from three lines of
# main, one in libz.so.1 calling itself).
#
# Environment (make check): top_srcdir, top_builddir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd python3
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
"$gen" corpus . && "$gen" wide 3000 wide-3000.data && "$gen" markup 50 markup-50.data &&
	"$gen" quantiles 300 quantiles-300.data >/dev/null &&
	"$gen" deep-call 200 deep-call-200.data && "$gen" siblings 400 siblings-400.data ||
	tap_bail "gen-crafted cannot write the data files"
cp "$top_srcdir"/tests/fuzz/corpus/*.data . || tap_bail "cannot copy the corpus"

# the widest line in display columns (East Asian wide characters count 2,
# combining marks 0), how many lines are wider than $1, and how many
# bytes are not ASCII
cat >width.py <<'PY'
import sys, unicodedata
def w(s):
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
data = sys.stdin.buffer.read()
lines = data.decode("utf-8", "replace").split("\n")
print(max(w(l) for l in lines), sum(w(l) > int(sys.argv[1]) for l in lines),
      sum(b > 127 for b in data))
PY

for f in ./*.data; do
	f=${f#./}
	LC_ALL=C.UTF-8 "$VARPERF" report -i "$f" >out 2>err
	st=$?
	set -- $(python3 width.py 100 <out)
	tap_is "0 0" "$st $2" "report -i $f | cat: no line over 100 columns (widest $1)"
	COLUMNS=72 LC_ALL=C.UTF-8 "$VARPERF" report -i "$f" >out72 2>/dev/null
	set -- $(python3 width.py 72 <out72)
	tap_is "0" "$2" "COLUMNS=72 report -i $f: no line over 72 columns (widest $1)"
	# folded at a space or in a word: the same characters
	COLUMNS=100000 LC_ALL=C.UTF-8 "$VARPERF" report -i "$f" >outw 2>/dev/null
	COLUMNS=30 LC_ALL=C.UTF-8 "$VARPERF" report -i "$f" >out30 2>/dev/null
	if [ "$(tr -d ' \n' <out30 | cksum)" = "$(tr -d ' \n' <outw | cksum)" ]; then
		tap_pass "COLUMNS=30 report -i $f: folded, not cut"
	else
		tap_fail "COLUMNS=30 report -i $f: folded, not cut"
	fi
	LC_ALL=C "$VARPERF" report -i "$f" >outc 2>&1
	set -- $(python3 width.py 100 <outc)
	tap_is "0" "$3" "LC_ALL=C report -i $f: ASCII only"
done

# --wide: whole lines (the sampled table's own columns are 198 wide)
"$VARPERF" report --wide -i deep-sample-48.data >out 2>/dev/null
set -- $(python3 width.py 100 <out)
[ "$1" -gt 150 ]
tap_ok $? "report --wide: lines whole, not folded (widest $1)"

# the graph's back-edge: an arrow in UTF-8, "<-" in ASCII; what VIM is, once
LC_ALL=C.UTF-8 "$VARPERF" report -i quantiles-300.data >out 2>/dev/null
tap_like "$(cat out)" '^ +↰ \(0\) main via \[prog\.c:7\]: cf 100\.0%$' "UTF-8: the back-edge's arrow"
LC_ALL=C "$VARPERF" report -i quantiles-300.data >out 2>/dev/null
tap_like "$(cat out)" '^ +<- \(0\) main via \[prog\.c:7\]: cf 100\.0%$' "C locale: '<-' instead"
tap_is 1 "$(grep -c '^  VIM (Variability Impact Metric) = k sigma N: the spread of one call, k = 5$' out)" "VIM said in words, once"

# siblings: one row for work (300 of 400 samples) and one for libz (100)
"$VARPERF" report -i siblings-400.data >out 2>/dev/null
tap_is 1 "$(grep -c '^   work \[3 call sites\] .* 75\.0% +- 4\.2~  75\.0% +- 4\.2~$' out)" \
	"work called from three lines: one row, 75.0% total and self"
tap_is 1 "$(grep -c '^   \[libz\.so\.1\] .* 25\.0% +- 4\.2~  25\.0% +- 4\.2~$' out)" \
	"libz calling itself: one row named by its module, 25.0% total and self"
tap_is "0 1" "$(grep -c 'unknown in' out) $(grep -c ' work ' out)" \
	"no '[unknown in ...]' row, no second work row"
"$VARPERF" report --wide -i siblings-400.data >out 2>/dev/null
tap_is 3 "$(grep -c '^ *25\.0% .* work \[prog\.c:1[123]\]$' out)" \
	"--wide: the three call sites, 25.0% each"

tap_done
