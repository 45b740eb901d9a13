#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# auto-stack-t.sh - stacks deeper than the sampled copy.  fx-bigframe
# spends its time in main > stage > leaf, and stage's frame holds 20 000
# bytes: with the default 8 KiB copy no sample reaches main, and a plan
# from such samples ranks leaf above stage and never sees main.  Auto
# mode's phase 1 must notice the full copies, say so, and sample again
# with a larger copy, so that the plan ranks each caller above its
# callees; a copy that stays too small is a warning in every mode, -q or
# not.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-bigframe"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

tap_plan 12

# ---- auto mode: phase 1 raises the copy itself ----
# (1500 calls, some 5 s: with 500, a build without libunwind, whose libdw
# unwinds 32 KiB copies slowly, once planned phase 2 past the run's end
# on a loaded machine)
"$VARPERF" record -o a.data -- "$FIXTURES/fx-bigframe" 1500 >out 2>err
rc=$?
tap_is 0 $rc "auto mode exits 0"
[ "$rc" = 0 ] || tap_diag "$(cat err)"
tap_is 1500 "$(sed -n 's/^count stage //p' out)" "the fixture called stage 1500 times"
# Nearly every sample: those before main's first stage() call (ld.so and
# libc's start, a few ms of phase 1's 250, more on a busy machine) or in
# main between calls have shallow stacks.  Nine in ten at least: leaf is
# over 99 % of the fixture's time once it runs.
filled=$(sed -n 's/^varperf: phase 1: \([0-9]*\) of \([0-9]*\) samples filled the 8192-byte stack copy (their stacks may end short of main): sampling again with 32768 bytes$/\1 \2/p' err)
tap_is "yes" "$(echo "$filled" | "$AWK" 'NF == 2 && $1 >= 0.9 * $2 { print "yes"; exit }
	{ print "no: " $0 }' | head -n 1)" \
	"phase 1 says nearly every sample filled the 8 KiB copy, and raises it to 32 KiB"
[ -n "$filled" ] || tap_diag "$(cat err)"
# the plan's list: the functions after "phase 2 probes", in its order
plan=$(sed -n '/^varperf: phase 2 probes/,/^varperf: [^ ]/p' err |
	sed -n 's/^varperf:   \([a-z]*\) *\([0-9.]*\)%.*/\1 \2/p')
tap_is "main stage leaf" "$(echo "$plan" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')" \
	"the plan lists main, stage, leaf: each caller above its callee"
tap_is "100.00 yes" "$(echo "$plan" | "$AWK" 'NR == 1 { m = $2 } NR > 1 && $2 > p { bad = 1 }
	{ p = $2 } END { print m, bad ? "no" : "yes" }')" \
	"main is in every sample, and no callee has a larger share than its caller"
tap_unlike "$(cat err)" "truncated" "no truncated stacks left to warn of"
tap_unlike "$(cat err)" "left out of the plan" "... nor a sample the plan leaves out"
"$VARPERF" report -i a.data --format json >a.json 2>/dev/null
# (32768 bytes hold fx-bigframe's stacks, yet under load phase 1 once
# went on to the kernel's 65528: what matters is the raise, and no
# truncated sample left)
tap_is "True 0" "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["sampled"]["stack_size"] in (32768, 65528), j["sampled"]["truncated"])' a.json 2>&1)" \
	"the file says the raised copy, and has no truncated sample"

# A truncated stack is what libunwind's reads past the copy tell varperf;
# libdw, the unwinder of a build without it, stops alike where the copy
# ended and where the stack cannot be unwound (sample-errors-t.sh).
if ! "$VARPERF" version --build-options | grep -q '^libunwind: on$'; then
	tap_skip "varperf was built without libunwind: no truncated/broken distinction" 4
	tap_done
fi

# ---- the size the user chose stays; its truncation is a warning ----
# (and no plan is made from cut stacks: a plan from them ranked leaf
# above stage and never saw main)
"$VARPERF" record -q --stack-size 4096 -o b.data -- "$FIXTURES/fx-bigframe" 300 >out 2>err
rc=$?
tap_like "$(cat err)" "^varperf: warning: phase 1: ([0-9]+) of [0-9]+ samples \([0-9.]+%\) have \
truncated stacks: the 4096-byte stack copy ended before their outermost frame \(try --stack-size \
16384\)$" "auto -q --stack-size 4096: phase 1 warns of its truncated stacks"
tap_like "$(cat err)" "^varperf: error: none of the [0-9]+ samples of phase 1 was unwound to its \
outermost frame \(a stack copy too small, or code without unwind information\): no plan is made \
from cut stacks \(try a larger --stack-size\)$" "... makes no plan from them, and says so"
tap_is "1 300" "$rc $(sed -n 's/^count stage //p' out)" \
	"... and exits 1 (nothing was timed) once the program has run its course"

# ---- sample mode, quiet: the warning all the same ----
"$VARPERF" record -q --mode=sample -o s.data -- "$FIXTURES/fx-bigframe" 100 >out 2>err
tap_like "$(cat err)" "^varperf: warning: ([0-9]+) of [0-9]+ samples \([0-9.]+%\) have truncated \
stacks: the 8192-byte stack copy ended before their outermost frame \(try --stack-size 32768\)$" \
	"sample mode -q warns of truncated stacks"

tap_done
