#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# calibrate-t.sh - the probe-cost calibration's layout and its check.  It
# times its calls in blocks, each pinned to the next CPU the process may
# run on (vCPUs of one VM differ, and so does a call that moves between
# them), and takes the median of the blocks; a pass where a single-stepped
# probe costs less than 1.2 times an emulated one cannot be a steady
# state and is timed again, up to three passes, their median kept.  Dearer
# BPF probes (VARPERF_TEST_PROBE_DELAY_NS: the same delay in both classes)
# make that happen on purpose.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd taskset
require_file "$VARPERF" "$FIXTURES/fx-regress"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 6

# calib ERRFILE: "CLASS PROBED WINDOW PASSES" lines of varperf -v's calibration
calib() {
	sed -n 's/^varperf: calibration \([a-z]*\): unprobed \([0-9]*\) ns, probed \([0-9]*\) ns, window \([0-9]*\) ns (\([0-9]\) pass.*/\1 \2 \3 \4 \5/p' "$1"
}

# ---- the blocks: ten per class, over every CPU allowed ----
"$VARPERF" -vv record -q --mode=probe -f task -o a.data -- "$FIXTURES/fx-regress" >/dev/null 2>err
tap_is 0 $? "record -vv exits 0"
cpus=$(sed -n 's/^varperf: calibration emulated block [0-9]* on CPU \([0-9]*\): .*/\1/p' err |
	sort -un | tr '\n' ' ')
want=$(taskset -pc $$ | sed 's/.*: //' | "$AWK" -F, '{ for (i = 1; i <= NF; i++) {
	n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) printf "%d\n", c } }' | sort -un | head -n 10 |
	tr '\n' ' ')
tap_is "$want" "$cpus" "the emulated class's blocks ran on every CPU allowed (up to ten)"
taskset -c 0 "$VARPERF" -vv record -q --mode=probe -f task -o b.data -- "$FIXTURES/fx-regress" \
	>/dev/null 2>err
tap_is "0 " "$(sed -n 's/^varperf: calibration stepped block [0-9]* on CPU \([0-9]*\): .*/\1/p' err |
	sort -un | tr '\n' ' ')" "under taskset -c 0: every block on CPU 0"

# ---- an implausible pass: timed again ----
if ! "$VARPERF" version --build-options | grep -q '^bpf: on$'; then
	tap_skip "varperf was built without BPF: no dearer probes to test with" 3
	tap_done
fi
VARPERF_TEST_PROBE_DELAY_NS=50000 "$VARPERF" -v record -q --mode=probe --backend=bpf -f task \
	-o c.data -- "$FIXTURES/fx-regress" >/dev/null 2>err
tap_is 0 $? "record with dearer probes exits 0"
tap_is "emulated 3
stepped 3" "$(calib err | "$AWK" '{ print $1, $5 }')" \
	"50 us more a hit in both classes: three passes, none plausible"
[ -n "$(calib err)" ] || tap_diag "$(cat err)"
# each probed call takes two hits (entry and exit): 100 us more at least,
# and the windows hold the entry's delay or the exit's, 50 us at least
# (20 us once left a pass plausible by chance: 1.2 times is then near)
tap_is "ok" "$(calib err | "$AWK" '$3 - $2 < 100000 || $4 - $2 < 50000 { bad = bad " " $0 }
	END { print bad ? "short:" bad : "ok" }')" \
	"... their median holds the delay: 100 us a call, 50 us in the window"
tap_done
