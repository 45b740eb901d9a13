#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-recurse-t.sh - record fx-recurse (50 calls of rec(100), 100 frames
# deep each).  The kernel keeps at most 64 pending return probes per task
# (MAX_URETPROBE_DEPTH in kernel/events/uprobes.c) and skips the return
# probe of any deeper frame, counting every probed frame of the thread:
# with -f rec the 64 outermost rec frames of each call report a return and
# 36 do not; with main probed as well, main takes one of the 64 slots and
# 37 do not.  varperf must count the frames without a return as unpaired
# (not as wrong durations), still time the outermost calls right, and say
# how many exits the kernel dropped, at record and at report time.  With
# --exit-probes=ret the exits are probes on rec's ret instruction, which
# the kernel does not count as pending returns: every level is paired; and
# --exit-probes=auto (the default) does that for rec, which calls itself.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-recurse"

. "$top_srcdir/tests/lib/json-subr.sh"

# rec_chain N - the chain of the top-level rec node's descendant at depth N.
rec_chain() {
	"$AWK" -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "/rec"; print "" }'
}

tap_plan 47

# the kernel's limit, as record and report say it
lost_rec() {
	printf "varperf: warning: %s calls of 'rec' lost their exits: the kernel keeps at most 64 \
return probes pending per thread and drops those of calls nested deeper (record with \
--exit-probes=ret or --exit-probes=auto)" "$1"
}
lost_report() {
	printf "varperf: warning: '%s': %s calls (%s of them of 'rec') have no exit: the kernel \
keeps at most 64 return probes pending per thread and drops those of calls nested deeper; \
they are counted as unpaired, their callers' times are right (record with --exit-probes=ret \
or auto)" "$1" "$2" "$2"
}

# ---- only rec probed: 64 return probes per outer call ----
"$VARPERF" record --mode=probe -q --exit-probes=uretprobe -f rec -o "$TMPDIR_T/rec.data" -- \
	"$FIXTURES/fx-recurse" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record -f rec exits 0"
tap_is "$(lost_rec 1800)" "$(cat "$TMPDIR_T/err")" "record says 50 x 36 calls lost their exits"
tap_is 5000 "$(q count "$T" rec)" "the fixture made 5000 rec calls"
report_json "$TMPDIR_T/rec.data" "report exits 0"

tap_is 0 "$(q totals "$R" lost)" "no records lost"
# 5000 entries, and returns only from the 64 outermost frames of each call.
tap_is 8200 "$(q totals "$R" events)" "5000 entries and 50 x 64 returns recorded"
tap_is 3200 "$(q func "$R" rec count)" "50 x 64 rec invocations paired"
tap_is 1800 "$(q totals "$R" unpaired)" "50 x 36 frames deeper than 64 are unpaired"
tap_is 1800 "$(q sum "$R" rec unpaired)" "the unpaired frames are rec's"
tap_is 1800 "$(q totals "$R" unpaired_nested)" "... all of them past the kernel's 64 (JSON)"
(cd "$TMPDIR_T" && "$VARPERF" report -i rec.data >/dev/null 2>err2)
# (the calls past 64 cost less than a calibrated call, having no return
# probe: compensation clamps some of their callers, and says so apart)
tap_is "$(lost_report rec.data 1800)" "$(grep 'have no exit' "$TMPDIR_T/err2")" \
	"report says so too"
tap_is 0 "$(q totals "$R" unmatched_exits)" "every return matches an entry"
tap_is 100 "$(q nodes "$R" rec)" "one node per recursion depth"
tap_is 50 "$(q node "$R" /rec/rec/rec count)" "depth 3: 50 paired"
d64=$(rec_chain 64)
d65=$(rec_chain 65)
tap_is "50 0" "$(q node "$R" "$d64" count) $(q node "$R" "$d64" unpaired)" \
	"depth 64: the last frame with a return (50 paired, 0 unpaired)"
tap_is "0 50" "$(q node "$R" "$d65" count) $(q node "$R" "$d65" unpaired)" \
	"depth 65: the first frame without one (0 paired, 50 unpaired)"
q compare "$R" "$T" rec main/rec /rec >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

# ---- main probed too: it holds one of the 64 slots ----
"$VARPERF" record --mode=probe -q --exit-probes=uretprobe -o "$TMPDIR_T/all.data" -- \
	"$FIXTURES/fx-recurse" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record exits 0"
tap_is "$(lost_rec 1850)" "$(cat "$TMPDIR_T/err")" "record says 50 x 37 calls lost their exits"
report_json "$TMPDIR_T/all.data" "report exits 0"
tap_is 3150 "$(q func "$R" rec count)" "50 x 63 rec invocations paired"
tap_is 1850 "$(q sum "$R" rec unpaired)" "50 x 37 rec frames unpaired"
q compare "$R" "$T" rec main/rec main/rec >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

# ---- exit probes on ret instructions: no limit ----
if ! "$VARPERF" version --build-options | grep -q '^capstone: on$'; then
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		tap_skip "varperf was built without capstone (--exit-probes=ret)"
	done
	tap_done
fi
"$VARPERF" record --mode=probe -q --exit-probes=ret -f rec -o "$TMPDIR_T/ret.data" -- \
	"$FIXTURES/fx-recurse" >"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record --exit-probes=ret -f rec exits 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
report_json "$TMPDIR_T/ret.data" "report exits 0"
tap_is "0 10000 0 0" "$(q totals "$R" lost) $(q totals "$R" events) \
$(q totals "$R" unpaired) $(q totals "$R" unmatched_exits)" \
	"5000 entries and 5000 exits, nothing unpaired or unmatched"
tap_is 5000 "$(q func "$R" rec count)" "all 5000 rec invocations paired"
tap_is 100 "$(q nodes "$R" rec)" "one node per recursion depth"
d100=$(rec_chain 100)
tap_is "50 50 0" "$(q node "$R" "$d65" count) $(q node "$R" "$d100" count) \
$(q node "$R" "$d100" unpaired)" "depths 65 and 100, the innermost: 50 paired each"
q compare "$R" "$T" rec main/rec /rec >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

# ---- the default: rec calls itself, so its exits are probed at its ret ----
"$VARPERF" record --mode=probe -o "$TMPDIR_T/auto.data" -- "$FIXTURES/fx-recurse" >"$T" \
	2>"$TMPDIR_T/err"
tap_is 0 $? "record (exit probes auto) exits 0"
tap_is 1 "$(grep -c "^varperf: 1 recursive function (calling itself) with exit probes on its \
ret instructions: the kernel drops the return probes of calls nested more than 64 deep$" \
	"$TMPDIR_T/err")" "record says rec's exits are probed at its ret instructions"
tap_is 0 "$(grep -c warning "$TMPDIR_T/err")" "and warns of nothing"
report_json "$TMPDIR_T/auto.data" "report exits 0"
tap_is "5000 0" "$(q func "$R" rec count) $(q totals "$R" unpaired)" \
	"all 5000 rec invocations paired, the true count"

tap_done
