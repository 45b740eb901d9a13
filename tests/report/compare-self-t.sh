#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# compare-self-t.sh - `varperf compare F F` agrees, exit 0, for every
# recording at hand without recording one: the committed corpus (real
# recordings of the fixtures and crafted files) and gen-crafted's seeds.
# fx-threads' recording has only unreliable patterns (durations mostly
# probe cost): the profile side left them out of its Pattern Set, the
# regression side counted them, and the file differed from itself.
# Run again under ASan and UBSan by setup.sh check.
#
# Environment (make check): top_srcdir, top_builddir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd python3
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
LC_ALL=C
export LC_ALL
"$gen" corpus . && "$gen" wide-var 300 wide-var.data ||
	tap_bail "gen-crafted cannot write the seeds"
cp "$top_srcdir"/tests/fuzz/corpus/*.data . || tap_bail "cannot copy the corpus"
n=$(ls ./*.data | wc -l)
tap_plan $((3 * n + 3))

# the verdict, the three set sizes and whether the sets agree, from JSON
cat >sets.py <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(j["verdict"], j["profile_set"], j["regression_set"], j["common"], j["agree"])
PY

for f in ./*.data; do
	f=${f#./}
	"$VARPERF" compare "$f" "$f" >out 2>err
	st=$?
	tap_is "0 verdict: the recordings agree" "$st $(grep 'verdict:' out | sed 's/^ *//')" \
		"compare $f $f: agree, exit 0"
	"$VARPERF" compare --format json "$f" "$f" >out.json 2>/dev/null
	st=$?
	s=$(python3 sets.py out.json 2>&1)
	set -- $s
	tap_is "0 agree $2 $2 True" "$st $1 $3 $4 $5" \
		"compare --format json $f $f: the same Pattern Set either side ($s)"
	"$VARPERF" compare --raw "$f" "$f" >out 2>err
	tap_is "0" "$?" "compare --raw $f $f: exit 0"
done

# the reproducer: all its patterns are unreliable, so both sets are empty
f=compare-self-unreliable-fxthreads.data
"$VARPERF" compare --format json "$f" "$f" >out.json 2>/dev/null
tap_is "agree 0 0 0 True" "$(python3 sets.py out.json 2>&1)" \
	"$f: both Pattern Sets empty (every pattern unreliable)"
"$VARPERF" report -i "$f" >out 2>/dev/null
tap_like "$(cat out)" "none: every pattern is unreliable" "report $f: every pattern unreliable"
tap_is "  (none is reliable: time the first without probed callees inside, with the cheapest probes:
    varperf record --mode=probe --backend=user -f work -- /tmp/rel/main/tests/fixtures/fx-threads)" \
	"$(sed -n '/^  (none is reliable/,/)$/p' out)" "... and the command that times them alone"

tap_done
