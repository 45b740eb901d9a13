#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-unwind-t.sh - sampled stacks of binaries laid out unlike GCC's
# defaults, and of probed code: fx-chain linked by lld (whose code segment
# shares a file page with the read-only data before it, so the first
# segment holding the mapping's page is the wrong one) must unwind to
# main/outer/inner; in combined mode, after fx-jmptail's longjmp leaves
# probed frames behind, the stack words where their return addresses were
# hold other calls' (clock_gettime's), which must not be "repaired".
#
# The lld binary is built here from tests/fixtures/fx-chain.c with
# $CC -O2 -g -fuse-ld=lld (skipped without lld).

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-jmptail" "$top_srcdir/tests/fixtures/fx-chain.c"
if [ "$(id -u)" -ne 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 1 ]; then
	tap_skip_all "sampling needs root or kernel.perf_event_paranoid <= 1"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# q JSON EXPR - print EXPR evaluated with s = the report's sampled part;
# path(n) is node n's calling context, outermost first, each function
# followed by "@site" when the node has a call site ("outer@fx.c:12").
q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampled"]
def path(n):
    p = []
    while n:
        p.append(n["function"] + ("@" + n["site"] if n["site"] else ""))
        n = s["nodes"][n["parent"] - 1] if n["parent"] else None
    return "/".join(reversed(p))
print(eval(sys.argv[2]))' "$@"
}

# ---- linked by lld ----
if ${CC:-cc} -O2 -g -fuse-ld=lld -I"$top_builddir" -o chain-lld \
	"$top_srcdir/tests/fixtures/fx-chain.c" >cc.out 2>&1; then
	"$VARPERF" record -q --mode=sample -o lld.data -- ./chain-lld 300 >truth 2>err &&
		"$VARPERF" report -i lld.data --format json >lld.json 2>>err
	tap_is "True 0" "$(q lld.json "'%s %d' % (
		sum(n['self'] for n in s['nodes'] if n['function'] == 'inner' and
		    '/main@' in path(n) and '/outer@' in path(n)) >= s['samples'] * 9 // 10,
		s['broken'])")" \
		"an lld-linked binary: 90% of the samples in main/outer/inner, none broken"
else
	tap_skip "cannot link with lld: $(tail -1 cc.out)"
fi

# ---- combined mode: frames left behind by longjmp ----
if [ "$(id -u)" -ne 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	tap_skip "combined mode needs root and the uprobe PMU" 10
else
	"$VARPERF" record -q --mode=combined -f outer -f mid -f inner -o jt.data -- \
		"$FIXTURES/fx-jmptail" >truth 2>err &&
		"$VARPERF" report -i jt.data --format json >jt.json 2>>err
	tap_is "count jumps 100" "$(grep '^count jumps' truth)" "fx-jmptail jumped 100 times"
	mid=$("$AWK" '$1 == "line" && $2 == "mid_call" { print $3 }' truth)
	tail=$("$AWK" '$1 == "line" && $2 == "tail_call" { print $3 }' truth)
	# 200 ms of the run are outer's clock_gettime calls after the jumps:
	# all of them at the tail's call site, none at mid's.
	tap_is "True 0" "$(q jt.json "'%s %d' % (
		sum(n['samples'] for n in s['nodes'] if n['function'] == 'clock_gettime' and
		    n['site'] == 'fx-jmptail.c:$tail' and
		    s['nodes'][n['parent'] - 1]['function'] == 'outer') >= s['samples'] * 8 // 10,
		sum(n['samples'] for n in s['nodes'] if n['function'] != 'mid' and
		    n['site'] == 'fx-jmptail.c:$mid'))")" \
		"after longjmp, outer's clock_gettime calls keep their own call site (line $tail, not mid's $mid)"

	# Every probe on its first instruction: endbr64 and sub $8,%rsp are
	# single-stepped from a copy in the [uprobes] page, and return probes
	# go through its trampoline; a third of the samples or so fall there
	# or in a probe's trap.  Each must be put back where the program
	# logically is (the probed function, or its caller after the ret),
	# its hijacked return addresses too: before that, 10-13% of the
	# stacks ended in [unknown].  Then as placed by default: past
	# endbr64, on a one-byte push (child_push, child_sub_body) or a
	# two-byte one (main, parent), emulated, whose traps the sink knows
	# at their new addresses; child_sub's sub $8,%rsp is still stepped.
	for how in "--no-move-probes|probes single-stepped" "|probes past endbr64"; do
		"$VARPERF" record -q --mode=combined ${how%%|*} -o cf.data -- \
			"$FIXTURES/fx-compensate-cf" >cf.truth 2>err &&
			"$VARPERF" report -i cf.data --format json >cf.json 2>>err
		tap_is 0 $? "combined mode, ${how#*|}: fx-compensate-cf recorded"
		[ -s err ] && tap_diag "$(cat err)"
		if [ "${how%%|*}" = --no-move-probes ]; then
			tap_is "True True" "$(q cf.json "'%s %s' % (
				s['probe_mapped'] >= s['samples'] // 10,
				s['broken'] <= s['samples'] // 50)")" \
				"... a tenth of the samples or more mapped back from [uprobes], under 2% not unwound"
		else
			# (a varperf without capstone cannot decode the
			# instructions: no probe moves, none counts as emulated)
			if "$VARPERF" version --build-options | grep -q '^capstone: on$'; then
				emulated=4 say=four
			else
				emulated=0 say="without capstone, none"
			fi
			tap_is "True $emulated" "$(q cf.json "'%s %d' % (
				s['broken'] <= s['samples'] // 50, j['probes_emulated'])")" \
				"... $say of its five probes emulated, under 2% not unwound"
		fi
		tap_diag "$(q cf.json "'%d samples, %d mapped back, %d broken' % (s['samples'],
			s['probe_mapped'], s['broken'])")"
		# where the children's time goes: the probes' cost included,
		# under parent, and nowhere else
		# (fp: the functions of a node's context, without call sites)
		fp="'/'.join(f.split('@')[0] for f in path(n).split('/'))"
		tap_is True "$(q cf.json "sum(n['samples'] for n in s['nodes']
			if n['function'] in ('child_push', 'child_sub') and
			$fp.endswith('/main/parent/' + n['function'])) >= s['samples'] * 6 // 10")" \
			"... child_push and child_sub, under main/parent, have 60% of the samples"
		tap_is 0 "$(q cf.json "sum(n['samples'] for n in s['nodes']
			if n['function'] in ('child_push', 'child_sub', 'child_sub_body') and
			$fp.startswith('_start/') and '/main/parent/' not in $fp)")" \
			"... and no whole stack has them anywhere else"
	done
fi

tap_done
