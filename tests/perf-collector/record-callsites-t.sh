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

tap_plan 25

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

# Two calls on one line: two nodes, two rows told apart by the address.
step=$(q line "$T" step)
python3 - "$R" "$step" >"$TMPDIR_T/steps" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
ids = {n["id"]: n for n in d["nodes"]}
s = sorted((n for n in d["nodes"] if n["function"] == "step" and n["parent"] is not None
            and ids[n["parent"]]["function"] == "main"),
           key=lambda n: int(n["callsite"]["address"], 16))
print(len(s), " ".join("%s:%s" % (n["callsite"]["file"].split("/")[-1], n["callsite"]["line"])
                       for n in s))
print(" ".join(n["callsite"]["caller"] for n in s))
# the first call in the source returns to the lower address: 20 us, then 60 us
print("ok" if len(s) == 2 and 20000 <= s[0]["min"] < 60000 <= s[1]["min"] else
      "not ok: %s" % [(n["callsite"]["address"], n["min"]) for n in s])
EOF2
tap_is "2 fx-callsites.c:$step fx-callsites.c:$step" "$(sed -n 1p "$TMPDIR_T/steps")" \
	"json: step has two nodes under main, from one file:line"
tap_is ok "$(sed -n 3p "$TMPDIR_T/steps")" \
	"json: by address, the first is the 20 us call and the second the 60 us one"
"$VARPERF" report --raw --all --wide -i "$TMPDIR_T/x.data" >"$TMPDIR_T/all" 2>"$TMPDIR_T/err"
callers=$(sed -n 2p "$TMPDIR_T/steps")
rows=$(sed -n 's/^[ *] .* step \[\(fx-callsites\.c:[0-9]* ([^)]*)\)\].*$/\1/p' "$TMPDIR_T/all")
tap_is "fx-callsites.c:$step (${callers% *})
fx-callsites.c:$step (${callers#* })" "$(printf '%s\n' "$rows" | sort -u)" \
	"text: the two rows of step name their line and their return address"
# (site A varies too little for the default report: --all lists it)
# (--wide adds its path fraction to its tree line)
tap_like "$(cat "$TMPDIR_T/all")" "process \[fx-callsites\.c:$a\]( \(in [0-9]+ of [0-9]+ calls?, [0-9.]+%\))?$" \
	"a call site alone on its line keeps its plain file:line"

tap_done
