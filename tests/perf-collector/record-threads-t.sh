#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-threads-t.sh - record fx-threads (two threads calling work() 3000
# and 2000 times) and check that every call of every thread is recorded,
# each thread under its own start routine, with the fixture's statistics.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-threads"

. "$top_srcdir/tests/lib/json-subr.sh"

tap_plan 20

"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/x.data" -- "$FIXTURES/fx-threads" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits with the target's status 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is 5000 "$(q count "$T" work)" "the fixture ran to the end"
report_json "$TMPDIR_T/x.data" "report --format json exits 0"

tap_is true "$(q totals "$R" complete)" "the file is complete"
tap_is 0 "$(q totals "$R" lost)" "no records lost"
tap_is 0 "$(q totals "$R" unmatched_exits)" "every exit matches an entry"
# main plus the two workers: the thread count proves both were followed.
tap_is 3 "$(q totals "$R" threads)" "three threads"
tap_is 5000 "$(q func "$R" work count)" "work: 5000 calls in all"
tap_is 0 "$(q sum "$R" work unpaired)" "work: none unpaired"
tap_is 2 "$(q func "$R" work contexts)" "work: one context per thread"

# Each start routine is a top-level node of its own thread.
q compare "$R" "$T" work worker_a/work worker_a/work >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"
q compare "$R" "$T" work worker_b/work worker_b/work >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

tap_done
