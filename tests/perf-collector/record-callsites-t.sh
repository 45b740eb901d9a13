#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-callsites-t.sh - record fx-callsites: main calls process() from two
# source lines, constant from site A and widely varying from site B.  The
# calling-context tree must keep one node per call site, and the variance
# analysis must blame site B's context, not A's.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-callsites"

. "$top_srcdir/tests/lib/json-subr.sh"

tap_plan 21

"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/x.data" -- "$FIXTURES/fx-callsites" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits with the target's status 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
report_json "$TMPDIR_T/x.data" "report --format json exits 0"

a=$(q line "$T" site_a)
b=$(q line "$T" site_b)
tap_is 1 $((b - a)) "the fixture's call sites are consecutive lines"

tap_is 2 "$(q nodes "$R" main/process)" "process has two nodes under main"
tap_is 2 "$(q func "$R" process contexts)" "process has two calling contexts"
tap_like "$(q node "$R" "main/process:$a" callsite.file)" 'fx-callsites\.c$' \
	"site A's node names the fixture's source file"
q compare "$R" "$T" process "main/process:$a" "main/process:$a" >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"
q compare "$R" "$T" process "main/process:$b" "main/process:$b" >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

# Site A costs a constant 200 us: not high-variance, unless the machine
# preempted the fixture for milliseconds (its own CoV says so).  Site B:
# CoV about 0.5, and preemption only raises it.
cov_a=$(q truth "$T" process "main/process:$a" cov)
if [ "$(q le "$cov_a" 0.3)" = ok ]; then
	tap_is false "$(q node "$R" "main/process:$a" high_variance)" \
		"site A is not high-variance"
	q pattern "$R" "process:$a" count >/dev/null
	tap_is 1 $? "no pattern ends in process at site A"
else
	tap_skip "site A's own CoV is $cov_a: the machine is too busy"
	tap_skip "site A's own CoV is $cov_a: the machine is too busy"
fi
tap_is true "$(q node "$R" "main/process:$b" high_variance)" "site B is high-variance"
tap_is true "$(q pattern "$R" "process:$b" in_pattern_set)" \
	"the Pattern Set has a pattern ending in process at site B"
tap_is 250 "$(q pattern "$R" "process:$b" count)" "that pattern stands for site B's 250 calls"

tap_done
