#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-threads-t.sh - record fx-threads (two threads calling work() 3000
# and 2000 times) and check that every call of every thread is recorded,
# each thread under its own start routine, with the fixture's statistics.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-threads"

CHECK="$top_srcdir/tests/perf-collector/check-json.py"
q() { python3 "$CHECK" "$@"; }

# tap_from FILE - one TAP test per "ok - ..."/"not ok - ..." line of FILE
# (check-json.py compare), "# ..." lines as diagnostics.
tap_from() {
	while IFS= read -r _l; do
		case $_l in
		"ok - "*) tap_pass "${_l#ok - }" ;;
		"not ok - "*) tap_fail "${_l#not ok - }" ;;
		*) tap_diag "${_l#\# }" ;;
		esac
	done <"$1"
}

T=$TMPDIR_T/truth
R=$TMPDIR_T/report.json

tap_plan 20

"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/x.data" -- "$FIXTURES/fx-threads" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits with the target's status 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is 5000 "$(q count "$T" work)" "the fixture ran to the end"
"$VARPERF" report --raw -i "$TMPDIR_T/x.data" --format json >"$R" 2>"$TMPDIR_T/err"
tap_is 0 $? "report --format json exits 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"

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
