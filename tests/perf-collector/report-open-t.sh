#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# report-open-t.sh - a program whose outermost probed functions never
# return: fx-open calls exit() from inside loop(), inside main(), after
# 200 step() calls of 20 us or 400 us.  main's and loop's time is the
# run's, so step() is significant and high-variance; before, the total
# time was 0 and the report said that nothing varied.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-open"

. "$top_srcdir/tests/lib/json-subr.sh"

tap_plan 13

"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/o.data" -- "$FIXTURES/fx-open" >"$T" \
	2>"$TMPDIR_T/err"
tap_is 0 $? "record exits 0 (the target's exit status)"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
report_json "$TMPDIR_T/o.data" "report exits 0"

tap_is 2 "$(q totals "$R" open_at_end)" "main and loop are open at the end"
tap_is "1 1" "$(q node "$R" main open) $(q node "$R" main/loop open)" \
	"... one invocation each"
tap_is 200 "$(q node "$R" main/loop/step count)" "the 200 step calls are paired"
# the open frames ran from their entry to the last event, step's return
step_total=$(q node "$R" main/loop/step total)
main_open=$(q node "$R" main open_total)
total=$(q totals "$R" total_time)
tap_is ok "$(q le "$step_total" "$main_open")" "main's open time covers step's total"
tap_is "$main_open" "$total" "the total time is main's open time"
tap_is "true true" "$(q node "$R" main/loop/step significant) \
$(q node "$R" main/loop/step high_variance)" "step is significant and high-variance"
tap_is true "$(q node "$R" main significant)" "main, open, is significant"
tap_is ok "$(q le 1 "$(q pattern "$R" step vim)")" "step has a pattern"

# the text report names step and counts the open frames
"$VARPERF" report --raw -i "$TMPDIR_T/o.data" >"$TMPDIR_T/text" 2>"$TMPDIR_T/err"
tap_is 0 $? "text report exits 0"
tap_like "$(cat "$TMPDIR_T/text")" '^\* .* step \[fx-open\.c:[0-9]+\]$' \
	"step is a high-variance node (*)"
tap_is 1 "$(grep -c '^  open at the end: *2 ' "$TMPDIR_T/text")" "totals: 2 open at the end"

tap_done
