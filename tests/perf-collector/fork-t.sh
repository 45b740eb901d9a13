#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# fork-t.sh - children of the recorded program (--follow-fork, the
# default).  fx-fork forks three children that call work() 40 times each
# and two that call it 10 times and exec /bin/true; every process prints
# its own count with its pid.  On both probe backends every process's
# count is exact (report --pid; the children call work() right after the
# fork: on BPF each is held until its own links exist), the exec'd
# children are listed with what they exec'd, and record says what it
# followed; sample mode unwinds the children's samples; with
# --no-follow-fork record says exactly how many children it did not
# follow and the file holds the parent's calls only; in auto mode the
# children's CPU time pays for their probes.
# BPF skips where the backend cannot run here.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-fork"

. "$top_srcdir/tests/lib/json-subr.sh"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# truth KIND: "pid:count" of the fixture's "count work KIND PID N" lines in
# out, sorted by pid.
truth() {
	"$AWK" -v k="$1" '$1 == "count" && $2 == "work" && $3 == k { print $4 ":" $5 }' out |
		sort -n | tr '\n' ' '
}

# counts FILE KIND: the same from the recording FILE, process by process
# (report --pid): work()'s calls in each process the report lists as KIND
# (parent: the program; child: forked; execd: forked, then exec'd).
counts() {
	for p in $(j "$1.json" "' '.join(str(p['pid']) for p in j['processes'] if
		{'parent': p['ppid'] is None,
		 'child': p['ppid'] is not None and p['exec'] is None,
		 'execd': p['exec'] is not None}['$2'])"); do
		"$VARPERF" report -i "$1" --pid "$p" --format json >one.json 2>/dev/null
		echo "$p:$(j one.json "sum(n['count'] for n in node('work'))")"
	done | sort -n | tr '\n' ' '
}

true_path=$(readlink -f /bin/true)
prog=$FIXTURES/fx-fork

if "$VARPERF" record -q --mode=probe --backend=bpf -f work -o probe.data -- "$prog" \
	>/dev/null 2>err; then
	have_bpf=1
else
	have_bpf=
	tap_diag "no BPF backend here: $(cat err)"
fi

for b in perf bpf; do
	if [ $b = bpf ] && [ -z "$have_bpf" ]; then
		tap_skip "no BPF backend here" 8
		continue
	fi
	wait_unprobed
	"$VARPERF" record --mode=probe --backend=$b -f work -o $b.data -- "$prog" 3 40 0 2 \
		>out 2>err
	tap_is "0 3 2" "$? $("$AWK" '$2 == "children" || $2 == "execs" { print $3 }' out | tr '\n' ' ' |
		sed 's/ $//')" \
		"--backend=$b: fx-fork forks 3 children and 2 that exec"
	tap_like "$(cat err)" "^varperf: followed 5 child processes of '$prog': 6 processes recorded \(report --pid shows one\)$" \
		"... record says it followed them"
	tap_like "$(cat err)" "^varperf: 2 child processes exec'd another program and were not followed from then on: '$true_path' \(2\)$" \
		"... and which exec'd what"
	"$VARPERF" report -i $b.data --format json >$b.data.json 2>/dev/null
	tap_is "6 $((200 + 3 * 40 + 2 * 10)) 0" "$(j $b.data.json "'%d %d %d' % (len(j['processes']),
		sum(n['count'] for n in node('work')), j['totals']['lost'])")" \
		"... the file holds 6 processes and every call of work()"
	tap_is "$(truth parent)" "$(counts $b.data parent)" "... the program's own calls, exactly"
	tap_is "$(truth child)" "$(counts $b.data child)" "... each child's calls, exactly"
	tap_is "$(truth execd)" "$(counts $b.data execd)" \
		"... each exec'd child's calls before its exec, exactly"
	tap_is "$true_path $true_path" "$(j $b.data.json "' '.join(p['exec'] for p in
		j['processes'] if p['exec'])")" "... and what those exec'd, in the JSON"
done

# ---- not following: exactly how many, said at the end ----
wait_unprobed
"$VARPERF" record --mode=probe --backend=perf --no-follow-fork -f work -o nf.data -- \
	"$prog" 3 40 0 2 >out 2>err
tap_is 0 $? "--no-follow-fork records fx-fork"
tap_is "varperf: '$prog' forked 5 child processes, not followed (--no-follow-fork): only its own threads are recorded" \
	"$(tail -1 err)" "... and says last how many children it did not follow"
"$VARPERF" report -i nf.data --format json >nf.json 2>/dev/null
tap_is "200 5 None" "$(j nf.json "'%d %d %s' % (sum(n['count'] for n in node('work')),
	j['totals']['unfollowed'], j['processes'])")" \
	"... the file holds the program's 200 calls only, and the count"
"$VARPERF" report -i nf.data >nf.txt 2>&1
tap_like "$(cat nf.txt)" "^  child processes not followed: 5$" "... which the text report shows"

# ---- report --pid of a process not recorded ----
"$VARPERF" report -i nf.data --pid 1 >out 2>err
tap_like "$? $(cat err)" "^1 varperf: error: no process 1 in 'nf.data' \(its processes: [0-9]+\)$" \
	"report --pid of a process not in the file: an error naming the ones there"

# ---- auto mode: the children's CPU time pays for their probes ----
# Two children spin 300 x 2 ms in work(), the parent waits: the probes
# cost about 0.1% of the CPU time of the processes probed, whose calls
# they are; counted against the parent's alone, work() would be over the
# budget and no longer probed.
wait_unprobed
"$VARPERF" record -f work -o auto.data -- "$prog" 2 300 2000 >out 2>err
tap_is 0 $? "auto mode records fx-fork with 2 children spinning in work()"
tap_unlike "$(cat err)" "stopped probing" "... and keeps probing work(), called in the children"
"$VARPERF" report -i auto.data --format json >auto.data.json 2>/dev/null
# (a busy host may see the program end before phase 2 probes it: it runs
# again, and the second run's two children are those probed)
want=$(truth child | sed 's/:[0-9]*//g')
if grep -q "running it again for phase 2" err; then
	want=$("$AWK" '$1 == "count" && $2 == "work" && $3 == "child" { print $4 }' out |
		tail -n 2 | sort -n | tr '\n' ' ')
fi
tap_is "$want" "$(counts auto.data child | sed 's/:[1-9][0-9]*//g')" \
	"... whose calls are in the file, child by child"

# ---- sample mode: the children's samples, unwound ----
# Two children spin 100 x 2 ms in work(): about 200 samples each at 1 kHz
# of cpu-clock (their CPU time, whatever the load).
"$VARPERF" record --mode=sample -o s.data -- "$prog" 2 100 2000 >out 2>err
tap_is 0 $? "sample mode records fx-fork with 2 children spinning 200 ms each"
"$VARPERF" report -i s.data --format json >s.data.json 2>/dev/null
for p in $(j s.data.json "' '.join(str(p['pid']) for p in j['processes'] if p['ppid'])"); do
	"$VARPERF" report -i s.data --pid "$p" --format json >one.json 2>/dev/null
	n=$(j one.json "sum(n['samples'] for n in j['sampled']['nodes'] if n['function'] == 'work')")
	tap_is True "$(python3 -c "print(150 <= $n <= 250)")" \
		"... child $p: $n samples in work() (200 expected)"
done

tap_done
