#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# real-programs.sh - the real-program side of `make bench`: what the
# default (auto) `varperf record` costs two real -O2 programs, bzip2 1.0.8
# and lz4 1.9.4, and what it measures there.  For each program: the plain
# wall time (median of 3), the auto-mode recording's wall time and its
# ratio to plain, the phase-2 cost lines varperf prints, the mean of one
# compression function (BZ2_compressBlock, LZ4HC_compress_optimal) in the
# auto recording against a probe of that function alone, and a plain run
# right after `varperf record` returns (its speed, and which varperf
# processes are still alive then).
#
# On first use both programs are built from Debian's source packages (the
# upstream Makefiles on the unpatched upstream sources, -O2 -g, unstripped)
# into a cache directory, fetched with a private apt configuration kept in
# the cache: deb-src entries derived from the system's Debian entries.
# Later runs reuse the cache and need no network.  Nothing is written
# outside the cache but a temporary directory (the .data files), removed
# at the end.  Needs bash, python3, root and the uprobe PMU; the first run
# also apt-get, dpkg-source (dpkg-dev is installed if missing), gcc, make.
#
# Environment:
#   VARPERF               varperf to bench (default: set by make bench, else
#                         ../cli/varperf from this script)
#   VP_BENCH_CACHE        cache directory (default:
#                         ${XDG_CACHE_HOME:-$HOME/.cache}/varperf-bench)
#   VP_BENCH_RECORD_ARGS  extra arguments appended to every varperf record
#                         (such as --backend NAME)
#   VP_BENCH_TIMEOUT      seconds allowed each varperf record (default 600)
#   VP_BENCH_INPUT_MB     size of the input, when it is created (default 12)
#   VP_BENCH_BUILD_ONLY   set: build the programs and the input, then stop
#   BENCH_DIR             where the temporary directory goes (default
#                         $TMPDIR or /tmp)
set -euo pipefail
export LC_ALL=C

me=real-programs.sh
die() {
	echo "$me: error: $*" >&2
	exit 1
}
note() {
	echo "$me: $*" >&2
}

here=$(cd "$(dirname "$0")" && pwd)
: "${BENCH_DIR:=${TMPDIR:-/tmp}}"
: "${VP_BENCH_TIMEOUT:=600}"
: "${VP_BENCH_INPUT_MB:=12}"
cache=${VP_BENCH_CACHE:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/varperf-bench}
read -r -a extra <<<"${VP_BENCH_RECORD_ARGS:-}"

if [ -z "${VARPERF:-}" ]; then
	for c in ${top_builddir:+"$top_builddir/cli/varperf"} \
		"$here/../cli/varperf"; do
		if [ -x "$c" ]; then
			VARPERF=$c
			break
		fi
	done
fi
[ -n "${VARPERF:-}" ] && [ -x "$VARPERF" ] ||
	die "no varperf to bench: build it (make) or set VARPERF"
VARPERF=$(cd "$(dirname "$VARPERF")" && pwd)/$(basename "$VARPERF")

echo "== real programs: bzip2 and lz4 =="
if [ "$(id -u)" != 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	echo "skipped: needs root and the uprobe PMU"
	exit 0
fi
for t in python3 timeout ps awk sha256sum tar; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is needed and not installed"
done
case $VP_BENCH_TIMEOUT in '' | *[!0-9]*) die "VP_BENCH_TIMEOUT must be whole seconds" ;; esac
case $VP_BENCH_INPUT_MB in '' | *[!0-9]* | 0) die "VP_BENCH_INPUT_MB must be a positive integer" ;; esac

mkdir -p "$cache" || die "cannot create the cache directory '$cache'"
cache=$(cd "$cache" && pwd)
case $cache in *'"'* | *\\*) die "the cache path must not hold '\"' or '\\': $cache" ;; esac
# one run at a time: builds share the cache, timings share the machine
if command -v flock >/dev/null 2>&1; then
	exec 9>"$cache/lock"
	flock -n 9 || {
		note "waiting for another run that holds $cache/lock"
		flock 9
	}
fi

# ---- building, once ------------------------------------------------------

aptdir=$cache/apt
aptconf=$aptdir/apt.conf

# apt_setup: the private apt configuration: deb-src entries for the
# system's Debian suites, lists and archives in the cache, no hooks.
apt_setup() {
	local sl sp
	command -v apt-get >/dev/null 2>&1 || die "apt-get is needed to fetch the sources"
	sl=/etc/apt/sources.list
	sp=/etc/apt/sources.list.d
	eval "$(apt-config shell sl Dir::Etc::sourcelist/f sp Dir::Etc::sourceparts/d)"
	mkdir -p "$aptdir/sources.list.d" "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
	rm -f "$aptdir/sources.list.d/"*
	# Debian's own suites only (the release's codename, -updates,
	# -security): other vendors' entries seldom have sources.
	python3 - "$sl" "${sp%/}" "$aptdir/sources.list" "$aptdir/sources.list.d/debian.sources" <<'PY' ||
import glob, os, re, sys

sl, sp, out_list, out_sources = sys.argv[1:5]
codename = ""
try:
    for line in open("/etc/os-release"):
        k, _, v = line.strip().partition("=")
        if k == "VERSION_CODENAME":
            codename = v.strip("\"'")
except OSError:
    pass


def keep_suite(s):
    return not codename or s == codename or s.startswith(codename + "-")


lines, stanzas = [], []
# one-line style: deb [options] uri suite [component...]
for path in [sl] + sorted(glob.glob(os.path.join(sp, "*.list"))):
    try:
        text = open(path).read()
    except OSError:
        continue
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"(deb|deb-src)\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)(.*)$", line)
        if not m or not keep_suite(m.group(4)):
            continue
        e = "deb-src %s%s %s%s" % (m.group(2) or "", m.group(3), m.group(4), m.group(5))
        if e not in lines:
            lines.append(e)
# deb822 style: stanzas of fields, continuation lines start with a blank
for path in sorted(glob.glob(os.path.join(sp, "*.sources"))):
    try:
        text = open(path).read()
    except OSError:
        continue
    for block in re.split(r"\n(?:[ \t]*\n)+", text):
        fields = []  # [key, [raw lines]]
        for raw in block.splitlines():
            if raw.startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and fields:
                fields[-1][1].append(raw)
            elif ":" in raw:
                fields.append([raw.split(":", 1)[0].strip().lower(), [raw]])
        val = {k: " ".join(r[0].split(":", 1)[1:] + r[1:]).split() for k, r in fields}
        if "deb" not in val.get("types", []) and "deb-src" not in val.get("types", []):
            continue
        if val.get("enabled", ["yes"])[0].lower() == "no":
            continue
        suites = [s for s in val.get("suites", []) if keep_suite(s)]
        if not suites or not val.get("uris"):
            continue
        out = []
        for k, r in fields:
            if k == "types":
                out.append("Types: deb-src")
            elif k == "suites":
                out.append("Suites: " + " ".join(suites))
            else:
                out.extend(r)
        stanzas.append("\n".join(out))
if not lines and not stanzas:
    sys.exit("no Debian entries (suite %s) in %s or %s/*.{list,sources}"
             % (codename or "any", sl, sp))
with open(out_list, "w") as f:
    f.write("".join(e + "\n" for e in lines))
with open(out_sources, "w") as f:
    f.write("\n\n".join(stanzas) + ("\n" if stanzas else ""))
PY
		die "cannot derive deb-src entries from the system's apt sources"
	# the system's settings (proxies, Check-Valid-Until...) still apply;
	# the update hooks of apt.conf.d would touch system caches: cleared
	cat >"$aptconf" <<EOF
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
#clear APT::Update::Post-Invoke-Stats;
Dir::Etc::SourceList "$aptdir/sources.list";
Dir::Etc::SourceParts "$aptdir/sources.list.d";
Dir::State::Lists "$aptdir/lists";
Dir::Cache "$aptdir/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT::Sandbox::User "root";
EOF
	note "apt-get update (private lists in $aptdir), from:"
	sed 's/^/    /' "$aptdir/sources.list" "$aptdir/sources.list.d/debian.sources" >&2
	apt-get -c "$aptconf" -q update >&2 ||
		die "apt-get update of the private deb-src lists failed (see above)"
}

# fetch PKG: the newest .dsc of source package PKG in $cache/src, downloaded
# if there is none yet
fetch() {
	local dsc
	mkdir -p "$cache/src"
	dsc=$(cd "$cache/src" && ls -1 "$1"_*.dsc 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$dsc" ]; then
		# the private lists, unless another package's download just made them
		[ -f "$aptconf" ] && [ -n "$(find "$aptdir/lists" -maxdepth 1 -name '*Sources*' \
			-mmin -60 2>/dev/null)" ] || apt_setup
		note "apt-get source --download-only $1"
		(cd "$cache/src" && apt-get -c "$aptconf" -q source --download-only "$1") >&2 ||
			die "cannot download the source package $1 (see above)"
		dsc=$(cd "$cache/src" && ls -1 "$1"_*.dsc 2>/dev/null | sort -V | tail -n 1)
		[ -n "$dsc" ] || die "apt-get source $1 left no .dsc in $cache/src"
	fi
	echo "$cache/src/$dsc"
}

# build NAME WANT RECIPE: $cache/bin/NAME from source package NAME, with
# the shell command RECIPE run in the unpacked upstream tree (which must
# leave the program at ./NAME or programs/NAME); WANT is the upstream
# version expected.  Done once: the stamp keeps the recipe and what it took.
build() {
	local name=$1 want=$2 recipe=$3 stamp=$cache/bin/$1.stamp
	local dsc ver t0 dir log
	if [ -x "$cache/bin/$name" ] && [ -f "$stamp" ] &&
		[ "$(sed -n 's/^recipe: //p' "$stamp")" = "$recipe" ]; then
		sed -n 's/^built: \(.*\)/'"$name"' build: \1 (cached)/p' "$stamp"
		return 0
	fi
	if ! command -v dpkg-source >/dev/null 2>&1; then
		note "installing dpkg-dev (for dpkg-source)"
		apt-get -q update >&2 && apt-get -q -y install dpkg-dev >&2 ||
			die "cannot install dpkg-dev"
	fi
	for t in gcc make; do
		command -v "$t" >/dev/null 2>&1 || die "'$t' is needed to build $name"
	done
	t0=$EPOCHREALTIME
	dsc=$(fetch "$name")
	ver=$(sed -n 's/^Version: //p' "$dsc" | head -n 1)
	case $ver in
	"$want"-* | "$want") ;;
	*) note "warning: Debian has $name $ver, not $want: the figures will not compare" ;;
	esac
	dir=$cache/build/$name
	log=$cache/build/$name.log
	mkdir -p "$cache/build" "$cache/bin"
	rm -rf "$dir"
	# The upstream sources as released: Debian's patches change the
	# Makefiles (bzip2 would link its own libbz2.so, lz4 -llz4).
	(cd "$cache/build" && dpkg-source --skip-patches -x "$dsc" "$name") >"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "cannot unpack $dsc (log: $log)"; }
	note "building $name $ver: $recipe"
	(cd "$dir" && export MAKEFLAGS="-j$jobs" && eval "$recipe") >>"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "building $name failed (log: $log)"; }
	if [ -x "$dir/$name" ]; then
		cp "$dir/$name" "$cache/bin/$name.new"
	elif [ -x "$dir/programs/$name" ]; then
		cp "$dir/programs/$name" "$cache/bin/$name.new"
	else
		die "the build of $name left no program $name (log: $log)"
	fi
	mv -f "$cache/bin/$name.new" "$cache/bin/$name"
	awk -v a="$t0" -v b="$EPOCHREALTIME" -v v="$ver" 'BEGIN {
		printf "built: %s in %.1f s (download, unpack, compile)\n", v, b - a }' >"$stamp.new"
	echo "recipe: $recipe" >>"$stamp.new"
	mv -f "$stamp.new" "$stamp"
	sed -n 's/^built: /'"$name"' build: /p' "$stamp"
}

jobs=$(nproc 2>/dev/null || echo 1)
build bzip2 1.0.8 "make CFLAGS='-O2 -g -Wall -D_FILE_OFFSET_BITS=64' bzip2"
build lz4 1.9.4 "make -C programs lz4 CFLAGS='-O2 -g'"
if command -v nm >/dev/null 2>&1; then
	for p in bzip2 lz4; do
		[ -n "$(nm "$cache/bin/$p" 2>/dev/null | head -n 1)" ] ||
			die "$cache/bin/$p has no symbols: remove $cache/bin and run again"
	done
fi

# ---- the input ------------------------------------------------------------

# The first VP_BENCH_INPUT_MB MiB of a tar of /usr/include, in name order
# with fixed metadata: the same bytes on every run (kept in the cache)
# and, on a machine with the same headers, on others.
input=$cache/input/in.tar
bytes=$((VP_BENCH_INPUT_MB * 1024 * 1024))
if [ ! -f "$input.info" ] || [ "$(stat -c %s "$input" 2>/dev/null)" != "$bytes" ]; then
	mkdir -p "$cache/input"
	set +o pipefail # head ends tar early
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
		-cf - -C / usr/include 2>/dev/null | head -c "$bytes" >"$input.new"
	set -o pipefail
	[ "$(stat -c %s "$input.new")" = "$bytes" ] ||
		die "a tar of /usr/include gives fewer than $VP_BENCH_INPUT_MB MiB: set VP_BENCH_INPUT_MB lower"
	mv -f "$input.new" "$input"
	echo "first $VP_BENCH_INPUT_MB MiB of a tar of /usr/include (sorted, mtime 0)" \
		"sha256 $(sha256sum <"$input" | cut -c1-16)" >"$input.info"
fi
echo "input: $input, $(stat -c %s "$input") bytes: $(cat "$input.info")"
# real-hardening.sh wants only the programs and the input
[ -z "${VP_BENCH_BUILD_ONLY:-}" ] || exit 0

# ---- measuring ------------------------------------------------------------

work=$(mktemp -d "$BENCH_DIR/varperf-rbench.XXXXXX")
tpid=
# stop: end the recording under way, if any (timeout leads a process group)
stop() {
	[ -z "$tpid" ] || kill -TERM -- "-$tpid" 2>/dev/null || kill -TERM "$tpid" 2>/dev/null || true
}
trap 'rm -rf "$work"' EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
# a copy: a rebuild while the bench runs must not mix two varperfs
vp_orig=$VARPERF
cp "$VARPERF" "$work/varperf"
VARPERF=$work/varperf

# timed LIMIT ERR CMD...: run CMD, no input, its output discarded, its
# errors to ERR, under a timeout of LIMIT seconds (0: none; in the
# background then, so that an interrupt need not wait for it); sets T
# (wall seconds) and RC (124: the timeout)
timed() {
	local limit=$1 err=$2 t0
	shift 2
	RC=0
	t0=$EPOCHREALTIME
	if [ "$limit" = 0 ]; then
		"$@" </dev/null >/dev/null 2>"$err" 9>&- || RC=$?
	else
		timeout -k 30 "$limit" "$@" </dev/null >/dev/null 2>"$err" 9>&- &
		tpid=$!
		wait "$tpid" || RC=$?
		tpid=
	fi
	T=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
}

# record LIMIT ERR ARGS... -- CMD...: timed varperf record ARGS, the extra
# arguments appended, of CMD
record() {
	local limit=$1 err=$2 args=()
	shift 2
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	timed "$limit" "$err" "$VARPERF" record "${args[@]}" ${extra[@]+"${extra[@]}"} -- "$@"
}

# outcome WHAT ERR: what became of the last timed run, WHAT naming it,
# with its first errors from ERR where it failed (not a timeout: then
# the bench fails, at the end)
failed=0
outcome() {
	if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
		echo "$1: timeout after $T s (limit $VP_BENCH_TIMEOUT s)"
	else
		echo "$1: $T s, exit status $RC"
	fi
	why "$RC" "$2"
}
# why STATUS ERR: a failed run's first errors
why() {
	case $1 in
	0 | 124 | 137) ;;
	*)
		failed=1
		{ grep -m 3 -E 'error|warning' "$2" || head -n 3 "$2"; } | sed 's/^/  /'
		;;
	esac
}

# The varperf processes alive, by name (varperf, varperf-unprobe: a
# `pgrep -f varperf` would also find this script where its path says
# varperf), as "ours: LIST; others: LIST; zombies: N", each "pid name
# (state, age s)" or "none".  Ours run the copy of varperf in $work (the
# unprobe processes are forks of it); the others are another user's, such
# as a test suite; zombies have exited (whoever's) but are not reaped yet.
varperf_procs() {
	local pid stat age comm exe ours="" others="" zombies=0
	while read -r pid stat age comm; do
		[[ $comm == varperf* ]] || continue
		if [[ $stat == Z* ]]; then
			zombies=$((zombies + 1))
			continue
		fi
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exe=
		if [ "${exe% (deleted)}" = "$VARPERF" ]; then
			ours+="${ours:+, }$pid $comm ($stat, $age s)"
		else
			others+="${others:+, }$pid $comm ($stat, $age s)"
		fi
	done < <(ps -eo pid=,stat=,etimes=,comm=)
	echo "ours: ${ours:-none}; others: ${others:-none}; zombies: $zombies"
}

# removing BINARY: "yes" while a varperf-unprobe still removes probes from
# BINARY (it holds a lock on the file until it is done), else "no"
removing() {
	if ! command -v flock >/dev/null 2>&1; then
		echo "unknown"
	elif flock -n -x -E 75 "$1" true 9>&-; then
		echo "no"
	else
		echo "yes"
	fi
}

# wait_unprobed: until no varperf-unprobe is at work (an earlier
# recording's probes slow the next run down until the kernel has removed
# them): ours, for up to 10 minutes, others' for up to 2; sets W, the
# seconds waited
wait_unprobed() {
	local t0=$EPOCHREALTIME pid stat comm exe mine any i
	for i in $(seq 1 3000); do
		mine=0 any=0
		while read -r pid stat comm; do
			[ "$comm" = varperf-unprobe ] && [[ $stat != Z* ]] || continue
			any=1
			exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exe=
			[ "${exe% (deleted)}" != "$VARPERF" ] || mine=1
		done < <(ps -eo pid=,stat=,comm=)
		if [ $mine = 0 ] && { [ $any = 0 ] || [ "$i" -gt 600 ]; }; then
			break
		fi
		sleep 0.2
	done
	W=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}

median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# mean DATA FUNC: "N MEAN-NS partial|complete" of FUNC in the report of
# DATA, "none" where FUNC was not probed, "failed: why" where no report
mean() {
	"$VARPERF" report -i "$1" --format json 2>"$1.err" | python3 -c '
import json, sys
j = json.load(sys.stdin)
fn = sys.argv[1]
fs = [f for f in j.get("functions", []) if fn in (f.get("function"), f.get("symbol"), f.get("base"))]
if not fs or not fs[0].get("count"):
    print("none")
else:
    partial = any(n.get("partial") for n in j.get("nodes", []) if n.get("function") == fs[0].get("function"))
    print(fs[0]["count"], fs[0]["mean"], "partial" if partial else "complete")' "$2" 2>/dev/null ||
		echo "failed: $(head -n 1 "$1.err")"
}

# bench NAME FUNC CMD...: the figures of one program
bench() {
	local name=$1 func=$2 plain runs=() rc_q t_q runs_needed
	shift 2
	echo "== $name: $* =="
	wait_unprobed
	for _ in 1 2 3; do
		timed 0 "$work/plain.err" "$@"
		[ "$RC" = 0 ] || { cat "$work/plain.err" >&2; die "$name exited with status $RC"; }
		runs+=("$T")
	done
	plain=$(median "${runs[@]}")
	echo "$name plain: $plain s (median of ${runs[*]})"

	# once without -q, for what varperf says about phase 2
	wait_unprobed
	record "$VP_BENCH_TIMEOUT" "$work/$name-v.err" -o "$work/$name-v.data" -- "$@"
	outcome "$name record (auto, not quiet)" "$work/$name-v.err"
	# two runs of the program, unless phase 2 probed the run phase 1 sampled
	runs_needed=1
	if grep -q 'running it again for phase 2' "$work/$name-v.err" ||
		{ grep -q 'phase 2 of 2' "$work/$name-v.err" &&
			! grep -q 'phase 2 of 2.*the same run' "$work/$name-v.err"; }; then
		runs_needed=2
	fi
	[ "$RC" != 0 ] || echo "$name program runs in auto mode: $runs_needed"
	grep '^varperf: ' "$work/$name-v.err" | grep -E 'phase [12]|cost|again' |
		sed "s/^varperf: /$name varperf says: /" || true

	# the figure: auto mode, quiet
	wait_unprobed
	record "$VP_BENCH_TIMEOUT" "$work/$name-q.err" -q -o "$work/$name.data" -- "$@"
	rc_q=$RC
	t_q=$T
	local after_record after_plain
	after_record="$(varperf_procs); probes still being removed from $name: $(removing "$1")"
	timed 0 "$work/plain.err" "$@"
	after_plain="$(varperf_procs); probes still being removed from $name: $(removing "$1")"
	if [ "$rc_q" = 124 ] || [ "$rc_q" = 137 ]; then
		echo "$name record: timeout after $t_q s (limit $VP_BENCH_TIMEOUT s)"
	elif [ "$rc_q" != 0 ]; then
		echo "$name record: failed after $t_q s, exit status $rc_q"
		why "$rc_q" "$work/$name-q.err"
	else
		awk -v p="$plain" -v r="$t_q" -v n="$runs_needed" -v name="$name" 'BEGIN {
			if (n == 1) { goal = 1.15 * p; g = "<= 1.15 x plain, one run" }
			else { goal = 2.3 * p + 1; g = "<= 2.3 x plain + 1 s, two runs" }
			printf "%s record: %.3f s, %.2f x plain (goal %s = %.3f s: %s)\n", name, r,
				r / p, g, goal, r <= goal ? "met" : "missed" }'
	fi
	echo "$name varperf processes when record returned: $after_record"
	awk -v p="$plain" -v a="$T" -v name="$name" 'BEGIN {
		d = (a - p) / p * 100
		printf "%s plain right after record: %.3f s, %+.1f%% against plain (goal within 3%%: %s)\n",
			name, a, d, (d <= 3 && d >= -3) ? "met" : "missed" }'
	echo "$name varperf processes after that plain run: $after_plain"
	wait_unprobed
	echo "$name waited for varperf-unprobe after that: $W s"

	# the reference: that function alone, probed
	record "$VP_BENCH_TIMEOUT" "$work/$name-p.err" -q --mode=probe -f "$func" \
		-o "$work/$name-probe.data" -- "$@"
	outcome "$name record --mode=probe -f $func" "$work/$name-p.err"
	local ma mp
	case $rc_q in
	124 | 137) ma=timeout ;;
	*) ma=$(mean "$work/$name.data" "$func") ;;
	esac
	case $RC in
	124 | 137) mp=timeout ;;
	*) mp=$(mean "$work/$name-probe.data" "$func") ;;
	esac
	local which res n ns how
	for which in auto probe; do
		[ $which = auto ] && res=$ma || res=$mp
		read -r n ns how _ <<<"$res"
		case $n in
		none) echo "$name $func mean ($which): not probed" ;;
		failed:) echo "$name $func mean ($which): no report: ${res#failed: }" ;;
		timeout) echo "$name $func mean ($which): n/a (timeout)" ;;
		*) awk -v n="$n" -v ns="$ns" -v p="$how" -v what="$which" -v f="$func" -v name="$name" 'BEGIN {
			printf "%s %s mean (%s): %.3f ms over %d calls%s\n", name, f, what, ns / 1e6, n,
				p == "partial" ? " (partial: probing stopped during the run)" : "" }' ;;
		esac
	done
	if [[ $ma == [0-9]* && $mp == [0-9]* ]]; then
		read -r _ ma _ <<<"$ma"
		read -r _ mp _ <<<"$mp"
		awk -v a="$ma" -v p="$mp" -v f="$func" -v name="$name" 'BEGIN {
			d = (a - p) / p * 100
			printf "%s %s mean difference auto/probe: %+.1f%% (goal within 5%%: %s)\n", name, f, d,
				(d <= 5 && d >= -5) ? "met" : "missed" }'
	else
		echo "$name $func mean difference auto/probe: n/a"
	fi
}

# lz4: the optimal parser of levels 10-12 compresses each block; a static
# function, so check that it is there by its name
lzfunc=LZ4HC_compress_optimal
if command -v nm >/dev/null 2>&1 && [ "$(nm "$cache/bin/lz4" | grep -c " [tT] $lzfunc\$")" = 0 ]; then
	lzfunc=LZ4F_compressUpdate
fi

buildid=$(readelf -n "$VARPERF" 2>/dev/null | awk '/Build ID/ { print $3 }') || true
echo "varperf: $vp_orig (build id ${buildid:-unknown})${VP_BENCH_RECORD_ARGS:+, record arguments: $VP_BENCH_RECORD_ARGS}"
echo "varperf processes before: $(varperf_procs)"
bench bzip2 BZ2_compressBlock "$cache/bin/bzip2" -c -1 -k "$input"
bench lz4 "$lzfunc" "$cache/bin/lz4" -12 -q -f -B4 "$input" "$work/out.lz4"
if [ "$failed" = 1 ]; then
	die "varperf record failed (see above)"
fi
