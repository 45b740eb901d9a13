#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-longjmp-t.sh - record fx-longjmp: outer -> mid -> inner, where
# inner longjmps back to outer on every other call.  The kernel drops the
# pending return probes of the frames a longjmp skips, so those mid and
# inner invocations have an entry and no exit: varperf must count them as
# unpaired, keep them out of the statistics, and still time outer (which
# always returns) and the mid and inner calls that did return.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-longjmp"

. "$top_srcdir/tests/lib/json-subr.sh"

tap_plan 24

"$VARPERF" record --mode=probe -q -o "$TMPDIR_T/x.data" -- "$FIXTURES/fx-longjmp" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits with the target's status 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is 100 "$(q count "$T" jumps)" "the fixture jumped 100 times"
report_json "$TMPDIR_T/x.data" "report --format json exits 0"

tap_is 0 "$(q totals "$R" lost)" "no records lost"
tap_is 0 "$(q totals "$R" unmatched_exits)" "every exit matches an entry"
# Exactly the skipped frames: mid and inner of each jump.
jumped=$(($(q count "$T" mid_jumped) + $(q count "$T" inner_jumped)))
tap_is "$jumped" "$(q totals "$R" unpaired)" "unpaired = frames skipped by longjmp"
tap_is 0 "$(q node "$R" main/outer unpaired)" "outer: none unpaired"
tap_is "$(q count "$T" mid_jumped)" "$(q node "$R" main/outer/mid unpaired)" \
	"mid: the jumped-over invocations are unpaired"
tap_is "$(q count "$T" inner_jumped)" "$(q node "$R" main/outer/mid/inner unpaired)" \
	"inner: the jumped-over invocations are unpaired"

q compare "$R" "$T" outer main/outer main/outer >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"
# Only the invocations that returned are in the statistics.
q compare "$R" "$T" mid main/outer/mid main/outer/mid >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"
q compare "$R" "$T" inner main/outer/mid/inner main/outer/mid/inner >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

tap_done
