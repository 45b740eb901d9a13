#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-errors-t.sh - varperf record's failures and endings: programs that
# cannot run or be probed, bad options, the target's exit status and death
# by a signal passed on, and an interrupted recording that still leaves a
# complete, reportable file.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-basic" "$FIXTURES/fx-watchdog"

. "$top_srcdir/tests/lib/json-subr.sh"

D=$TMPDIR_T

tap_plan 63

# ---- programs that cannot be recorded ----
"$VARPERF" record --mode=probe -q -o "$D/n.data" -- nonexistent-prog >"$D/out" 2>"$D/err"
tap_is 1 $? "a program not in PATH: exit 1"
tap_is "varperf: error: cannot run 'nonexistent-prog': No such file or directory" \
	"$(cat "$D/err")" "a program not in PATH: the error names it"
tap_ok "$(test ! -e "$D/n.data"; echo $?)" "a program not in PATH: no data file"

"$VARPERF" record --mode=probe -q -o "$D/n.data" -- "$D/nope" >"$D/out" 2>"$D/err"
tap_is 1 $? "a missing path: exit 1"
tap_is "varperf: error: cannot run '$D/nope': No such file or directory" "$(cat "$D/err")" \
	"a missing path: the error names it"

printf '#!/bin/sh\necho hello\n' >"$D/script.sh"
chmod +x "$D/script.sh"
"$VARPERF" record --mode=probe -q -o "$D/n.data" -- "$D/script.sh" >"$D/out" 2>"$D/err"
tap_is 1 $? "a shell script: exit 1"
tap_is "varperf: error: '$D/script.sh' is not an ELF file" "$(cat "$D/err")" \
	"a shell script: not an ELF file"
tap_is "" "$(cat "$D/out")" "a shell script: it did not run"
tap_ok "$(test ! -e "$D/n.data"; echo $?)" "a shell script: no data file"

"$VARPERF" record --mode=probe -q -f 'no_such_function*' -o "$D/n.data" -- "$FIXTURES/fx-basic" \
	>"$D/out" 2>"$D/err"
tap_is 1 $? "-f matching nothing: exit 1"
tap_is "varperf: error: no function matches 'no_such_function*' in '$FIXTURES/fx-basic'" \
	"$(cat "$D/err")" "-f matching nothing: the error names the glob and the file"
tap_is "" "$(cat "$D/out")" "-f matching nothing: the program did not run"

# ---- usage errors ----
"$VARPERF" record --mode=probe --bogus -- "$FIXTURES/fx-basic" >"$D/out" 2>"$D/err"
tap_is 129 $? "an unknown option: exit 129"
tap_is "varperf: error: unknown option '--bogus'" "$(head -n 1 "$D/err")" \
	"an unknown option: the error names it"
tap_like "$(cat "$D/err")" '^usage: varperf record ' "an unknown option: usage follows"
tap_is "" "$(cat "$D/out")" "an unknown option: the program did not run"

"$VARPERF" record --mode=probe -q >"$D/out" 2>"$D/err"
tap_is 129 $? "no program: exit 129"
tap_is "varperf: error: no program to record" "$(head -n 1 "$D/err")" "no program: the error"

# an option the mode would ignore, or out of range (in report's words
# where report has the option): nothing runs
for args in "--mode=probe -F 100|-F is for sampling: --mode=probe samples nothing" \
	"--mode=probe --stack-size 1024|--stack-size is for sampling: --mode=probe samples nothing" \
	"--mode=probe -e task-clock|--event is for sampling: --mode=probe samples nothing" \
	"--mode=sample --overhead 3%|--overhead is for --mode=auto, which chooses what to probe" \
	"--mode=combined --cutoff 1%|--cutoff is for --mode=auto, which chooses what to probe" \
	"--cutoff -1%|invalid value '-1%' for '--cutoff': must be at least 0 and less than 1 (100%)" \
	"--overhead 1000%|invalid value '1000%' for '--overhead': must be greater than 0 and less than 10 (1000%)" \
	"--precision 50%|invalid value '50%' for '--precision': must be greater than 0 and less than 0.5 (50%)" \
	"--confidence 0.5|invalid value '0.5' for '--confidence': must be greater than 0.5 and less than 1 (100%)"; do
	# shellcheck disable=SC2086 # the options are words
	"$VARPERF" record ${args%%|*} -o "$D/m.data" -- "$FIXTURES/fx-basic" >"$D/out" 2>"$D/err"
	tap_is "129 varperf: error: ${args#*|}" "$? $(head -n 1 "$D/err")" "${args%%|*}: usage error"
done
tap_ok "$(test ! -e "$D/m.data" && test ! -s "$D/out"; echo $?)" \
	"... and none ran the program or wrote a file"

# ---- --duration on a program varperf runs: SIGINT, then SIGKILL ----
# (sampling: no probes to place or remove, so the timing is the program's)
"$VARPERF" record --mode=sample --duration 0.5 -o "$D/du.data" -- "$FIXTURES/fx-basic" long-cpu \
	>"$D/out" 2>"$D/err"
tap_is "130 started" "$? $(head -n 1 "$D/out")" "--duration 0.5: the program is interrupted, exit 130"
"$VARPERF" report -i "$D/du.data" --format json >"$R" 2>/dev/null
tap_is "2 true" "$(q target "$R" signal) $(q totals "$R" complete)" \
	"... its file complete, with the SIGINT it ended by"
# cpu-clock at 1 kHz samples each ms the program runs: about 500 when it
# has a CPU to itself, and on a busy machine about what it says it ran
# (long-cpu: "cpu_ns=" at its SIGINT): half of that at least, 250 at most asked.
ran=$(sed -n 's/^cpu_ns=//p' "$D/out")
tap_is ok "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["sampled"]["samples"]
ran = int(sys.argv[2] or 0) / 1e6
print("ok" if min(250, ran / 2) <= s <= 750 else
      "%d samples, the program ran %.0f ms" % (s, ran))' "$R" "$ran")" \
	"... and about 0.5 s of samples at 1 kHz (or what it ran of it)"
"$VARPERF" record --mode=sample --duration 0.3 -o "$D/dk.data" -- \
	sh -c 'trap "" INT; while :; do :; done' >"$D/out" 2>"$D/err"
tap_is "137 varperf: warning: 'sh' did not stop within 5 s of SIGINT: killing it" \
	"$? $(grep warning "$D/err" | head -n 1)" "a program that ignores SIGINT is killed 5 s later"
"$VARPERF" report -i "$D/dk.data" --format json >"$R" 2>/dev/null
tap_is "9 true" "$(q target "$R" signal) $(q totals "$R" complete)" \
	"... and its file is complete too"

# ---- the target's exit status is varperf's ----
"$VARPERF" record --mode=probe -q -o "$D/e.data" -- "$FIXTURES/fx-basic" exit3 >"$D/truth" 2>"$D/err"
tap_is 3 $? "a target exiting 3: record exits 3"
[ -s "$D/err" ] && tap_diag "$(cat "$D/err")"
"$VARPERF" report --raw -i "$D/e.data" --format json >"$R" 2>"$D/err"
tap_is 0 $? "a target exiting 3: the file is reportable"
tap_is 3 "$(q target "$R" exit_code)" "a target exiting 3: its exit code is in the file"
tap_is 400 "$(q node "$R" main/run/work count)" "a target exiting 3: all 400 work calls"

# ---- the target killed by SIGSEGV after 100 run() calls ----
"$VARPERF" record --mode=probe -q -o "$D/c.data" -- "$FIXTURES/fx-basic" crash >"$D/truth" 2>"$D/err"
tap_is 139 $? "a target killed by SIGSEGV: record exits 128 + 11"
[ -s "$D/err" ] && tap_diag "$(cat "$D/err")"
tap_is 100 "$(q truth "$D/truth" run main/run count)" "the target ran run() 100 times"
"$VARPERF" report --raw -i "$D/c.data" --format json >"$R" 2>"$D/err"
tap_is 0 $? "the crashed target's file is reportable"
[ -s "$D/err" ] && tap_diag "$(cat "$D/err")"
tap_is true "$(q totals "$R" complete)" "the crashed target's file is complete"
tap_is 11 "$(q target "$R" signal)" "the file records SIGSEGV"
tap_is 100 "$(q node "$R" main/run count)" "run: the 100 calls before the crash"
tap_is 100 "$(q node "$R" main/run/work count)" "work: the 100 calls before the crash"
tap_is "$(q count "$D/truth" leaf)" "$(q node "$R" main/run/leaf count)" \
	"leaf: the calls before the crash"
# main died inside itself: its entry has no return.
tap_is 1 "$(q node "$R" main unpaired)" "main is unpaired"
tap_is 1 "$(q totals "$R" unpaired)" "nothing else is unpaired"

# ---- SIGINT to varperf: the target is stopped, the file finished ----
"$VARPERF" record --mode=probe -q -o "$D/i.data" -- "$FIXTURES/fx-basic" long >"$D/truth" 2>"$D/err" &
vpid=$!
# Wait (up to 30 s) until the target runs under the probes.
i=0
while [ $i -lt 300 ] && ! grep -q '^started$' "$D/truth" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
tap_is started "$(head -n 1 "$D/truth")" "the long-running target started"
sleep 0.5
kill -INT $vpid
# Wait (up to 30 s) for varperf to finish; never hang the test suite.
i=0
while [ $i -lt 300 ] && kill -0 $vpid 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 $vpid 2>/dev/null; then
	tap_fail "varperf ends within 30 s of SIGINT"
	kill -KILL $vpid
else
	tap_pass "varperf ends within 30 s of SIGINT"
fi
wait $vpid
tap_is 130 $? "varperf passes on the target's death by SIGINT (128 + 2)"
[ -s "$D/err" ] && tap_diag "$(cat "$D/err")"
"$VARPERF" report --raw -i "$D/i.data" --format json >"$R" 2>"$D/err"
tap_is 0 $? "the interrupted recording is reportable"
[ -s "$D/err" ] && tap_diag "$(cat "$D/err")"
tap_is true "$(q totals "$R" complete)" "the interrupted recording is complete"
tap_is true "$(q target "$R" interrupted)" "the file says it was interrupted"
tap_is 2 "$(q target "$R" signal)" "the file records the target's SIGINT"
tpid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$R")
tap_ok "$(kill -0 "$tpid" 2>/dev/null; test $? -ne 0; echo $?)" "the target is gone"
# About 3 run() calls per ms ran in 0.5 s: at least some were recorded, and
# at most main, run and work were open when SIGINT came.
tap_is ok "$(q le 10 "$(q node "$R" main/run/work count)")" "work calls were recorded"
tap_is ok "$(q le "$(q totals "$R" unpaired)" 3)" "at most main, run and work are unpaired"

# ---- Ctrl-C before the program runs ----
# varperf itself as the program, its 200-odd vp_* functions probed: once
# it says what it probes, opening their 900 probes takes long enough for
# the signal to come before the program starts.
cp "$VARPERF" "$D/vp-target"
"$VARPERF" record --mode=probe -f 'vp_*' -o "$D/early.data" -- "$D/vp-target" version \
	>"$D/out" 2>"$D/err" &
vpid=$!
for _i in $(seq 1 500); do
	grep -q '^varperf: probing' "$D/err" && break
	sleep 0.01
done
kill -INT $vpid
wait $vpid
st=$?
if [ -s "$D/out" ]; then
	tap_skip "the program ran before the signal came (a fast machine)" 3
else
	tap_is 130 $st "Ctrl-C while getting ready: exit 130"
	# (what it probes, and how: "probing ...", "probe cost ...", the
	# recursive functions whose deep calls lose their return probes)
	tap_is "" "$(grep -v -e '^varperf: prob' -e '^varperf: [0-9]* recursive function' "$D/err")" \
		"... without an error"
	tap_ok "$(test ! -e "$D/early.data"; echo $?)" "... and no data file"
fi

# ---- buffers that overflow: every lost record is counted ----
# varperf is stopped while fx-watchdog calls hot() 200 000 times: a 16 KiB
# buffer holds a few hundred records, the rest is lost after the last
# record the kernel could write (no LOST record follows: the program is
# gone).  Recorded and lost must add up to the calls the fixture made.
"$VARPERF" record --mode=probe -m 16K -f hot -f medium -o "$D/ov.data" -- \
	"$FIXTURES/fx-watchdog" 50 >"$D/out" 2>"$D/err" &
vpid=$!
# once the program runs (varperf calibrates first), stop varperf until the
# program has exited (a zombie: varperf, stopped, cannot reap it)
tpid=
for _i in $(seq 1 100); do
	tpid=$(pgrep -x fx-watchdog -P $vpid) && break
	sleep 0.1
done
sleep 0.2
kill -STOP $vpid
for _i in $(seq 1 300); do
	[ -z "$tpid" ] || [ "$(cut -d' ' -f3 /proc/$tpid/stat 2>/dev/null)" != R ] &&
		[ "$(cut -d' ' -f3 /proc/$tpid/stat 2>/dev/null)" != S ] && break
	sleep 0.1
done
kill -CONT $vpid
wait $vpid
tap_is 0 $? "a recording whose buffers overflowed exits 0"
tap_like "$(cat "$D/err")" "^varperf: warning: [0-9]+ records were lost: the ring buffers overflowed" \
	"... warns that records were lost"
"$VARPERF" report --raw -i "$D/ov.data" --format json >"$R" 2>"$D/err"
calls=$("$AWK" '$1 == "calls" { print 2 * ($3 + $5) }' "$D/out")
tap_is "$calls" "$(($(q totals "$R" events) + $(q totals "$R" lost)))" \
	"... and events recorded plus lost are the fixture's 2 x $calls / 2 calls"

tap_done
