#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-output-t.sh - where record writes, and what it leaves behind: only
# regular files (or new ones), never over its own inputs (the program,
# report's and compare's input); a new file gets the mode of any new file
# (0666 less the umask), phase 1 kept by auto mode too; a varperf killed
# with SIGKILL leaves what it sampled in the file (and no temporary file);
# a full disk keeps what was written, and one full from the start leaves
# an existing file as it was; a program that writes (or replaces) the
# output's path while it is recorded is an error, not a silent loss.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3 mknod mkfifo
require_file "$VARPERF" "$FIXTURES/fx-shares" "$FIXTURES/fx-stdin" "$FIXTURES/fx-watchdog" \
	"$FIXTURES/fx-clobber"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
umask 002

# samples FILE: the mode of FILE and how many samples report reads in it
# (its messages in BASENAME.err, here: FILE's disk may be full)
samples() {
	_b=$(basename "$1")
	"$VARPERF" report -i "$1" --format json >"$_b.json" 2>"$_b.err" &&
		python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["mode"], j["sampled"]["samples"])' "$_b.json"
}

# leftovers: the files a recording may not leave next to its output
leftovers() {
	ls -a | grep -E '\.(phase1|vp-)' || true
}

# mode FILE: its permission bits, octal
mode() {
	stat -c %a "$1"
}

# kill_recording PID: SIGKILL varperf, then the program it ran
kill_recording() {
	_t=$(pgrep -P "$1")
	kill -KILL "$1"
	wait "$1" 2>/dev/null
	[ -n "$_t" ] && kill -KILL $_t 2>/dev/null
}

# ---- not a regular file: refused before anything runs ----
mknod null c 1 3
mkfifo fifo
echo data >target
ln -s target link
ln -s nothing dangling
ln -s null devlink
for o in "null|it is a character device, not a regular file" \
	"fifo|it is a FIFO, not a regular file" \
	".|it is a directory, not a regular file" \
	"dangling|it is a symbolic link to nothing (No such file or directory)" \
	"devlink|it is a symbolic link to a character device, not to a regular file"; do
	f=${o%%|*}
	seq 1 10 | "$VARPERF" record --phase1-duration 30 -o "$f" -- "$FIXTURES/fx-stdin" \
		>out 2>err
	tap_is "1 varperf: error: cannot write '$f': ${o#*|}" "$? $(cat err)" \
		"auto mode, -o $f: refused"
	tap_is "" "$(cat out)" "... before the program ran"
done
tap_is "character special file 1,3 fifo nothing null" \
	"$(stat -c '%F %t,%T' null) $(stat -c %F fifo) $(readlink dangling) $(readlink devlink)" \
	"... and each is as it was"
tap_ok "$(test ! -e nothing; echo $?)" "... no file made where the dangling link points"
"$VARPERF" record -q --mode=sample -o null -- "$FIXTURES/fx-shares" 10 >out 2>err
tap_is "1 varperf: error: cannot write 'null': it is a character device, not a regular file" \
	"$? $(cat err)" "sample mode, -o a character device: refused too"
"$VARPERF" record -q --mode=probe -f alpha -o fifo -- "$FIXTURES/fx-shares" 10 >out 2>err
tap_is "1 varperf: error: cannot write 'fifo': it is a FIFO, not a regular file" \
	"$? $(cat err)" "probe mode, -o a FIFO: refused too"

# ---- a symbolic link to a regular file: that file is written ----
# (the program ends within phase 1 and its input is a pipe: phase 1 is
# kept, which once renamed a file over the link)
seq 1 10 | "$VARPERF" record --phase1-duration 30 -o link -- "$FIXTURES/fx-stdin" >out 2>err
tap_is 1 $? "auto mode, phase 1 kept, -o a symbolic link: exit 1 (no phase 2)"
tap_is "target 2" "$(readlink link) $(samples target | cut -d' ' -f1)" \
	"... the link stays, and the file it names holds the sampling run"

# ---- the program, report's input, compare's inputs ----
cp "$FIXTURES/fx-shares" prog
"$VARPERF" record -q --mode=sample -o prog -- ./prog 10 >out 2>err
tap_is "129 varperf: error: cannot write 'prog': it is the program '$TMPDIR_T/prog'" \
	"$? $(cat err)" "record -o ./prog -- ./prog: a usage error"
tap_ok "$(cmp -s prog "$FIXTURES/fx-shares"; echo $?)" "... and the program is as it was"
seq 1 10 | "$VARPERF" record --phase1-duration 30 -o prog -- ./prog 10 >out 2>err
tap_is "129 varperf: error: cannot write 'prog': it is the program '$TMPDIR_T/prog'" \
	"$? $(cat err)" "... in auto mode too"
tap_ok "$(cmp -s prog "$FIXTURES/fx-shares"; echo $?)" "... which leaves it as it was too"

"$VARPERF" record -q --mode=sample -o s.data -- "$FIXTURES/fx-shares" 200 >out 2>err
tap_is 0 $? "a sampling run"
cp s.data s.copy
ln -s s.data s.link
for o in s.data s.link; do
	"$VARPERF" report -i s.data -o $o >out 2>err
	tap_is "129 varperf: error: cannot write '$o': it is the input 's.data'" \
		"$? $(cat err)" "report -i s.data -o $o: a usage error"
done
"$VARPERF" compare -o s.data s.copy s.data >out 2>err
tap_is "129 varperf: error: cannot write 's.data': it is the input 's.data'" \
	"$? $(cat err)" "compare -o s.data s.copy s.data: a usage error"
tap_ok "$(cmp -s s.data s.copy; echo $?)" "... and the recording is as it was"

# ---- the mode of a new file: 0666 less the umask (002 here) ----
tap_is 664 "$(mode s.data)" "sample mode's output: 664"
seq 1 10 | "$VARPERF" record --phase1-duration 30 -o kept.data -- "$FIXTURES/fx-stdin" \
	>out 2>err
tap_is "1 664" "$? $(mode kept.data)" "auto mode's kept phase 1: 664 too"
tap_like "$(cat err)" "^varperf: warning: the program ended within phase 1: 'kept\.data' holds the sampling run \(phase 1\) only$" \
	"... which it says"
tap_is "" "$(leftovers)" "no temporary file left so far"

# ---- SIGKILL: what was sampled is in the file ----
"$VARPERF" record --mode=sample -o k.data -- "$FIXTURES/fx-shares" 100000 >out 2>err &
vp=$!
sleep 4
kill_recording $vp
tap_like "$(samples k.data)" "^2 [1-9][0-9]*$" \
	"sample mode killed after 4 s: report reads its samples"
tap_like "$(cat k.data.err)" "recording incomplete: no END chunk" "... and says it is incomplete"

wait_unprobed
"$VARPERF" record --phase1-duration 30 -o k1.data -- "$FIXTURES/fx-watchdog" 5000 >out 2>err &
vp=$!
for _i in $(seq 1 100); do
	grep -q 'phase 1 of 2' err && break
	sleep 0.1
done
sleep 3
kill_recording $vp
tap_like "$(samples k1.data)" "^2 [1-9][0-9]*$" \
	"auto mode killed in phase 1: report reads the sampling run"
tap_is "664 " "$(mode k1.data) $(leftovers)" "... mode 664, and no temporary file left"

# (hot() not probed: where probes cost 7 us, not 2, its 4000 calls a
# round make the watchdog leave out the first seconds of phase 2, and
# medium()'s calls in them; the watchdog is auto-t.sh's subject)
wait_unprobed
"$VARPERF" record --exclude hot -o k2.data -- "$FIXTURES/fx-watchdog" 5000 >out 2>err &
vp=$!
for _i in $(seq 1 100); do
	grep -q 'phase 2 of 2' err && break
	sleep 0.1
done
sleep 3
kill_recording $vp
samples k2.data >/dev/null
tap_is "3 True True" "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["mode"], j["sampled"]["samples"] > 0,
      sum(n["count"] for n in j["nodes"] if n["function"] == "medium") > 0)' k2.data.json)" \
	"auto mode killed in phase 2: both phases in the file, medium() timed"
tap_is "" "$(leftovers)" "... and no temporary file left"

# ---- the program writes the output's path: an error, exit 1 ----
wait_unprobed
for how in truncate replace; do
	[ $how = truncate ] && arg= || arg=replace
	"$VARPERF" record --mode=probe -o own.data -- "$FIXTURES/fx-clobber" own.data 0.6 $arg \
		>out 2>err
	rc=$?
	tap_like "$(cat out)" "^fx-clobber wrote [1-9][0-9]* times" \
		"fx-clobber ($how) wrote its own -o file while recorded"
	if [ $how = truncate ]; then
		why="overwritten while varperf wrote it: it no longer begins with a varperf data file's magic"
	else
		why="replaced while varperf wrote it (by another file)"
	fi
	tap_is "1 varperf: error: 'own.data' was $why" "$rc $(grep error: err | head -1)" \
		"... record says so ($how), exit 1"
	tap_unlike "$(cat err)" "recorded [0-9]* events" "... and claims no recording"
	tap_like "$(head -c 11 own.data)" "^prog wrote" "... the file holds what the program wrote"
done
"$VARPERF" record --mode=probe -o clean.data -- "$FIXTURES/fx-clobber" - 0.3 >out 2>err
tap_is "0 " "$? $(grep error: err)" "fx-clobber writing nothing: recorded, exit 0"
"$VARPERF" report -i clean.data --format json >clean.json 2>err
tap_is 0 $? "... and report reads the file whole"
tap_is "" "$(leftovers)" "... no temporary file left"

# ---- a full disk ----
mkdir m
if ! mount -t tmpfs -o size=64k tmpfs m 2>err; then
	tap_skip "cannot mount a small tmpfs: $(cat err)" 9
	tap_done
fi
# full from the start: an existing file stays, a new one is not made
echo old >m/old.data
dd if=/dev/zero of=m/fill bs=4k 2>/dev/null
"$VARPERF" record -q --mode=sample -o m/old.data -- "$FIXTURES/fx-shares" 10 >out 2>err
tap_is "1 varperf: error: cannot create 'm/old.data': No space left on device" \
	"$? $(cat err)" "a full disk: cannot create"
tap_is "old" "$(cat m/old.data)" "... and the file there is as it was"
"$VARPERF" record -q --mode=sample -o m/new.data -- "$FIXTURES/fx-shares" 10 >out 2>err
tap_is "1 " "$? $(cd m && ls | grep -v -e '^fill$' -e '^old\.data$')" \
	"... and makes no empty file for a new name"
# full in phase 1: the file keeps what phase 1 wrote, and phase 1 ends
# there.  (Its first second takes some 25 KiB, each one after 10 KiB at
# 1 kHz: the 40 KiB left fill within seconds.)
rm -f m/*
dd if=/dev/zero of=m/fill bs=4k count=6 2>/dev/null
wait_unprobed
"$VARPERF" record --phase1-duration 30 -o m/p1.data -- "$FIXTURES/fx-watchdog" 5000 \
	>out 2>err
tap_is 1 $? "a disk full in phase 1: exit 1"
tap_like "$(cat err)" "^varperf: error: 'm/p1\.data' is incomplete: only [0-9]+ bytes were written$" \
	"... says the file is incomplete"
tap_like "$(cat err)" "^varperf: warning: no phase 2: 'm/p1\.data' holds what phase 1 could write$" \
	"... and that it holds phase 1"
tap_unlike "$(cat err)" "phase 2 of 2" "... does not go on to phase 2"
tap_like "$(samples m/p1.data)" "^2 [1-9][0-9]*$" "... and keeps what phase 1 wrote, readable"
tap_is "" "$(cd m && leftovers)" "... and no temporary file"
umount m

tap_done
