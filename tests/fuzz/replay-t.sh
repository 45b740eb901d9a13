# SPDX-License-Identifier: GPL-3.0-or-later
# replay-t.sh - the fuzzing corpus through core's reader and analysis,
# compensation, every renderer of report, compare (of each file with
# itself, which must agree), explain, bound and predict, once, as make
# fuzz's target runs it (tests/fuzz/fuzz-report.c): the checked-in inputs,
# which once crashed, exhausted memory or differed from themselves, and
# the seeds gen-crafted writes.  Each must end in an error or a result.

. "$top_srcdir/tests/lib/test-subr.sh"

replay="$top_builddir/tests/fuzz/fuzz-replay"
gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$replay"
require_file "$gen"
"$gen" corpus "$TMPDIR_T" || tap_bail "gen-crafted cannot write the seeds"
# fuzz-replay speaks TAP itself: one line per file
"$replay" "$top_srcdir"/tests/fuzz/corpus/*.data "$TMPDIR_T"/*.data
exit $?
