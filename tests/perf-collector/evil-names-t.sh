#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# evil-names-t.sh - names that cannot drive the terminal: a program whose
# function names and DWARF file name hold newlines, tabs, CR, an ESC
# sequence, DEL, invalid UTF-8 and printf directives (evil-names-mk.py
# builds it from evil-names-tmpl.c), recorded and shown by every terminal
# output: record --list, record's plan and warnings, report's text,
# explain's list of contexts, and the GDB plugin's info variance.  Each
# follows the one rule of util/escape.h: every control character and every
# byte of invalid UTF-8 prints as '?', so each name stays on its line and
# no ESC, CR or DEL reaches the terminal.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3 gcc
require_file "$VARPERF"
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

cp "$top_srcdir/tests/fixtures/evil-names-mk.py" "$top_srcdir/tests/fixtures/evil-names-tmpl.c" . &&
	python3 evil-names-mk.py >mk.out 2>&1 || tap_bail "evil-names-mk.py cannot build ./evil: $(cat mk.out)"

# raw FILE: the control bytes (but newline) and the DEL in FILE, counted
raw() {
	tr -d '\n' <"$1" | tr -cd '\000-\037\177' | wc -c
}
# The names as the rule prints them (the generator's payloads)
nl='new?line?tab?cr?[31mred'
bad='bad???(utf8???end'

# ---- record --list: one line per function, in the rule ----
"$VARPERF" record --mode=probe --list -- ./evil 10 >list.out 2>list.err
tap_is 0 $? "record --list exits 0"
tap_is 9 "$(wc -l <list.out)" "... nine functions, nine lines (a newline in a name splits none)"
tap_is 0 "$(raw list.out)" "... no control byte on standard output"
tap_is 1 "$(grep -cF " uretprobe $nl" list.out)" "... the newline, tab, CR and ESC name as '$nl'"
tap_is 1 "$(grep -cF " uretprobe $bad" list.out)" "... invalid UTF-8 as '$bad'"
tap_is 1 "$(grep -cF 'uretprobe fmt%s%n%p%x%%%999999999s' list.out)" \
	"... printf directives printed as they are"

# ---- record in auto mode: the plan and the warnings ----
wait_unprobed
# (phase 1 the whole first run and --rerun: phase 2 the whole second one,
# however long a busy host makes the run; --overhead: every name stays
# probed, whatever a probe costs on this machine; no standard input, which
# a second run could not read again if it were a pipe, as under CI)
"$VARPERF" record --rerun --phase1-duration 30 --overhead 100% -o e.data -- ./evil 300 \
	>run.out 2>run.err </dev/null
st=$?
tap_is 0 $st "record (auto mode) of ./evil exits 0"
[ $st = 0 ] || tap_diag "$(cat run.err)"
tap_is 0 "$(raw run.err)" "... no control byte in its messages"
tap_is "" "$(grep -v '^varperf: ' run.err)" "... every line of them is one of varperf's"
tap_is 1 "$(grep -cF "varperf:   $nl  " run.err)" "... the plan names '$nl' on its line"

# ---- report's text ----
"$VARPERF" report -i e.data >report.out 2>report.err
tap_is 0 $? "report exits 0"
tap_is 0 "$(($(raw report.out) + $(raw report.err)))" "... no control byte in what it prints"
tap_like "$(grep -cF "$nl [" report.out)" "^[1-9]" "... '$nl' in the report"

# ---- explain's list of a task's calling contexts ----
wait_unprobed
"$VARPERF" record --mode=probe -q -o p.data -- ./evil 100 >/dev/null 2>&1 ||
	tap_bail "cannot record ./evil in probe mode"
if "$VARPERF" version --build-options | grep -q '^gsl: on$'; then
	"$VARPERF" explain -i p.data spin_ns >explain.out 2>explain.err
	tap_is "1 0" "$? $(raw explain.err)" \
		"explain of a task in 7 contexts: exit 1, no control byte in the list"
	tap_is 7 "$(grep -c '^  .* (100 invocations)$' explain.err)" \
		"... the 7 contexts on 7 lines"
else
	tap_skip "varperf was built without GSL" 2
fi

# ---- the GDB plugin ----
LOADER=$top_srcdir/gdb-plugin/varperf-gdb.py
if [ "$(gdb -batch -nx -x "$LOADER" -ex 'python import _varperf; print(6 * 7)' 2>/dev/null)" != 42 ]
then
	tap_skip "the GDB plugin is not built, or gdb has no Python" 6
	tap_done
fi
# only the plugin's output, between markers: GDB's own frame lines are GDB's
gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" \
	-ex 'break spin_ns' -ex 'run 5' -ex 'varperf load p.data' -ex 'echo @@begin\n' \
	-ex 'info variance' -ex 'info variance function spin_ns' -ex 'info variance patterns' \
	-ex 'echo @@end\n' -ex kill ./evil >gdb.all 2>&1
sed -n '/^@@begin$/,/^@@end$/p' gdb.all >gdb.out
tap_is 1 "$(grep -c '^spin_ns: 700 calls in 7 contexts;' gdb.out)" \
	"info variance function spin_ns: 700 calls in 7 contexts"
tap_is 0 "$(raw gdb.out)" "... no control byte in what the plugin printed"
tap_like "$(grep -cF "$bad [" gdb.out)" "^[1-9]" "... '$bad' in the call chains"
sed -n '/^Pattern Set/,/^$/p' gdb.out | sed '1,2d;/^$/d' >patterns.out
tap_like "$(wc -l <patterns.out)" "^[1-9]" "info variance patterns lists patterns"
tap_is "" "$(grep -v -e '^ *[0-9][0-9]*  *[0-9.]*%  ' -e '^  [0-9]* other patterns are not' patterns.out)" \
	"... every line of the patterns table is one pattern (no name split it)"
tap_like "$(grep -cF "$nl [" gdb.out)" "^[1-9]" "... '$nl' in the call chains"
tap_done
