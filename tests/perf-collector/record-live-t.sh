#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-live-t.sh - the status line of "varperf record" on a terminal:
# drawn in place about once a second (carriage return, erase to the end
# of the line), its figures growing with the run, cut to the terminal's
# width, erased before any other message so that none is garbled, and
# gone from the screen at the end.  Off a terminal, and under -q,
# nothing of it.  The terminal is a pseudo-terminal (pty-run.py); what
# it shows at the end is worked out by term-screen.py.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-basic"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

pty="python3 $top_srcdir/tests/perf-collector/pty-run.py"
screen="python3 $top_srcdir/tests/perf-collector/term-screen.py"
prog=$FIXTURES/fx-basic
hint='Ctrl-C stops and keeps the data'

# ---- probe mode on a wide terminal: the whole line, three times ----
wait_unprobed
$pty --cols 200 --ctrl-c-after "$hint" --times 3 --delay 0.3 tty.out -- \
	"$VARPERF" record --mode=probe -f work -f leaf -o p.data -- "$prog" long
tap_is 130 $? "Ctrl-C on the terminal: exit 130 (the program's death by SIGINT)"
$screen --drawn tty.out >drawn
tap_is 3 "$(grep -c "; $hint\$" drawn)" "the status line was drawn three times, a second apart"
tap_like "$(sed -n 1p drawn)" \
	"^varperf: 1 s: [1-9][0-9]* calls timed, 0 lost, probes ~[0-9.]+ [mu]?s \([0-9]+\.[0-9]% of its CPU\); $hint\$" \
	"... saying the time, the calls timed, the records lost, the probes' cost and how to stop"
tap_is "1 2 3" "$(sed -n 's/^varperf: \([0-9]*\) s:.*/\1/p' drawn | head -n 3 | tr '\n' ' ' | sed 's/ $//')" \
	"... the elapsed seconds counting up"
calls=$(sed -n 's/^varperf: [0-9]* s: \([0-9]*\) calls timed.*/\1/p' drawn | head -n 3 | tr '\n' ' ')
tap_ok "$(echo "$calls" | "$AWK" '{ exit !($1 < $2 && $2 < $3) }'; echo $?)" \
	"... the calls timed growing ($calls)"
$screen tty.out >screen
tap_ok "$(! grep -q "$hint" screen; echo $?)" "no status line is left on the screen at the end"
tap_ok "$(grep -q '^varperf: recorded [0-9]* events in .p\.data. ' screen; echo $?)" \
	"the summary line after it is whole (the status line erased first)"
tap_like "$(grep '^varperf: interrupted' screen)" \
	'^varperf: interrupted after [0-9]+\.[0-9] s; the recording is complete up to there$' \
	"... and so is the interruption's"
# every message the status line preceded begins with its erasure
tap_is 0 "$(LC_ALL=C grep -c "$hint"'varperf:' tty.out)" "no message is appended to a status line"
# the last status line's count is of calls the file has: at most all of them
events=$(sed -n 's/^varperf: recorded \([0-9]*\) events.*/\1/p' screen)
last=$(echo "$calls" | "$AWK" '{ print $3 }')
tap_ok "$(test -n "$events" && test "$last" -le $((events / 2)); echo $?)" \
	"the calls timed so far ($last) are in the file ($events events)"

# ---- -v: messages every round between the draws, each whole ----
# (auto mode's watchdog says what the probes cost at every look)
wait_unprobed
$pty --cols 200 --ctrl-c-after "phase 2/2: [0-9]+ calls timed" --times 2 --delay 0.2 v.out -- \
	"$VARPERF" -v record -o v.data -- "$prog" long
tap_is 130 $? "-v, auto mode: exit 130"
esc=$(printf '\r\033\[K')
tap_ok "$(LC_ALL=C grep -q "${esc}varperf: watchdog: " v.out; echo $?)" \
	"a message erased a status line (in the same write)"
$screen v.out >v.screen
n=$(grep -c 'watchdog: ' v.screen)
tap_is "$n" "$(grep -Ec '^varperf: watchdog: [0-9]+ ms, CPU [0-9.]+ ms, probes still in place cost [0-9.]+ ms, budget [0-9.]+ ms$' v.screen)" \
	"all $n of the watchdog's lines are whole on the screen"
tap_ok "$(! grep -q "$hint" v.screen; echo $?)" "... and no status line is left among them"

# ---- a narrow terminal: shorter words, then cut, never wrapped ----
wait_unprobed
$pty --cols 60 --ctrl-c-after "s: " --delay 0.3 narrow.out -- \
	"$VARPERF" record --mode=probe -f work -f leaf -o n.data -- "$prog" long
tap_is 130 $? "60 columns: exit 130"
# (the messages after it are redrawn lines too)
$screen --drawn narrow.out | grep -v '^varperf: ' >ndrawn
tap_ok "$(test -s ndrawn && "$AWK" 'length($0) >= 60 { bad = 1 } END { exit bad }' ndrawn; echo $?)" \
	"the status line stays within 59 of 60 columns"
tap_like "$(sed -n 1p ndrawn)" '^1 s: [0-9]+ (calls )?timed, 0 lost, probes ~[0-9.]+%' \
	"... the probes' cost as a share, without varperf's prefix"

# ---- sample mode: samples, no probes ----
$pty --cols 120 --ctrl-c-after "$hint" --delay 0.3 s.out -- \
	"$VARPERF" record --mode=sample -o s.data -- "$prog" long
tap_is 130 $? "sample mode: exit 130"
tap_like "$($screen --drawn s.out | sed -n 1p)" "^varperf: 1 s: [1-9][0-9]* samples, 0 lost; $hint\$" \
	"sample mode: the samples so far, no probes' cost"

# ---- -q on a terminal: nothing of it ----
wait_unprobed
$pty --cols 120 q.out -- "$VARPERF" record -q --mode=probe -f work -o q.data --duration 2.5 -- \
	"$prog" long
tap_is 130 $? "-q with --duration 2.5: exit 130 (the program ends as on Ctrl-C)"
tap_is "0 0" "$(grep -c "$hint" q.out) $(LC_ALL=C grep -c "$(printf '\033')" q.out)" \
	"-q: no status line, no escape sequence"

# ---- in the background (a process group of its own): nothing of it ----
wait_unprobed
# (a child in a group of its own, as a shell's "&" with job control)
bg='import os, sys
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.execvp(sys.argv[1], sys.argv[1:])
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))'
$pty --cols 120 bg.out -- python3 -c "$bg" \
	"$VARPERF" record --mode=probe -f work -o bg.data --duration 2.5 -- "$prog" long
tap_is 130 $? "a background job, --duration 2.5: exit 130"
tap_is "0 0" "$(grep -c "$hint" bg.out) $(LC_ALL=C grep -c "$(printf '\033')" bg.out)" \
	"in the background: no status line over the shell's"

# ---- off a terminal: nothing extra ----
wait_unprobed
"$VARPERF" record --mode=probe -f work -o f.data --duration 2.5 -- "$prog" long >/dev/null 2>err
tap_is 130 $? "stderr to a file, --duration 2.5: exit 130"
tap_is "0 0" "$(grep -c "$hint" err) $(LC_ALL=C grep -c "$(printf '[\r\033]')" err)" \
	"off a terminal: no status line, no carriage return or escape"
tap_ok "$(! grep -q 'interrupted' err; echo $?)" "--duration is no interruption"
"$VARPERF" report -i f.data --format json >f.json 2>/dev/null
tap_is "False False" "$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["interrupted"], j["target"]["interrupted"])' f.json)" \
	"... and its file says it was not interrupted"

tap_done
