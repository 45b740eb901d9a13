#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-basic-t.sh - record fx-basic (main -> run x 400 -> work, leaf x 3)
# and compare varperf's counts and statistics with the ground truth the
# fixture measured itself; then -f and --exclude.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-basic"

. "$top_srcdir/tests/lib/json-subr.sh"

src=$top_srcdir/tests/fixtures/fx-basic.c

tap_plan 31

# ---- every function of the executable ----
"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/all.data" -- "$FIXTURES/fx-basic" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits with the target's status 0"
tap_is "" "$(cat "$TMPDIR_T/err")" "record -q prints nothing on a clean run"
report_json "$TMPDIR_T/all.data" "report --format json exits 0"

tap_is true "$(q totals "$R" complete)" "the file is complete"
tap_is 0 "$(q totals "$R" lost)" "no records lost"
tap_is 1 "$(q totals "$R" threads)" "one thread"
tap_is 0 "$(q totals "$R" unmatched_exits)" "every exit matches an entry"
tap_is 0 "$(q sum "$R" main unpaired)" "main returned"

q compare "$R" "$T" run main/run main/run >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"
q compare "$R" "$T" work main/run/work main/run/work >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

tap_is "$(q count "$T" leaf)" "$(q node "$R" main/run/leaf count)" "leaf: exact count"
tap_is 1 "$(q func "$R" work contexts)" "work has one calling context"
# The call site is the source line of the call in run().
line=$(grep -n '^	work();' "$src" | cut -d: -f1)
tap_is "$line" "$(q node "$R" main/run/work callsite.line)" "work's call site is line $line"
tap_like "$(q node "$R" main/run/work callsite.file)" 'fx-basic\.c$' "work's call site file"

# ---- -f: only the functions named ----
"$VARPERF" record --mode=probe -q -f work -f 'lea*' -o "$TMPDIR_T/f.data" -- "$FIXTURES/fx-basic" \
	>"$TMPDIR_T/truth-f" 2>"$TMPDIR_T/err"
tap_is 0 $? "record -f exits 0"
"$VARPERF" report --raw -i "$TMPDIR_T/f.data" --format json >"$R" 2>>"$TMPDIR_T/err"
tap_is 0 $? "report of the -f recording exits 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
fns=$(python3 -c 'import json, sys
print(" ".join(sorted(f["function"] for f in json.load(open(sys.argv[1]))["functions"])))' "$R")
tap_is "leaf work" "$fns" "-f work -f 'lea*' probes exactly work and leaf"
# Nothing above them is probed: both are top-level nodes now.
tap_is 400 "$(q node "$R" work count)" "work is a top-level node, 400 calls"
tap_is 1200 "$(q node "$R" leaf count)" "leaf is a top-level node, 1200 calls"
tap_is null "$(q node "$R" work parent)" "work has no parent"

# ---- --exclude ----
"$VARPERF" record --mode=probe -q --exclude leaf -o "$TMPDIR_T/x.data" -- "$FIXTURES/fx-basic" \
	>"$TMPDIR_T/truth-x" 2>"$TMPDIR_T/err"
tap_is 0 $? "record --exclude exits 0"
"$VARPERF" report --raw -i "$TMPDIR_T/x.data" --format json >"$R" 2>>"$TMPDIR_T/err"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is 0 "$(q nodes "$R" leaf)" "--exclude leaf: no leaf node"
tap_is 400 "$(q node "$R" main/run/work count)" "--exclude leaf: work still recorded"

tap_done
