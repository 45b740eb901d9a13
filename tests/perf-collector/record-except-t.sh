#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-except-t.sh - record fx-except, whose handler() catches an
# exception thrown through level1 -> level2 -> level3 on every 4th call.
#
# A return probe replaces the probed function's return address on the stack
# with the kernel's uretprobe trampoline.  The C++ unwinder finds no unwind
# information for the trampoline, so an exception thrown through a frame
# with a pending return probe finds no handler and std::terminate() aborts
# the target (SIGABRT) at the first throw.  perf probe's return probes do
# the same.  varperf cannot prevent that; what it must do is keep and
# report exactly the data recorded up to the abort and pass the target's
# death on as its own exit status (128 + 6).  Probing only frames the
# exception does not cross (the catcher and its callers) is safe, and is
# checked against the fixture's ground truth.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-except"

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

tap_plan 19

# ---- only the catcher and its caller: the exceptions work ----
"$VARPERF" record -q -f main -f 'handler(*' -o "$TMPDIR_T/safe.data" -- "$FIXTURES/fx-except" \
	>"$T" 2>"$TMPDIR_T/err"
tap_is 0 $? "record -f main -f 'handler(*' exits 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is "50 50" "$(q count "$T" thrown) $(q count "$T" caught)" \
	"the fixture threw and caught 50 exceptions"
"$VARPERF" report -i "$TMPDIR_T/safe.data" --format json >"$R" 2>"$TMPDIR_T/err"
tap_is 0 $? "report exits 0"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is 0 "$(q totals "$R" unpaired)" "nothing unpaired"
q compare "$R" "$T" handler main/handler main/handler >"$TMPDIR_T/c"
tap_from "$TMPDIR_T/c"

# ---- every function: the first exception through a probed frame ----
"$VARPERF" record -q -o "$TMPDIR_T/all.data" -- "$FIXTURES/fx-except" >"$T" 2>"$TMPDIR_T/err"
tap_is 134 $? "record exits 128 + SIGABRT: the target called std::terminate"
tap_like "$(cat "$TMPDIR_T/err")" \
	"^terminate called after throwing an instance of 'std::runtime_error'$" \
	"the target's own message says why"
# "progress handler N": N handler() calls returned before the abort; the
# first throw is in call 4.
done_calls=$(sed -n 's/^progress handler //p' "$T" | tail -n 1)
tap_is 3 "$done_calls" "the target died in the 4th handler() call"
"$VARPERF" report -i "$TMPDIR_T/all.data" --format json >"$R" 2>"$TMPDIR_T/err"
tap_is 0 $? "the recording up to the abort is reportable"
[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
tap_is true "$(q totals "$R" complete)" "the file is complete"
tap_is 6 "$(q target "$R" signal)" "the data file records the target's SIGABRT"
tap_is "$done_calls" "$(q node "$R" main/handler count)" "handler: the returned calls, exactly"
tap_is "$done_calls" "$(q node "$R" main/handler/level1/level2/level3 count)" \
	"level3: the returned calls, exactly"
# Pending at the abort: main, handler, level1, level2, level3.
tap_is 5 "$(q totals "$R" unpaired)" "the five frames open at the abort are unpaired"
tap_is "1 1 1 1 1" "$(for c in main main/handler main/handler/level1 \
	main/handler/level1/level2 main/handler/level1/level2/level3; do
	q node "$R" $c unpaired; done | tr '\n' ' ' | sed 's/ $//')" \
	"one open frame per function"

tap_done
