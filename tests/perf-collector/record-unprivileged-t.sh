#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-unprivileged-t.sh - varperf record run by a user without
# privileges (nobody, through setpriv).  Sampling its own child needs none
# at kernel.perf_event_paranoid 2, but the kernel caps what such a user
# may lock in ring buffers (kernel.perf_event_mlock_kb per CPU, plus
# RLIMIT_MEMLOCK): the default buffers must fit, and a --buffer-size that
# cannot is an error up front.  Probing needs CAP_SYS_ADMIN (perf_event
# uprobes) or CAP_BPF and CAP_PERFMON: a mode that probes says so before
# anything runs - auto mode before its sampling phase - and names no
# internal symbol or file of varperf's.  Auto mode, where the user backend
# works (x86-64, FSGSBASE, capstone), needs none: it patches its own child.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF" "$FIXTURES/fx-recurse"
require_cmd setpriv
if [ "$(id -u)" -ne 0 ]; then
	tap_skip_all "needs root (to run varperf as nobody)"
fi
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
if [ -z "$paranoid" ] || [ "$paranoid" -gt 2 ]; then
	tap_skip_all "kernel.perf_event_paranoid is '$paranoid': no perf events for other users"
fi
chmod 777 "$TMPDIR_T"
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# as_nobody CMD... - run CMD as nobody, with no group and no capability.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"
}
if ! as_nobody test -x "$FIXTURES/fx-recurse" || ! as_nobody test -x "$VARPERF"; then
	tap_skip_all "nobody cannot run the build tree's programs"
fi

tap_plan 14

# ---- sampling: the default buffers fit what nobody may lock ----
as_nobody "$VARPERF" record -q --mode=sample -o s.data -- "$FIXTURES/fx-recurse" >out 2>err
tap_is 0 $? "sample mode as nobody exits 0"
tap_unlike "$(cat err)" "error|cannot map" "... with no error"
tap_is 5000 "$(sed -n 's/^count rec //p' out)" "... and the program ran"
"$VARPERF" report -i s.data >/dev/null 2>err
tap_ok $? "... and its file reports"

# ---- a --buffer-size beyond the limit: the limit, in figures ----
mlock_kb=$(cat /proc/sys/kernel/perf_event_mlock_kb)
ncpu=$(getconf _NPROCESSORS_ONLN)
memlock=$(ulimit -l)
if [ "$memlock" = unlimited ]; then
	tap_skip "RLIMIT_MEMLOCK is unlimited: no limit to exceed" 3
else
	# the largest power of two pages whose buffers, each with a header
	# page, fit mlock_kb per CPU plus RLIMIT_MEMLOCK
	each=$(((mlock_kb * ncpu + memlock) / ncpu))
	max=4
	while [ $((max * 2 + 4)) -le "$each" ]; do
		max=$((max * 2))
	done
	as_nobody "$VARPERF" record -q --mode=sample -m 1G -o big.data -- "$FIXTURES/fx-recurse" \
		>out 2>err
	tap_is 1 $? "-m 1G as nobody: exit status 1"
	tap_is "varperf: error: --buffer-size 1048576K is more than this user may lock: $ncpu \
CPUs x $mlock_kb KiB (kernel.perf_event_mlock_kb) + $memlock KiB (RLIMIT_MEMLOCK) allow at most \
${max}K per CPU (or run varperf as root)" "$(cat err)" "... says the limit"
	tap_is "" "$(cat out)" "... before the program runs"
fi

# ---- modes that probe: the missing capabilities, before anything runs ----
# (a varperf built without BPF gives that reason instead)
if "$VARPERF" version --build-options | grep -q '^bpf: on$'; then
	why_not="loading BPF programs is not permitted (it needs CAP_BPF and CAP_PERFMON, or root)"
else
	why_not="varperf was built without libbpf and clang's BPF target"
fi
nopriv="perf_event uprobes need CAP_SYS_ADMIN, and $why_not; run varperf as root, or record \
with --mode=sample, which needs no privilege"
# (auto mode takes the user backend where it works: no privilege needed)
user_ok=
if [ "$(uname -m)" = x86_64 ] && grep -qw fsgsbase /proc/cpuinfo &&
	"$VARPERF" version --build-options | grep -q '^capstone: on$'; then
	user_ok=1
fi
for mode in probe combined auto; do
	if [ $mode = auto ] && [ -n "$user_ok" ]; then
		# (a directory of its own: the test's is root's alone)
		np=$(mktemp -d "${TMPDIR:-/tmp}/varperf-np.XXXXXX") && chmod 755 "$np"
		cp "$FIXTURES/fx-leaf" "$np/" && chmod 777 "$np"
		# (a run of some 2 s: phase 2 began after 200000 rounds had ended
		# once, on an idle machine that runs them in half a second)
		as_nobody "$VARPERF" record -q -o "$np/a.data" -- "$np/fx-leaf" 1000000 >out 2>err
		st=$?
		"$VARPERF" report --raw -i "$np/a.data" --format json >a.json 2>/dev/null
		rm -rf "$np"
		tap_is "0 user True" "$st $(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["backend"], j["totals"]["invocations"] > 1000)' a.json)" \
			"--mode=auto as nobody: phase 2 on the user backend, calls timed"
		tap_is "count leaf_unsure" "$(grep -o '^count leaf_unsure' out)" \
			"... and the program ran to its end"
		continue
	fi
	as_nobody "$VARPERF" record -q --mode=$mode -o p.data -- "$FIXTURES/fx-recurse" \
		>out 2>err
	st=$?
	tap_is "1 varperf: error: cannot probe functions (--mode=$mode): $nopriv" "$st $(cat err)" \
		"--mode=$mode as nobody: exit status 1 and why"
	tap_is "" "$(cat out)" "... before the program runs"
done

# ---- CAP_PERFMON alone: not enough for perf_event uprobes on recent
# kernels; whatever fails says it in the user's terms ----
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all,+perfmon \
	--ambient-caps=+perfmon "$VARPERF" record -q --mode=probe --backend=perf -o c.data -- \
	"$FIXTURES/fx-recurse" >out 2>err
tap_unlike "$(cat err)" "vp_calib|/proc/self/fd" "no internal name in what it says"
tap_done
