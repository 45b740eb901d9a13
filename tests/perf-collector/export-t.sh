#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# export-t.sh - `varperf report --format chrome` and `--format folded`
# against the JSON report of the same recording and the fixtures' own
# counts and means, and -o.  fx-basic: run() x 400 -> work() + leaf() x 3;
# fx-threads: worker_a -> work() x 3000 and worker_b -> work() x 2000 on two
# threads; the demo, recorded in auto mode as a user would.  check-export.py
# says what each check is.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-basic" "$FIXTURES/fx-threads" "$DEMO"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
check="python3 $top_srcdir/tests/perf-collector/check-export.py"
K=16 # VP_SLOWEST_DEFAULT

"$VARPERF" record --mode=probe -q -f run -f work -f leaf -o b.data -- "$FIXTURES/fx-basic" \
	>b.truth 2>err
tap_is 0 $? "record fx-basic exits 0"
[ -s err ] && tap_diag "$(cat err)"
"$VARPERF" record --mode=probe -q -f worker_a -f worker_b -f work -o t.data -- \
	"$FIXTURES/fx-threads" >t.truth 2>err
tap_is 0 $? "record fx-threads exits 0"
[ -s err ] && tap_diag "$(cat err)"
"$VARPERF" record -q -o demo.data -- "$DEMO" >/dev/null 2>err
tap_is 0 $? "record the demo exits 0"

# report D ARGS... >FILE - varperf report of D.data, standard error kept
report() {
	_d=$1
	shift
	"$VARPERF" report -i "$_d.data" "$@" 2>>report.err
}

for d in b t demo; do
	report $d --format json >$d.json || tap_bail "varperf report cannot read $d.data"
	report $d --format chrome >$d.chrome
	tap_is 0 $? "$d: --format chrome exits 0"
	tap_is ok "$($check chrome-format $d.chrome)" "$d: chrome: X and M events as the format has them"
	tap_is ok "$($check chrome-nodes $d.chrome $d.json)" \
		"$d: chrome: every node's calls, count, total, min, max, mean, sigma and z exact"
	nest=$($check chrome-nesting $d.chrome $d.json)
	# (auto mode plans the demo's probes itself: some runs probe no pair
	# of nested functions whose outer calls all returned)
	if [ $d = demo ] && [ "$nest" = "no nested call to check" ]; then
		tap_skip "demo: this run's plan probed no nested pair to check"
	else
		tap_like "$nest" '^ok [0-9]+$' "$d: chrome: calls nest on each thread, inside their parent's"
	fi
	report $d --format chrome --slowest >$d.slow.chrome
	tap_like "$($check chrome-slowest $d.chrome $d.slow.chrome $d.json $K)" '^ok [0-9]+ [0-9]+$' \
		"$d: chrome --slowest: the $K slowest calls of each significant node and what they called"

	report $d --format folded >$d.folded
	tap_is ok "$($check folded-time $d.folded $d.json)" \
		"$d: folded: each context's own time, adding up to the outermost nodes' time exactly"
	"$VARPERF" report -i $d.data --format folded --folded-value=variance >$d.var.folded \
		2>var.err
	tap_is ok "$($check folded-variance $d.var.folded $d.json var.err)" \
		"$d: folded variance: the lines add up to the tasks' N Var (less what is below 0)"
	report $d --format folded --slowest >$d.slow.folded
	tap_is ok "$($check folded-slowest $d.slow.folded $d.chrome $d.json $K)" \
		"$d: folded --slowest: the lines add up to the slow calls' durations exactly"
	report $d --format folded --slowest --typical >$d.typ.folded
	tap_is ok "$($check folded-typical $d.typ.folded $d.json $K)" \
		"$d: folded --slowest --typical: the time of as many calls at large"
done

# a sampled recording: its folded stacks are the whole flame graph, from
# _start down, each context's own samples times the period
"$VARPERF" record -q --mode=sample -o s.data -- "$DEMO" >/dev/null 2>err
tap_is 0 $? "record the demo in sample mode exits 0"
report s --format json >s.json
report s --format folded >s.folded
tap_is ok "$($check folded-time s.folded s.json)" \
	"sample mode: folded: every sampled context's own time, none left out"
tap_like "$(cat s.folded)" '^_start;.*;main;run_frames;frame;physics;collide' \
	"sample mode: folded: whole stacks from _start to the leaves"
# auto mode: the probed contexts, and phase 1's samples beside them
tap_like "$(cat demo.folded)" '^\[sampled\];_start;.*;main;' \
	"demo (auto mode): folded: the sampled stacks under [sampled]"
# chrome: the sampled stacks as spans, on the thread's track in sample
# mode, on a track of their own beside the probed calls in auto mode
report s --format chrome >s.chrome
tap_is ok "$($check chrome-format s.chrome)" "sample mode: chrome: X and M events as the format has them"
tap_like "$($check chrome-sampled s.chrome s.json)" '^ok [0-9]+$' \
	"sample mode: chrome: the spans nest strictly, each context's samples the sampled tree's"
tap_like "$($check chrome-sampled demo.chrome demo.json)" '^ok [0-9]+$' \
	"demo (auto mode): chrome: phase 1's spans too, each context's samples the tree's"
tap_like "$(grep thread_name demo.chrome)" 'sampled stacks' \
	"demo (auto mode): chrome: the spans' track is named as such"

# units and counts against the fixtures' own
tap_is ok "$($check chrome-truth b.chrome b.json b.truth run main/run)" \
	"fx-basic: run()'s 400 calls, their mean dur in us the fixture's"
tap_is ok "$($check chrome-truth b.chrome b.json b.truth work main/run/work)" \
	"fx-basic: work()'s 400 calls, their mean dur in us the fixture's"
tap_is ok "$($check chrome-truth t.chrome t.json t.truth work worker_a/work)" \
	"fx-threads: worker_a's 3000 calls of work(), their mean dur the fixture's"
tap_is ok "$($check chrome-truth t.chrome t.json t.truth work worker_b/work)" \
	"fx-threads: worker_b's 2000 calls of work(), their mean dur the fixture's"
tap_is 2 "$(python3 -c 'import json, sys
print(len({e["tid"] for e in json.load(open("t.chrome"))["traceEvents"] if e["ph"] == "X"}))')" \
	"fx-threads: two threads, two tids"

# on-CPU time: each thread's own clock, the same checks (BPF backend only)
if "$VARPERF" report -i t.data --time=cpu --format json >cpu.json 2>/dev/null; then
	report t --time=cpu --format chrome >cpu.chrome
	tap_is ok "$($check chrome-nodes cpu.chrome cpu.json)" \
		"--time=cpu: chrome: every node's calls as the on-CPU JSON report has them"
	tap_like "$($check chrome-nesting cpu.chrome cpu.json)" '^ok [0-9]+$' \
		"--time=cpu: chrome: calls still nest on each thread"
else
	tap_skip "t.data has no off-CPU times (not the BPF backend)" 2
fi

# --slowest=CONTEXT: a ';'-chain, or a function name for all its contexts
report b --format chrome --slowest='run;work' >ctx.chrome
tap_is "ok $K $K" "$($check chrome-slowest b.chrome ctx.chrome b.json $K 'run;work')" \
	"chrome --slowest='run;work': the $K slowest calls of work() in run(), nothing else"
report b --format chrome --slowest=run >run.chrome
tap_like "$($check chrome-slowest b.chrome run.chrome b.json $K run)" "^ok $K [0-9]+\$" \
	"chrome --slowest=run: run()'s $K slowest calls and everything in them"
report t --format folded --slowest=work >work.folded
tap_is ok "$($check folded-slowest work.folded t.chrome t.json $K work)" \
	"folded --slowest=work: both contexts of work(), $K slow calls each"
report t --format folded --slowest=work --typical >work.typ.folded
tap_is ok "$($check folded-typical work.typ.folded t.json $K work)" \
	"folded --slowest=work --typical"
"$VARPERF" report -i b.data --format chrome --slowest='main;run' >out 2>err
tap_is "1:varperf: error: no calling context of 'b.data' matches 'main;run'" \
	"$?:$(grep -v warning: err)" "--slowest with a context the file lacks: exit 1 and why"
tap_is "" "$(cat out)" "... and nothing on standard output"

# -o: the same bytes as standard output, for every format
for f in text json dot chrome folded; do
	"$VARPERF" report -i b.data --format $f >stdout.$f 2>/dev/null
	"$VARPERF" report -i b.data --format $f -o out.$f 2>/dev/null
	tap_is 0 $? "-o, --format $f: exit 0"
	tap_ok "$(cmp stdout.$f out.$f >/dev/null 2>&1; echo $?)" "-o, --format $f: the same bytes as stdout"
done
tap_is "" "$(ls -A | grep '^\.')" "-o leaves no temporary file behind"

# -o failures: the exact error, exit 1, and nothing left behind
mkdir d
"$VARPERF" report -i b.data -o d >out 2>err
tap_is "1:varperf: error: cannot write 'd': it is a directory, not a regular file" \
	"$?:$(grep -v warning: err)" \
	"-o DIRECTORY: exit 1 and why"
tap_is "" "$(ls -A d)" "... nothing written into the directory"
mkfifo fifo
"$VARPERF" report -i b.data -o fifo >out 2>err
tap_is "1:varperf: error: cannot write 'fifo': it is a FIFO that no process reads" \
	"$?:$(grep -v warning: err)" "-o FIFO nobody reads: exit 1 and why, without waiting"
tap_ok "$(test -p fifo; echo $?)" "... the FIFO is still one"
"$VARPERF" report -i b.data -o nodir/r.txt >out 2>err
tap_is "1:varperf: error: cannot create 'nodir/r.txt': No such file or directory" \
	"$?:$(grep -v warning: err)" "-o in a missing directory: exit 1 and why"
echo old >old.txt
chmod 640 old.txt
"$VARPERF" report -i b.data --format chrome --slowest=nosuch -o old.txt >out 2>err
tap_is "1:old" "$?:$(cat old.txt)" "a report that fails leaves the old file as it was"
tap_is "" "$(ls -A | grep '^\.')" "... and no temporary file"
"$VARPERF" report -i b.data --format folded -o old.txt 2>/dev/null
tap_is "0:-rw-r-----" "$?:$(ls -l old.txt | cut -c1-10)" "-o replaces a file, keeping its mode"
ln -s out.json link.json
"$VARPERF" report -i b.data --format folded -o link.json 2>/dev/null
tap_ok "$(test -L link.json && cmp -s out.json stdout.folded; echo $?)" \
	"-o through a symbolic link replaces the file it names, keeping the link"
"$VARPERF" report -i b.data --format chrome -o /dev/null 2>/dev/null
tap_ok "$(test $? -eq 0 && test -c /dev/null; echo $?)" "-o /dev/null writes into the device"

grep -Ev "warning: '[a-z]+.data': ([0-9]* compensated durations were clamped|.*sampled shares|phase 2's probes cost)" \
	report.err >err
[ -s err ] && tap_diag "$(cat err)"
tap_done
