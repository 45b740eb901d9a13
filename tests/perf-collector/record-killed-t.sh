#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-killed-t.sh - nothing varperf leaves behind stops or pins what it
# recorded.  On the BPF backend every child the program forks stops
# (SIGSTOP) until varperf has linked its probes; varperf killed with
# SIGKILL in the middle of fx-forkhold's fork storm (a child every
# millisecond) never continues those it was holding: its guard process
# (varperf-unhold) does.  So the program ends (within a time limit), no
# child of it is left stopped, and the guard ends too; while recording,
# the guard holds nothing of varperf's but its table of held children, a
# pipe and a pidfd, in "/" (probe and combined mode).  The perf backend's
# background remover (varperf-unprobe) likewise runs in "/" and holds the
# events, the probed files and its gate only: the directory varperf ran
# in, and wrote its output to, unmounts at once.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_file "$VARPERF" "$FIXTURES/fx-forkhold" "$FIXTURES/fx-basic"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

prog=$FIXTURES/fx-forkhold
# how long the killed recording's program may take to end: a 3 s storm,
# then the kernel detaching the dead varperf's links (a grace period
# each) while the guard continues what the fork program still stops
limit=90

# children PID STATE: how many children of PID are in a state matching
# the regular expression STATE.
children() {
	ps -eo ppid=,stat= | "$AWK" -v p="$1" -v s="$2" '$1 == p && $2 ~ s { n++ } END { print n + 0 }'
}

# fds PID: the targets of PID's descriptors, one line, sorted; pipes and
# anonymous inodes without their numbers.
fds() {
	for f in /proc/"$1"/fd/*; do
		readlink "$f"
	done | sed 's/^pipe:\[[0-9]*\]$/pipe/' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'
}

# guard_of PID: the pid of PID's child named varperf-unhold, if any.
guard_of() {
	ps -eo pid=,ppid=,comm= | "$AWK" -v p="$1" '$2 == p && $3 == "varperf-unhold" { print $1 }'
}

# The BPF backend, and children held at their fork (Linux 6.13 on).
why=
if ! "$VARPERF" record -q --mode=probe --backend=bpf -f work -o probe.data -- "$prog" 0.05 \
	>/dev/null 2>err; then
	why="no BPF backend here: $(head -n 1 err)"
else
	case $(uname -r) in
	[1-5].* | 6.[0-9].* | 6.1[0-2].*)
		why="Linux $(uname -r) holds no child at its fork (6.13 on)" ;;
	esac
fi
modes="probe combined"
if [ -n "$why" ]; then
	tap_skip "$why" 16
	modes=
fi

for mode in $modes; do
	wait_unprobed
	rm -f out err
	"$VARPERF" record --mode=$mode --backend=bpf -f work -o k.data -- "$prog" 3 >out 2>err &
	vp=$!
	for i in $(seq 1 300); do
		grep -q '^started ' out 2>/dev/null && break
		sleep 0.1
	done
	fpid=$("$AWK" '$1 == "started" { print $2 }' out)
	if [ -z "$fpid" ]; then
		kill -KILL $vp 2>/dev/null
		tap_fail "--mode=$mode: fx-forkhold started under record"
		tap_diag "$(cat err)"
		tap_skip "it did not start" 7
		continue
	fi
	sleep 1
	guard=$(guard_of $vp)
	if [ -n "$guard" ]; then
		gfds=$(fds "$guard")
		gcwd=$(readlink /proc/"$guard"/cwd)
	fi
	kill -KILL $vp
	held=$(children "$fpid" '^T')
	wait $vp 2>/dev/null
	tap_like "$guard" '^[0-9]+$' "--mode=$mode: a guard of the held children runs beside varperf"
	tap_is "/dev/null /dev/null /dev/null anon_inode:[pidfd] anon_inode:bpf-map pipe" "$gfds" \
		"... holding only its table, a pipe and varperf's pidfd"
	tap_is "/" "$gcwd" "... in /"
	tap_diag "--mode=$mode: varperf killed while $held children of fx-forkhold were stopped"
	for i in $(seq 1 $((limit * 5))); do
		grep -q '^done ' out && break
		sleep 0.2
	done
	stopped=$(children "$fpid" '^T')
	tap_like "$(cat out)" '^done [0-9]+$' \
		"... varperf killed (SIGKILL) mid-storm, fx-forkhold ends within $limit s"
	tap_is 0 "$stopped" "... no child of it is left stopped"
	# the guard ends once the dead varperf's programs are gone
	for i in $(seq 1 150); do
		[ "$(cat /proc/"$guard"/comm 2>/dev/null)" = varperf-unhold ] || break
		sleep 0.2
	done
	tap_unlike "$(cat /proc/"$guard"/comm 2>/dev/null)" '^varperf-unhold$' "... and the guard ends"
	if [ "$stopped" -ne 0 ] || ! grep -q '^done ' out; then
		# what the test left: let it go
		ps -eo pid=,ppid= | "$AWK" -v p="$fpid" '$2 == p { print $1 }' |
			xargs -r kill -CONT 2>/dev/null
		kill -KILL "$fpid" 2>/dev/null
	fi
	# (no recording is complete without an END chunk: the file is not checked)
	# A recording that ends: its guard is gone with it.
	"$VARPERF" record -q --mode=$mode --backend=bpf -f work -o ok.data -- "$prog" 0.5 \
		>out 2>err &
	vp=$!
	for i in $(seq 1 300); do
		grep -q '^started ' out 2>/dev/null && break
		sleep 0.1
	done
	guard=$(guard_of $vp)
	wait $vp
	tap_is "0 done" "$? $("$AWK" '$1 == "done" { print $1 }' out)" \
		"--mode=$mode: a recording that ends, ends its program"
	tap_is "yes gone" "$([ -n "$guard" ] && echo yes) $(cat /proc/"$guard"/comm 2>/dev/null ||
		echo gone)" "... and its guard, seen while it ran, is gone (reaped by varperf)"
done

# varperf-unprobe: the perf backend removes its probes in the background.
basic=$FIXTURES/fx-basic
mnt=$TMPDIR_T/mnt
mkdir mnt
if mount -t tmpfs -o size=16m varperf-t "$mnt" 2>/dev/null; then
	wait_unprobed
	(cd "$mnt" && "$VARPERF" record -q --mode=probe --backend=perf -o k.data -- "$basic" \
		>out 2>err)
	st=$?
	# the helper of this recording (its command line is varperf's)
	unprobe=$(for p in $(ps -o pid= -C varperf-unprobe); do
		tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -q "$basic" && echo "$p"
	done | head -n 1)
	if [ -n "$unprobe" ]; then
		ucwd=$(readlink /proc/"$unprobe"/cwd)
		ufds=$(fds "$unprobe" | tr ' ' '\n' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
	fi
	umount "$mnt" 2>uerr
	um=$?
	tap_is 0 "$st" "--backend=perf records fx-basic in a directory of its own"
	if [ -n "$unprobe" ]; then
		tap_is "/" "$ucwd" "... its varperf-unprobe runs in /"
		tap_is "$(printf '%s\n' "$(readlink -f "$basic")" /dev/null 'anon_inode:[perf_event]' \
			pipe | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')" "$ufds" \
			"... holding only the events, the probed file, its gate and /dev/null"
	else
		tap_skip "varperf-unprobe was done before it could be seen" 2
	fi
	tap_is 0 "$um" "... and the directory unmounts while it removes the probes"
	# (never leave the mount behind: lazily, if need be)
	[ $um -eq 0 ] || { tap_diag "$(cat uerr)"; umount -l "$mnt"; }
else
	tap_skip "cannot mount a tmpfs here" 4
fi

tap_done
