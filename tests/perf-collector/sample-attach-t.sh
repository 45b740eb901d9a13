#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-attach-t.sh - sampling a running process (-p) whose threads do
# not hold still: a library that a second thread dlopen()s after varperf
# attached must be named (fx-dlopen: its MMAP2 record goes to that
# thread's events only, and by the time the samples are unwound the
# process is gone), and threads that come and go while varperf opens its
# events must not make attaching fail (fx-churn, attached to 10 times).

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-dlopen" "$FIXTURES/fx-churn"
if [ "$(id -u)" -ne 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 1 ]; then
	tap_skip_all "sampling needs root or kernel.perf_event_paranoid <= 1"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# q JSON EXPR - print EXPR evaluated with s = the report's sampled part.
q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampled"]
print(eval(sys.argv[2]))' "$@"
}

# wait_started FILE PID - wait (up to 5 s) until the fixture printed
# "started", or bail out if it died.
wait_started() {
	_i=0
	while ! grep -q '^started$' "$1" 2>/dev/null; do
		kill -0 "$2" 2>/dev/null || tap_bail "the fixture died: $(cat "$1")"
		_i=$((_i + 1))
		[ $_i -lt 500 ] || tap_bail "the fixture did not start"
		sleep 0.01
	done
}

# ---- a library dlopen()ed by another thread after attaching ----
"$FIXTURES/fx-dlopen" go 1 >dl.out 2>dl.err &
pid=$!
wait_started dl.out $pid
(sleep 0.3; : >go) &
"$VARPERF" record -q --mode=sample -p $pid -o dl.data >out 2>err
tap_is 0 $? "attaching to fx-dlopen works until it exits"
wait $pid
tap_like "$(cat dl.out)" "^count crc32 [1-9][0-9]*$" "fx-dlopen ran its crc32() calls"
"$VARPERF" report -i dl.data --format json >dl.json 2>>err
# About 1000 samples in crc32: nearly all named, none of them [unknown].
tap_is "True 0" "$(q dl.json "'%s %d' % (
	sum(n['self'] for n in s['nodes'] if n['function'].startswith('crc32')) >= s['samples'] * 8 // 10,
	sum(n['self'] for n in s['nodes'] if n['function'].startswith('[unknown')))")" \
	"the library the second thread loaded is known: its samples are named crc32, none [unknown]"

# ---- threads that come and go ----
"$FIXTURES/fx-churn" 10 >churn.out 2>churn.err &
pid=$!
wait_started churn.out $pid
failed=0
i=0
while [ $i -lt 10 ]; do
	i=$((i + 1))
	if ! "$VARPERF" record -q --mode=sample -p $pid --duration 0.2 -o "c$i.data" \
		>out 2>err || grep -q error err; then
		failed=$((failed + 1))
		tap_diag "attach $i: $(cat err)"
	fi
done
tap_is 0 $failed "attached 10 times to threads that come and go, without an error"
"$VARPERF" report -i c10.data --format json >c.json 2>err
# (the threads live 50 us: per-thread clocks rarely reach a period in
# them, so most samples are the main thread's)
tap_is True "$(q c.json "s['samples'] > 0 and s['broken'] <= s['samples'] // 10")" \
	"... and sampled it"
kill $pid 2>/dev/null
wait $pid 2>/dev/null

tap_done
