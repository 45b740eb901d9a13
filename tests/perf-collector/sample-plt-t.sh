#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# sample-plt-t.sh - samples in a stub of the procedure linkage table:
# fx-plt calls tiny() of libfx-plt.so through tiny@plt in a tight loop, and
# a quarter or so of its samples fall in the stub, which has no symbol.
# With libbfd the stub is a function of its own, named as objdump -d names
# it ("tiny@plt"), called from main; without libbfd it is "[plt]".

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$FIXTURES/fx-plt"
if [ "$(id -u)" -ne 0 ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 1 ]; then
	tap_skip_all "sampling needs root or kernel.perf_event_paranoid <= 1"
fi

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# q JSON EXPR - print EXPR evaluated with s = the report's sampled part;
# fn(name) lists the functions called name, parent(n) is node n's parent
# function ("" at the root).
q() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampled"]
def fn(name):
    return [f for f in s["functions"] if f["function"] == name]
def parent(n):
    return s["nodes"][n["parent"] - 1]["function"] if n["parent"] else ""
print(eval(sys.argv[2]))' "$@"
}

"$VARPERF" record -q --mode=sample -e cpu-clock -o plt.data -- "$FIXTURES/fx-plt" >truth 2>err &&
	"$VARPERF" report -i plt.data --format json >plt.json 2>>err
tap_is 0 $? "fx-plt recorded and reported"
[ -s err ] && tap_diag "$(cat err)"
tap_is "count tiny 200000000" "$(cat truth)" "fx-plt made its 2 * 10^8 calls"

if "$VARPERF" version --build-options | grep -q '^libbfd: on$'; then
	tap_is "1 fx-plt True" "$(q plt.json "'%d %s %s' % (len(fn('tiny@plt')),
		fn('tiny@plt')[0]['module'].rsplit('/', 1)[-1],
		fn('tiny@plt')[0]['self'] >= s['samples'] // 10)")" \
		"the stub is tiny@plt, of fx-plt, with 10% of the samples or more"
	tap_is "main" "$(q plt.json "' '.join(sorted(set(parent(n) for n in s['nodes']
		if n['function'] == 'tiny@plt')))")" \
		"... called from main alone"
	tap_is "0" "$(q plt.json "sum(f['samples'] for f in fn('[plt]'))")" \
		"... and no sample in an unnamed [plt]"
else
	tap_skip "varperf is built without libbfd" 3
	tap_is "True" "$(q plt.json "(len(fn('[plt]')) == 1 and
		fn('[plt]')[0]['self'] >= s['samples'] // 10)")" \
		"without libbfd: the stub is [plt], with 10% of the samples or more"
fi

tap_done
