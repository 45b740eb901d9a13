#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# gdb-t.sh - the GDB plugin driven by `gdb -batch -nx` on the fx-gdb
# fixture.  Without a recording: errors are one line and GDB goes on, and
# `varperf break --slower-than` stops on the call the fixture makes slow.
# With root and the uprobe PMU, on a real recording of fx-gdb: `info
# variance` prints the numbers of `varperf report --format json` for the
# stopped context, maps a context the recording lacks onto the nearest
# one, and `varperf break` with the recorded statistics stops on the slow
# call only.  `varperf record` in GDB attaches varperf to the stopped
# process (fx-attach, fx-gdb), continues it, ends the recording at the next
# stop and loads it, and the program goes on unharmed; `varperf load --raw`
# loads the durations of `varperf report --raw`.
#
# Environment (make check): top_srcdir, VARPERF, FIXTURES and
# VARPERF_GDB_PLUGIN, the directories where the built _varperf module is.

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd gdb python3
require_file "$FIXTURES/fx-gdb" "$top_srcdir/gdb-plugin/varperf-gdb.py"
if [ -z "$VARPERF_GDB_PLUGIN" ]; then
	tap_skip_all "VARPERF_GDB_PLUGIN is not set (the GDB plugin is not built)"
fi
if [ "$(gdb -batch -nx -ex 'python print(6 * 7)' 2>/dev/null)" != 42 ]; then
	tap_skip_all "gdb has no Python"
fi

FX=$FIXTURES/fx-gdb
LOADER=$top_srcdir/gdb-plugin/varperf-gdb.py
CHECK=$top_srcdir/tests/perf-collector/check-json.py
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# G ARGS... - run GDB in batch mode with the plugin, both outputs to stdout.
# debuginfod stays off: no network, no question to answer.
G() {
	gdb -batch -nx -iex 'set debuginfod enabled off' -x "$LOADER" "$@" 2>&1
}

# field OUTPUT NAME - the value after NAME on the first line "  NAME value"
# of `info variance` output.
field() {
	printf '%s\n' "$1" | "$AWK" -v k="$2" '$1 == k { print $2; exit }'
}

# num_is WANT SEEN DESC - the two numbers are the same double.
num_is() {
	if "$AWK" -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 == b + 0) }'; then
		tap_pass "$3"
	else
		tap_fail "$3"
		tap_diag "wanted: '$1'"
		tap_diag "  seen: '$2'"
	fi
}

# fake FILE PROGRAM [FUNCTION] - write a small recording that claims
# PROGRAM, with core's writer through the plugin's module: main calls
# FUNCTION (work) 20 times.
fake() {
	PYTHONPATH=$top_srcdir/gdb-plugin python3 - "$1" "$2" "${3:-work}" <<'EOF'
import sys
import varperf
funcs = [{"name": "main", "addr": 0x1000, "size": 0x100},
         {"name": sys.argv[3], "addr": 0x1100, "size": 0x100}]
w = varperf.create(sys.argv[1], {"argv": [sys.argv[2]], "functions": funcs,
                                 "modules": [(sys.argv[2], bytes.fromhex("deadbeef"))]})
w.thread(0, 1, 1)
w.callsite(0, flags=varperf._varperf.CS_NONE)
w.callsite(1, module=0, offset=0x1050, file="/src/p.c", line=7)
t = 0
w.event("entry", 0, 0, t, 0x8000, 0)
for i in range(20):
    w.event("entry", 1, 0, t, 0x7f00, 1)
    t += 100 + 50 * (i % 4)
    w.event("exit", 1, 0, t, 0x7f08)
w.event("exit", 0, 0, t + 10, 0x8008)
w.finish()
EOF
}

# ---- without a recording ----

out=$(G -ex 'help info variance' -ex 'help varperf')
tap_like "$out" '^Variance statistics of the current calling context' \
	"the loader registers 'info variance' with its help"
tap_like "$out" '^varperf break -- Stop when a call of a function takes unusually long' \
	"and the 'varperf' prefix with its subcommands"

out=$(G -ex 'info variance' -ex 'info variance patterns' -ex 'varperf break step' \
	-ex 'echo alive\n')
tap_like "$out" "^info variance: no recording loaded \(use 'varperf load \[FILE\]'\)\$" \
	"info variance without a recording: one-line error"
tap_like "$out" "^info variance patterns: no recording loaded" "info variance patterns too"
want="^varperf break: no recording loaded \(use 'varperf load \[FILE\]', or give --slower-than\)\$"
tap_like "$out" "$want" \
	"varperf break without a recording needs --slower-than"
tap_like "$out" '^alive$' "GDB goes on after the errors"

printf 'not a recording\n' >bad.data
fake fake.data /nonexistent/other || tap_bail "cannot write a recording with the module"
head -c 20 fake.data >short.data
out=$(G "$FX" -ex 'varperf load bad.data' -ex 'varperf load short.data' \
	-ex 'varperf load nosuch.data' -ex 'varperf load a b' -ex 'echo alive\n')
tap_like "$out" "^varperf load: 'bad.data': offset 0: not a varperf data file \(bad magic\)\$" \
	"a corrupt file: one-line error from core"
tap_like "$out" "^varperf load: 'short.data': offset 16: .*truncated" "a truncated file"
tap_like "$out" "^varperf load: cannot open 'nosuch.data': No such file or directory\$" \
	"a missing file"
tap_like "$out" '^varperf load: usage: varperf load \[--raw\] \[--time=wall\|cpu\|offcpu\|blocked\|preempted\|own\] \[FILE\]$' "two file names"
tap_like "$out" '^alive$' "GDB goes on"

out=$(G "$FX" -ex 'varperf load fake.data' -ex 'info variance' -ex 'info variance patterns' \
	-ex 'info variance function work' -ex 'break step' -ex 'run' -ex 'info variance' \
	-ex 'info variance frame 99' -ex 'echo alive\n')
tap_like "$out" "^Loaded 'fake.data': 2 calling contexts of 2 probed functions, 21 calls" \
	"varperf load summarises the recording"
want="^warning: 'fake.data' was recorded from '/nonexistent/other', not from '.*fx-gdb'"
tap_like "$out" "$want \(build-ids differ\)\$" \
	"loading another program's recording warns"
tap_like "$out" '^info variance: no stack \(the program is not being run\)$' \
	"info variance without a process: one-line error"
tap_like "$out" '^Pattern Set \(VIM >= 10% of max; k = 5\.0\):$' "info variance patterns"
tap_like "$out" '^work: 20 calls in 1 context; mean 175 ns, sigma 56 ns, CoV 0\.319' \
	"info variance function: merged statistics"
want="^info variance: no frame from #0 outwards runs a function that 'fake.data' probed\$"
tap_like "$out" "$want" \
	"a stack of the wrong program: one-line error"
tap_like "$out" '^info variance frame: no frame #99 on the stack$' "a frame that does not exist"
tap_like "$out" '^alive$' "GDB goes on"
tap_unlike "$out" 'Traceback|Python Exception' "no Python traceback anywhere"

# varperf record: its own options are checked first, then that there is a
# process to record; varperf load --raw
out=$(G "$FX" -ex 'help varperf record' -ex 'varperf record' -ex 'varperf record --duration soon' \
	-ex 'varperf record --duration' -ex 'varperf record -p 1' -ex 'varperf record prog' \
	-ex 'varperf load --raw a b' -ex 'varperf load --rwa' -ex 'echo alive\n')
want='^Usage: varperf record \[--duration SECONDS\] \[-o FILE\] \[RECORD-OPTIONS\.\.\.\]$'
tap_like "$out" "$want" "help varperf record"
tap_like "$out" '^varperf record: the program is not being run$' \
	"varperf record without a process: one-line error"
want="^varperf record: invalid value 'soon' for '--duration': must be a number of seconds greater"
tap_like "$out" "$want than 0\$" "varperf record checks --duration"
tap_like "$out" "^varperf record: option '--duration' needs a value\$" "and that it has a value"
want="^varperf record: option '-p' is not for GDB: it records the process being debugged\$"
tap_like "$out" "$want" "varperf record refuses -p"
want="^varperf record: unexpected argument 'prog' \(it records the process being debugged\)\$"
tap_like "$out" "$want" "and a program to run"
tap_like "$out" '^varperf load: usage: varperf load \[--raw\] \[--time=wall\|cpu\|offcpu\|blocked\|preempted\|own\] \[FILE\]$' \
	"varperf load --raw with two files"
tap_like "$out" "^varperf load: unknown option '--rwa'\$" "varperf load with an unknown option"
tap_like "$out" '^alive$' "GDB goes on"

# an error of varperf record before it attaches is the command's one-line
# error, and the program goes on (option errors need no privileges)
out=$(G "$FX" -ex 'break step' -ex 'run' -ex 'varperf record --mode=bogus' -ex 'delete' \
	-ex 'continue')
tap_like "$out" "^varperf record: invalid value 'bogus' for '--mode': must be" \
	"varperf record relays varperf's error as its own"
tap_unlike "$out" '^varperf: error:|^usage:' "and prints it once, without varperf's usage"
tap_like "$out" '^count step 201$' "the program goes on to its end"

# the varperf that the plugin runs: $VARPERF, else the build tree's
if [ -n "$top_builddir" ] && [ -x "$top_builddir/cli/varperf" ]; then
	out=$(env -u VARPERF gdb -batch -nx -x "$LOADER" \
		-ex 'python import varperf; print(varperf.find_program())' 2>&1)
	tap_is "$(cd "$top_builddir/cli" && pwd -P)/varperf" \
		"$(printf '%s\n' "$out" | tail -n 1)" \
		"without VARPERF the plugin runs the varperf it was built with"
fi
out=$(VARPERF=/bin/true gdb -batch -nx -x "$LOADER" \
	-ex 'python import varperf; print(varperf.find_program())' 2>&1)
tap_is /bin/true "$(printf '%s\n' "$out" | tail -n 1)" "VARPERF names the varperf it runs"

out=$(G "$FX" -ex 'varperf load fake.data' -ex 'complete info variance function wo' \
	-ex 'complete varperf break --sl' -ex 'complete varperf load fake.d')
tap_like "$out" '^info variance function work$' "function names complete from the recording"
tap_like "$out" '^varperf break --slower-than$' "varperf break options complete"
tap_like "$out" '^varperf load fake\.data$' "varperf load completes file names"

# --slower-than needs no recording: the fixture's 137th call of step()
# takes 150 ms, the others 0.1-0.3 ms.
out=$(G "$FX" -ex 'varperf break step --slower-than 60ms' -ex 'run' -ex 'print step_calls' \
	-ex 'print frame_no' -ex 'continue')
tap_like "$out" '^slow step 137 frame 136$' "the fixture makes call 137 slow"
tap_is 1 "$(printf '%s\n' "$out" | grep -c '^varperf: step took')" \
	"varperf break --slower-than 60ms stops once"
tap_like "$out" '^varperf: call 137 since breakpoint 1 was set' "on call 137"
tap_like "$out" '^\$1 = 137$' "the program agrees: step_calls is 137"
tap_like "$out" '^\$2 = 136$' "the function's frame is there: its argument reads 136"
tap_like "$out" 'exited normally' "continue runs to the end without another stop"

# deleting varperf breakpoints (all at once: GDB walks its list) deletes
# their helpers too, and nothing stops any more
out=$(G "$FX" -ex 'varperf break step --slower-than 60ms' \
	-ex 'varperf break render --slower-than 1us' \
	-ex 'delete' -ex 'run' -ex 'maint info breakpoints' -ex 'echo alive\n')
tap_unlike "$out" '^varperf: (step|render) took' "no stop after 'delete'"
tap_unlike "$out" ' in (step|render) at ' "the helper breakpoints are gone"
tap_like "$out" '^alive$' "and GDB is fine"

# GDB exits cleanly after deleting varperf breakpoints in batch mode: their
# helpers once went through gdb.post_event, and an event still queued at
# exit is freed after the Python interpreter is (SIGSEGV in
# PyGILState_Ensure).  Deleting one breakpoint (last) leaves the other's helpers.
fake step.data "$FX" step || tap_bail "cannot write a recording with the module"
for del in 'delete' 'delete 1-2' 'delete 2 1' 'delete 1'; do
	out=$(G "$FX" -ex 'varperf load step.data' -ex 'varperf break step --sigma 2' \
		-ex 'varperf break render --slower-than 1s' -ex "$del" \
		-ex 'maint info breakpoints'; echo "exit status $?")
	tap_like "$out" '^exit status 0$' "'varperf break --sigma 2', '$del': GDB exits with status 0"
	tap_unlike "$out" 'Fatal signal|Segmentation fault' "'$del': no fatal signal"
	tap_unlike "$out" ' in step at ' "'$del': step's helper breakpoints are gone"
done
tap_is 2 "$(printf '%s\n' "$out" | grep -c '^-[0-9]* *breakpoint .* in render at ')" \
	"'delete 1' leaves render's two helpers"
# the calibration breakpoint (after the entry's first instruction) goes at
# the first stop after 16 calls: stop() itself must not delete it
out=$(G "$FX" -ex 'varperf break step --slower-than 60ms' -ex 'maint info breakpoints' \
	-ex 'run' -ex 'maint info breakpoints' -ex 'delete' -ex 'continue'; echo "exit status $?")
tap_is "2 1" "$(printf '%s\n' "$out" | awk '/^Num /{ if (n != "") printf "%d ", h; n = 1; h = 0 }
	/^-[0-9]+ +breakpoint .* in step at /{ h++ } END { print h }')" \
	"step's helpers: a return and a calibration breakpoint, the return alone after a stop"
tap_like "$out" '^exit status 0$' "and GDB exits with status 0"

# varperf gdb: GDB with the plugin (and a recording) loaded
if "$VARPERF" gdb --help >/dev/null 2>&1; then
	printf '#!/bin/sh\nprintf "%%s\\n" "$@"\n' >echo-gdb
	printf '#!/bin/sh\nexec gdb -batch -nx -iex "set debuginfod enabled off" "$@"\n' >batch-gdb
	chmod +x echo-gdb batch-gdb
	out=$("$VARPERF" gdb --gdb ./echo-gdb -i fake.data -- "$FX" 'a b' -x 2>err)
	tap_is "-q
-x
$LOADER
-ex
varperf load \"fake.data\"
--args
$FX
a b
-x" "$out" "varperf gdb runs GDB with the loader, the recording and the program"
	out=$("$VARPERF" gdb --gdb ./batch-gdb -i fake.data -- "$FX" 2>&1)
	tap_like "$out" "^Loaded 'fake.data': 2 calling contexts" \
		"varperf gdb: the plugin is loaded and loads the recording"
	out=$("$VARPERF" gdb --gdb ./nosuch-gdb -n 2>&1)
	st=$?
	# (the last line: a line may say it waited for an earlier recording)
	tap_is "127 varperf: error: cannot run './nosuch-gdb': No such file or directory" \
		"$st $(printf '%s\n' "$out" | tail -n 1)" \
		"varperf gdb without GDB: exit 127 and why"
	out=$("$VARPERF" gdb -i nosuch.data 2>&1)
	tap_is "1 varperf: error: cannot open 'nosuch.data': No such file or directory" "$? $out" \
		"varperf gdb with a missing recording"
	printf '#!/bin/sh\nprintf "VARPERF=%%s\\n" "$VARPERF"\n' >env-gdb
	chmod +x env-gdb
	vp=$VARPERF
	out=$(VARPERF=/nonexistent "$vp" gdb --gdb ./env-gdb -n 2>&1)
	tap_is "VARPERF=$(readlink -f "$vp")" "$(printf '%s\n' "$out" | tail -n 1)" \
		"varperf gdb sets VARPERF to itself for the plugin's varperf record"
else
	tap_skip "this varperf has no 'gdb' command"
fi

# ---- with a recording of fx-gdb ----

if [ "$(id -u)" -ne 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	tap_skip "the tests on a recording need root and the uprobe PMU"
	tap_done
fi
require_file "$VARPERF"

"$VARPERF" record -q --mode=probe -o x.data -- "$FX" >truth 2>err
tap_is 0 $? "varperf record fx-gdb"
[ -s err ] && tap_diag "$(cat err)"
# A background "varperf-unprobe" removes the recording's uprobes after
# record has exited; until it is done, the kernel's probe at step()'s entry
# takes the trap of GDB's breakpoint there.  Wait for it (a minute at most).
unprobing() {
	ps -eo stat=,comm= 2>/dev/null | "$AWK" '$1 !~ /^Z/ && $2 == "varperf-unprobe" { f = 1 }
		END { exit !f }'
}
_w=0
while unprobing && [ $_w -lt 600 ]; do
	sleep 0.1
	_w=$((_w + 1))
done
[ $_w -gt 0 ] && tap_diag "waited $((_w / 10)).$((_w % 10)) s for varperf-unprobe"
"$VARPERF" report -i x.data --format json >r.json 2>err
q() { python3 "$CHECK" "$@"; }

out=$(G "$FX" -ex 'varperf load x.data' -ex 'break step' -ex 'run' -ex 'continue' \
	-ex 'set variance raw on' -ex 'info variance' -ex 'info variance frame 1' \
	-ex 'set variance raw off' -ex 'info variance patterns' -ex 'info variance function step')
tap_unlike "$out" "^warning: .*(recorded|build|incomplete|lost)" \
	"loading the program's own recording gives no warning"
tap_like "$out" '^#0 step, in the recorded context \(node [0-9]+\):$' \
	"info variance at step() finds its recorded context"
tap_like "$out" '→ frame \[fx-gdb\.c:[0-9]+\] → step \[fx-gdb\.c:[0-9]+\]$' \
	"the context is main → frame → step"
# the first "info variance" block: up to the "#1 frame" line
ctx=$(printf '%s\n' "$out" | sed -n '/^#0 step, in the recorded context/,/^#1 frame/p')
for f in count mean stddev variance cov min max total; do
	case $f in
	count) k=calls ;;
	stddev) k=sigma ;;
	cov) k=CoV ;;
	*) k=$f ;;
	esac
	num_is "$(q node r.json main/frame/step $f)" "$(field "$ctx" $k)" \
		"info variance prints the report's $f of main/frame/step"
done
rank=$(printf '%s\n' "$ctx" | sed -n 's/^  pattern   rank \([0-9]*\) of.*/\1/p')
tap_is "$(python3 -c '
import json, sys
doc = json.load(open("r.json"))
node = [n["id"] for n in doc["nodes"] if n["function"] == "step" and n["count"] > 1][0]
print([p["rank"] for p in doc["patterns"] if node in p["nodes"]][0])')" "$rank" \
	"and its rank among the patterns"

# frame's contributors: row sums of the report's matrix over its sum
fr=$(printf '%s\n' "$out" | sed -n '/^#1 frame, in the recorded context/,/^Pattern Set/p')
want=$(python3 -c '
import json
doc = json.load(open("r.json"))
n = [n for n in doc["nodes"] if n["function"] == "frame"][0]
m = n["children_covariance"]["matrix"]
tot = sum(map(sum, m))
for lab, row in zip(n["children_covariance"]["labels"], m):
    print(lab.split("@")[0], repr(sum(row) / tot))')
for fn in step render self; do
	w=$(printf '%s\n' "$want" | "$AWK" -v f=$fn '$1 == f { print $2 }')
	s=$(printf '%s\n' "$fr" | "$AWK" -v f=$fn '$2 ~ "^" f "(@|$)" { print $1 }')
	tap_within "$w" "$s" 1e-9 "info variance frame 1: $fn's share of frame's variance"
done
# info variance patterns: the Pattern Set rows and the graph of the text
# report, its lines whole (--wide: GDB leaves folding to the terminal)
"$VARPERF" report --wide -i x.data >r.txt 2>err
rows() { sed -n '/^Pattern Set/,/^$/p' | grep -E '^ +[0-9]+ +[0-9.]+% '; }
want=$(rows <r.txt)
tap_is "$want" "$(printf '%s\n' "$out" | rows)" \
	"info variance patterns prints the Pattern Set as varperf report does"
if grep -q '^Variance Characterization Graph' r.txt; then
	want=$(sed -n '/^Variance Characterization Graph/,/^\(Underlying\|Pattern Set\)/p' r.txt |
		sed -e '/^\(Underlying\|Pattern Set\)/d' -e '/^$/d')
	seen=$(printf '%s\n' "$out" | sed -n '/^Variance Characterization Graph/,/^step: /p' |
		sed -e '/^step: /d' -e '/^$/d')
	tap_is "$want" "$seen" "and the Variance Characterization Graph as varperf report does"
else
	tap_skip "varperf report prints no Variance Characterization Graph"
fi
tap_like "$out" '^step: 201 calls in 2 contexts' "info variance function step: both contexts"

# a context the recording does not have: step() called through detour()
out=$(G "$FX" -ex 'varperf load x.data' -ex 'break step' -ex 'run 0 detour' -ex 'info variance')
want='^#0 step: this calling context was not recorded; the nearest recorded one \(node [0-9]+\) is$'
tap_like "$out" "$want" \
	"a stack that was not recorded gets the nearest recorded context"
tap_like "$out" '^    #1 detour \(called from fx-gdb\.c:[0-9]+\) is not in the recorded context$' \
	"and what differs: detour()"

# varperf break with the recorded statistics: mean + 3 sigma of step()
out=$(G "$FX" -ex 'varperf load x.data' -ex 'varperf break step' -ex 'run' \
	-ex 'print step_calls' -ex 'continue')
want='^varperf: breakpoint 1 stops at the return of step when a call \(in any context\) takes '
tap_like "$out" "${want}longer than .*: mean \+ 3 sigma of 201 recorded calls" \
	"varperf break takes its threshold from the recording"
tap_is 1 "$(printf '%s\n' "$out" | grep -c '^varperf: step took')" "it stops once"
tap_like "$out" '^varperf: call 137 since breakpoint 1 was set' "on the slow call"
tap_like "$out" '^varperf: [0-9.]+ sigma above the recorded mean' "saying how unusual it is"
tap_like "$out" '^\$1 = 137$' "step_calls agrees"

# varperf load --raw: the durations of varperf report --raw, probe costs in
"$VARPERF" report -i x.data --raw --format json >raw.json 2>err
costs=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["probe_costs"]))' \
	r.json)
out=$(G "$FX" -ex 'varperf load --raw x.data' -ex 'break step' -ex 'run' -ex 'continue' \
	-ex 'set variance raw on' -ex 'info variance' -ex 'varperf load x.data')
ctx=$(printf '%s\n' "$out" | sed -n '/^#0 step, in the recorded context/,/^Loaded/p')
for f in count mean min max; do
	k=$f
	[ $f = count ] && k=calls
	num_is "$(q node raw.json main/frame/step $f)" "$(field "$ctx" $k)" \
		"varperf load --raw: info variance prints report --raw's $f of main/frame/step"
done
if [ "${costs:-0}" -gt 0 ]; then
	want="; durations as measured, probe costs included \(--raw\)\.\$"
	tap_like "$out" "^Loaded 'x\.data': .*$want" \
		"varperf load --raw says the probe costs are in"
	tap_like "$out" "^Loaded 'x\.data': .*; probe costs subtracted\.\$" \
		"varperf load says they are subtracted"
	raw_mean=$(q node raw.json main/frame/step mean)
	"$AWK" -v a="$raw_mean" -v b="$(q node r.json main/frame/step mean)" \
		'BEGIN { exit !(a > b) }'
	tap_ok $? "the mean with the probe costs is the larger"
else
	for d in "varperf load --raw says so" "varperf load says they are subtracted" "larger mean"; do
		tap_skip "x.data has no calibrated probe costs: $d"
	done
fi

# ---- varperf record in GDB ----

# --list lists what probe mode would probe (auto mode would have to run
# the stopped program to choose) and returns with the program where it was
out=$(G "$FX" -ex 'break step' -ex 'run' -ex 'varperf record --list' -ex 'print step_calls' \
	-ex 'kill')
tap_like "$out" '^ *0x[0-9a-f]+ +[0-9]+ [a-z]+ +[a-z:0-9-]+ +step$' \
	"varperf record --list in GDB lists step()"
tap_like "$out" '^ *0x[0-9a-f]+ +[0-9]+ [a-z]+ +[a-z:0-9-]+ +render$' "and render()"
tap_like "$out" '^\$1 = 0$' "and returns without continuing the program (no call of step() done)"

# The recording ends at a breakpoint; a --duration timer that has not run
# out by then stops nothing later.  The next one ends at the program's exit.
out=$(G "$FX" -ex 'break step' -ex 'run' -ex 'varperf record --duration 1 --mode=probe -o b.data' \
	-ex 'print step_calls' -ex 'shell sleep 1' -ex 'delete' \
	-ex 'varperf record --mode=probe -o e.data' -ex 'info variance function render')
tap_like "$out" '^varperf: attached to process [0-9]+ ' \
	"varperf record in GDB runs varperf record -p and relays what it says"
want="^Recording process [0-9]+ into 'b\.data' until the program stops, at most 1 s\.\$"
tap_like "$out" "$want" "and continues the program"
tap_is 2 "$(printf '%s\n' "$out" | grep -cE '^Breakpoint 1(\.1)?, step')" \
	"the next breakpoint stops the program"
tap_like "$out" '^\$1 = 1$' "at the second call of step() (the first has counted)"
tap_like "$out" "^Loaded 'b\.data': " "and the recording is loaded"
tap_unlike "$out" 'received signal SIGINT' \
	"the --duration timer does not stop the program after the command"
tap_like "$out" '^count step 201$' "the program runs to its end"
tap_like "$out" 'exited normally' "and exits normally"
tap_like "$out" '^varperf: process [0-9]+ exited after ' "which ends the next recording"
tap_like "$out" "^Loaded 'e\.data': " "that is loaded then"
tap_like "$out" '^render: 200 calls in ' "with every call of render()"

FXA=$FIXTURES/fx-attach
if [ ! -x "$FXA" ]; then
	tap_skip "no fixture fx-attach"
	tap_done
fi
# fx-attach's two threads call work() 15000 times (1.5 s) and print
# checksums of every result: the program was not harmed if they match.
# Under GDB its output goes to a file of its own: on GDB's, a "[Thread
# ... exited]" of GDB's can come out around a line of the program's.
"$FXA" 15000 >native.out 2>&1
sums=$(grep '^thread ' native.out)

out=$(G "$FXA" -ex 'break main' -ex 'run 15000 >fxa-p.out' \
	-ex 'varperf record --duration 1 --mode=probe -o p.data' -ex 'info variance function work' \
	-ex 'continue')
tap_like "$out" '^Stopped after 1 s \(--duration\); the program does not receive this SIGINT\.$' \
	"varperf record --duration 1 stops the program after 1 s"
tap_like "$out" '^varperf: detached from process [0-9]+ after ' "varperf detaches"
want="^Loaded 'p\.data': [0-9]+ calling contexts? of [0-9]+ probed functions, [1-9][0-9]* calls"
tap_like "$out" "$want" "the probe recording is loaded"
n=$(printf '%s\n' "$out" | sed -n 's/^work: \([0-9]*\) calls\{0,1\} in .*/\1/p')
[ "${n:-0}" -gt 0 ] 2>/dev/null
tap_ok $? "work() was called while recording (${n:-no} calls)"
"$VARPERF" report -i p.data --format json >p.json 2>err
tap_is "$(q func p.json work count)" "$n" "varperf report counts the same calls"
tap_like "$out" ' run \[[^]]*\] → work \[fx-attach\.c:[0-9]+\]$' \
	"in the context run → work, in both threads"
tap_is "$sums" "$(grep '^thread ' fxa-p.out)" \
	"the program goes on unharmed: the checksums of a run without GDB"
tap_like "$out" 'exited normally' "and exits normally"
tap_unlike "$out" 'Traceback|Python Exception' "no Python traceback"

out=$(G "$FXA" -ex 'break main' -ex 'run 15000 >fxa-s.out' \
	-ex 'varperf record --duration 0.5 --mode=sample -o s.data' -ex 'continue')
tap_like "$out" "^Loaded 's\.data': 0 calling contexts of 0 probed functions" \
	"a sampling recording loads, without probed functions"
tap_like "$out" "^'s\.data' has samples only, no probed function: .*'varperf record --mode=probe'" \
	"and varperf record says how to record them"
"$VARPERF" report -i s.data --format json >s.json 2>err
tap_is yes "$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
n = sum(f["samples"] for f in doc["sampled"]["functions"] if f["function"] == "work")
print("yes" if n > 0 else "no: %d samples in work()" % n)' s.json 2>&1)" \
	"its samples show work()"
tap_is "$sums" "$(grep '^thread ' fxa-s.out)" "the program goes on unharmed"

tap_done
