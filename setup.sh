#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# setup.sh - make a fresh Debian 12 machine build varperf: install what is
# missing, bootstrap, configure and build.  Safe to run again.
#
#   ./setup.sh          install, bootstrap, configure, build
#   ./setup.sh demo     ... then record and report the bundled demo
#   ./setup.sh check    ... then three stages, each run and reported
#                       whatever the others gave (the run fails at the
#                       end if any failed): make check (prints failing
#                       logs); the tests that need no recording again in
#                       a copy built with ASan and UBSan (build-asan/);
#                       and a copy built with every optional feature off
#                       (build-minimal/) running the tests that apply
#
# Runs as root: it installs packages, and recording needs the uprobe PMU.
set -euo pipefail

# What building varperf with every optional feature needs (and gdb, whose
# Python the GDB plugin is built for), then what only the tests use: the
# fixtures' C++ compiler and linker, the manual pages' linter, Graphviz
# for the DOT output's check, Chromium for the HTML page's, Go's pprof to
# read the pprof output.  ./setup.sh and ./setup.sh demo install the
# first list; ./setup.sh check both.
packages=(build-essential autoconf automake libtool pkg-config libelf-dev libdw-dev
	zlib1g-dev libunwind-dev binutils-dev libiberty-dev libcapstone-dev gdb python3
	libbpf-dev clang libgsl-dev libprotobuf-c-dev protobuf-c-compiler procps)
test_packages=(g++ lld mandoc graphviz chromium golang-go)

step() {
	printf '==> %s\n' "$*"
}

fail() {
	printf 'setup.sh: %s\n' "$*" >&2
	exit 1
}

usage() {
	echo "usage: ./setup.sh [demo | check]"
}

case "${1:-}" in
"" | demo | check) ;;
-h | --help)
	usage
	exit 0
	;;
*)
	usage >&2
	exit 2
	;;
esac
[ $# -le 1 ] || {
	usage >&2
	exit 2
}

if [ "$(id -u)" -ne 0 ]; then
	fail "must run as root (it installs packages with apt-get; recording needs CAP_SYS_ADMIN)"
fi

cd "$(dirname "$0")"

if [ "${1:-}" = check ]; then
	packages+=("${test_packages[@]}")
fi
# A package counts as installed only when dpkg says "install ok installed".
missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# A fresh machine's unattended upgrades may hold the package manager's
	# locks for minutes: wait for them (apt says whose they are), rather
	# than fail at once with exit 100.
	lock_wait=(-o DPkg::Lock::Timeout=900)
	if ! apt-get "${lock_wait[@]}" update -q; then
		fail "apt-get update failed (see above): no package was installed"
	fi
	if ! apt-get "${lock_wait[@]}" install -y -q --no-install-recommends "${missing[@]}"; then
		fail "apt-get could not install ${missing[*]} (see above)"
	fi
else
	step "all ${1:-build} dependencies are installed"
fi

if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	step "bootstrap (autoreconf)"
	./bootstrap
fi
if [ ! -f Makefile ]; then
	step "configure"
	./configure
fi
step "make"
make -j2

# The unit tests, the fuzzing corpus and the report tests (those that read
# files the tests write, needing no recording) under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a copy of the distribution built apart:
# a few minutes, where the recording tests would take far longer under
# them.  An error of either stops the process, and the test fails.
sanitized_check() {
	local dir=build-asan san='-fsanitize=address,undefined -fno-sanitize-recover=undefined'
	local t failed=0

	step "ASan and UBSan: unit tests, fuzzing corpus and report tests in $dir/"
	rm -rf "$dir"
	make -s distdir distdir="$dir" || return 1
	# (set -e does not hold in a subshell whose status is tested: each
	# step says so itself)
	(
		cd "$dir" &&
			./configure -q --disable-gdb-plugin --disable-compiler-warnings \
				CFLAGS="-O1 -g -fno-omit-frame-pointer $san" LDFLAGS="$san" &&
			make -s -j2 || exit 1
		make -s -j2 check TESTS="$(make -s print-core-tests) tests/fuzz/replay-t.sh \
			tests/perf-collector/report-crafted-t.sh tests/report/task-model-files-t.sh \
			tests/report/compare-self-t.sh tests/report/predict-files-t.sh \
			tests/report/pprof-t.sh" || failed=1
		# chained after the recording tests in the Makefile: run alone
		for t in tests/perf-collector/report-errors-t.sh; do
			top_srcdir=$PWD top_builddir=$PWD VARPERF=$PWD/cli/varperf \
				AWK=awk sh "$t" >"$t.log" 2>&1 || {
				cat "$t.log"
				failed=1
			}
		done
		if [ "$failed" != 0 ]; then
			find tests -name '*.trs' | while read -r trs; do
				if grep -qE '^:global-test-result: (FAIL|ERROR)' "$trs"; then
					printf '\n==> %s\n' "$dir/${trs%.trs}.log"
					cat "${trs%.trs}.log"
				fi
			done
		fi
		exit "$failed"
	) || return 1
	rm -rf "$dir"
}

# The logs of the tests in DIR that did not pass.
show_failed_logs() { # DIR
	find "$1" -name '*.trs' | sort | while read -r trs; do
		if grep -qE '^:global-test-result: (FAIL|ERROR|XPASS)' "$trs"; then
			printf '\n==> %s\n' "${trs%.trs}.log"
			cat "${trs%.trs}.log"
		fi
	done
}

# Every optional feature off (BPF, libbfd, libunwind, capstone, libiberty,
# GSL, protobuf-c, the GDB plugin): the build where configure's "auto" falls back
# when a library is missing, which the full build cannot see break.  It
# runs the unit tests and the tests of what changes without the features:
# the perf_event probe backend and its reasons (record-basic, compensate,
# backend, record-unprivileged), libdw's unwinding alone and no PLT names
# (sample-unwind, sample-errors, auto-stack, sample-plt), no instruction
# decoding (record-recurse, placement), C++ without libunwind and
# libiberty (record-except), explain and bound without GSL (explain),
# recordings without off-CPU times (report-percentiles), the command
# lines and manual pages: 4 minutes on a busy 2-core machine.  A test of
# a missing feature skips and says which.  The other recording tests do
# not depend on the features and run in make check above; running them
# again would double the time.
MINIMAL_TESTS="tests/docs/man-t.sh tests/docs/help-t.sh tests/cli/usage-t.sh
	tests/perf-collector/report-crafted-t.sh tests/gdb-plugin/imports-t.py
	tests/report/pprof-t.sh"
# Chained in Makefile.am (make would run the whole chain before them):
# run one at a time here, as make does.
MINIMAL_RECORDING_TESTS="record-basic record-recurse record-except sample-unwind
	sample-errors auto-stack sample-plt placement compensate backend record-unprivileged
	explain report-percentiles"
minimal_check() {
	local dir=build-minimal t failed=0

	step "every optional feature off: build and the tests that apply in $dir/"
	rm -rf "$dir"
	make -s distdir distdir="$dir" || return 1
	(
		cd "$dir" &&
			./configure -q --with-bpf=no --without-libbfd --without-libunwind \
				--without-capstone --without-libiberty --without-gsl \
				--without-protobuf-c --disable-gdb-plugin &&
			make -s -j2 || exit 1
		make -s -j2 check TESTS="$(make -s print-core-tests) $MINIMAL_TESTS" || {
			show_failed_logs tests
			failed=1
		}
		for t in $MINIMAL_RECORDING_TESTS; do
			t=tests/perf-collector/$t-t.sh
			if top_srcdir=$PWD top_builddir=$PWD VARPERF=$PWD/cli/varperf \
				FIXTURES=$PWD/tests/fixtures DEMO=$PWD/demo/vp-demo AWK=awk \
				sh "$t" >"${t%.sh}.log" 2>&1; then
				# a whole script skipped says "1..0 # SKIP reason"
				if grep -q '^1\.\.0 # SKIP' "${t%.sh}.log"; then
					sed -n "s|^1\.\.0 # SKIP|SKIP: ${t##*/}:|p" "${t%.sh}.log"
				else
					echo "PASS: ${t##*/}"
					grep '# skip' "${t%.sh}.log" | sed "s|^|  ${t##*/}: |"
				fi
			else
				printf 'FAIL: %s\n\n==> %s\n' "${t##*/}" "$dir/${t%.sh}.log"
				cat "${t%.sh}.log"
				failed=1
			fi
		done
		exit "$failed"
	) || return 1
	rm -rf "$dir"
}

case "${1:-}" in
demo)
	step "record the demo: cli/varperf record -o demo.data -- demo/vp-demo"
	cli/varperf record -o demo.data -- demo/vp-demo
	step "report: cli/varperf report -i demo.data"
	cli/varperf report -i demo.data
	;;
check)
	# Each stage runs and reports whatever the one before gave; the run
	# fails at the end naming those that failed.
	failed=()
	# Makefile.am runs the recording tests one at a time even under -j.
	step "make check"
	rc=0
	make -j2 check || rc=$?
	# One plain closing line with the counts of test-suite.log, for
	# readers that look for "N passed, N failed".
	if [ -f test-suite.log ]; then
		awk '/^# (PASS|FAIL|ERROR|XPASS|SKIP|XFAIL):/ { n[$2] = $3 }
			END { printf "check: %d passed, %d failed, %d skipped\n",
				n["PASS:"] + n["XFAIL:"], n["FAIL:"] + n["ERROR:"] + n["XPASS:"],
				n["SKIP:"] }' test-suite.log
	fi
	if [ "$rc" != 0 ]; then
		# Each test's .trs holds its verdict: show the logs of those
		# that did not pass.
		show_failed_logs tests
		failed+=("make check")
	fi
	export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
	sanitized_check || failed+=("make check under ASan and UBSan")
	unset ASAN_OPTIONS UBSAN_OPTIONS
	minimal_check || failed+=("the build with every optional feature off")
	if [ ${#failed[@]} -gt 0 ]; then
		fail "failed: $(printf '%s; ' "${failed[@]}" | sed 's/; $//')"
	fi
	;;
esac
step "done"
