# SPDX-License-Identifier: GPL-3.0-or-later
# test-subr.sh - TAP helpers for the shell tests (POSIX sh).  Source it with
#
#	. "$top_srcdir/tests/lib/test-subr.sh"
#
# make check exports top_srcdir, top_builddir, VARPERF (the built varperf),
# FIXTURES (the built fixture directory), DEMO (the built demo) and AWK.
# Sourcing creates a private directory $TMPDIR_T, removed when the script
# exits.  Every check prints one TAP line; end the script with tap_done.

: "${AWK:=awk}"
# the text report folds its lines at $COLUMNS (varperf-report(1)), or at
# 100 columns in a pipe: tests read them at 100
unset COLUMNS
# The fixtures measure wall-clock truths, and on a busy machine report's
# default would be own time, wall clock less preemption
# (varperf-report(1), "Preempted and blocked"): tests compare in wall-clock
# time unless they ask otherwise; offcpu-split-t.sh tests the default.
VARPERF_TIME=wall
export VARPERF_TIME
# ... and prints arrows in UTF-8, "->" in another locale: tests see the
# arrows where the C library has a UTF-8 locale (a test that sets LC_ALL=C
# sees "->")
if locale -a 2>/dev/null | grep -qix 'c\.utf-\{0,1\}8'; then
	LC_ALL=C.UTF-8
	export LC_ALL
fi

tap_count=0	# tests run so far
tap_failed=0	# tests failed so far
tap_planned=	# empty: lazy plan, printed by tap_done

# tap_diag MESSAGE... - print MESSAGE as TAP comments ("# " before every
# line), on stdout so that it stays in order with the test lines.
tap_diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# tap_plan N - announce N tests.  Without it the plan is lazy: tap_done
# prints it from the number of tests run.
tap_plan() {
	tap_planned=$1
	echo "1..$1"
}

# tap_pass DESC - report a passing test.
tap_pass() {
	tap_count=$((tap_count + 1))
	echo "ok $tap_count - $1"
}

# tap_fail DESC - report a failing test.
tap_fail() {
	tap_count=$((tap_count + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_count - $1"
}

# tap_ok STATUS DESC - pass when STATUS (an exit status, e.g. "$?") is 0.
#	cmp -s a b; tap_ok $? "a and b are equal"
tap_ok() {
	if [ "$1" -eq 0 ] 2>/dev/null; then
		tap_pass "$2"
	else
		tap_fail "$2"
		tap_diag "exit status: $1"
	fi
}

# tap_is EXPECTED SEEN DESC - pass when the two strings are equal.
tap_is() {
	if [ "x$1" = "x$2" ]; then
		tap_pass "$3"
	else
		tap_fail "$3"
		tap_diag "wanted: '$1'"
		tap_diag "  seen: '$2'"
	fi
}

# tap_like STRING REGEX DESC - pass when a line of STRING matches the
# extended regular expression REGEX (grep -E).
tap_like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		tap_pass "$3"
	else
		tap_fail "$3"
		tap_diag "wanted a line matching: $2"
		tap_diag "seen:"
		tap_diag "$1"
	fi
}

# tap_unlike STRING REGEX DESC - pass when no line of STRING matches REGEX.
tap_unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		tap_fail "$3"
		tap_diag "wanted no line matching: $2"
		tap_diag "seen:"
		tap_diag "$1"
	else
		tap_pass "$3"
	fi
}

# tap_within EXPECTED SEEN RELTOL DESC - pass when both are numbers and
# |SEEN - EXPECTED| <= RELTOL * |EXPECTED| (0.05 is 5 %).  A non-numeric
# SEEN (say, an empty field) fails instead of counting as 0.
tap_within() {
	if "$AWK" -v e="$1" -v s="$2" -v r="$3" 'BEGIN {
		num = "^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$"
		if (e !~ num || s !~ num || r !~ num)
			exit 1
		d = s - e; if (d < 0) d = -d
		a = e + 0; if (a < 0) a = -a
		exit !(d <= r * a)
	}'; then
		tap_pass "$4"
	else
		tap_fail "$4"
		tap_diag "wanted: $1 (within $3 relative)"
		tap_diag "  seen: $2"
	fi
}

# tap_diff DESC EXPECTED-FILE SEEN-FILE - pass when the files are equal;
# otherwise show diff -u as diagnostics.
tap_diff() {
	if cmp -s "$2" "$3"; then
		tap_pass "$1"
	else
		tap_fail "$1"
		tap_diag "$(diff -u "$2" "$3" 2>&1)"
	fi
}

# tap_skip REASON [COUNT] - report COUNT tests (default one) as skipped.
tap_skip() { # REASON [COUNT]
	_n=${2:-1}
	while [ "$_n" -gt 0 ]; do
		tap_count=$((tap_count + 1))
		echo "ok $tap_count # skip $1"
		_n=$((_n - 1))
	done
}

# tap_skip_all REASON - skip the whole script: "1..0 # SKIP REASON", exit 0.
# Only before any test has run.
tap_skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

# tap_bail REASON - "Bail out! REASON" and exit 255: the script cannot go on
# (broken set-up, missing build product).  Not a skip.
tap_bail() {
	echo "Bail out! $1"
	exit 255
}

# tap_done - print the plan if it was lazy, check that the planned number
# of tests ran, and exit 0 only when every test passed.
tap_done() {
	if [ -z "$tap_planned" ]; then
		if [ "$tap_count" -eq 0 ]; then
			tap_diag "no tests were run"
			exit 255
		fi
		echo "1..$tap_count"
	elif [ "$tap_planned" -ne "$tap_count" ]; then
		tap_diag "planned $tap_planned tests but ran $tap_count"
		exit 255
	fi
	if [ "$tap_failed" -ne 0 ]; then
		tap_diag "failed $tap_failed of $tap_count tests"
		exit 1
	fi
	exit 0
}

# require_cmd COMMAND... - skip the script unless every COMMAND is in $PATH.
require_cmd() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || tap_skip_all "'$_c' is not installed"
	done
}

# require_root_uprobes - skip the script unless it runs as root on a kernel
# with the uprobe PMU: new kernels want CAP_SYS_ADMIN for it (CAP_PERFMON no
# longer suffices), and only root is sure to have that.
require_root_uprobes() {
	if [ "$(id -u)" -ne 0 ]; then
		tap_skip_all "needs root for the uprobe PMU"
	fi
	if [ ! -e /sys/bus/event_source/devices/uprobe ]; then
		tap_skip_all "the kernel has no uprobe PMU"
	fi
}

# wait_unprobed - wait (a minute at most) until no varperf-unprobe runs:
# an earlier recording's probes, until the kernel has removed them, still
# fire in every process that runs the code (slowing it, and cutting its
# sampled stacks short), and every probe opened meanwhile waits for them.
wait_unprobed() {
	for _i in $(seq 1 300); do
		ps -o stat= -C varperf-unprobe 2>/dev/null | grep -qv '^Z' || return 0
		sleep 0.2
	done
}

# require_file PATH... - bail out unless every PATH exists: a missing build
# product is a broken build, not a reason to skip.
require_file() {
	for _f in "$@"; do
		[ -e "$_f" ] || tap_bail "missing '$_f'"
	done
}

# The per-test private directory, removed at exit whatever the outcome.
TMPDIR_T=$(mktemp -d "${TMPDIR:-/tmp}/varperf-t.XXXXXX") ||
	tap_bail "cannot create a temporary directory"
export TMPDIR_T
trap 'tap_st=$?; rm -rf "$TMPDIR_T"; exit $tap_st' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
