# SPDX-License-Identifier: GPL-3.0-or-later
# pprof-t.sh - `varperf report --format pprof`: a gzipped profile.proto
# whose values per calling context are sums that add up across recordings.
# gen-crafted's "costly N" writes a recording whose durations are known in
# advance: main calls work 5 times, and work takes 1700 + 400 k ns
# (k = 0..4) once compensated, 30 us more in every fourth call of main.  So
# work has 5 N calls, 10 000 ns each on average, and the sum of the squares
# of its durations is N/4 * 5 282 850 000 + 3N/4 * 32 850 000 ns^2.  The
# profile is decoded here by a protobuf reader of its own (not protobuf-c),
# and, when Go is installed, by `go tool pprof`, the format's own reader,
# which also merges two profiles.  Needs no root and no recording.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd python3
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

if ! "$VARPERF" version --build-options | grep -q '^protobuf-c: on$'; then
	tap_plan 2
	"$gen" costly 8 a.data || tap_bail "gen-crafted cannot write a recording"
	"$VARPERF" report -i a.data --format pprof -o a.pb.gz >out 2>err
	tap_is 129 \
		"$?" \
		"without protobuf-c: --format pprof is refused with the other options"
	tap_is "varperf: error: '--format pprof' needs protobuf-c: this varperf was built without it (see 'varperf version --build-options')" \
		"$(cat err)" \
		"... and says why"
	tap_done
	exit
fi

tap_plan 16

for n in 200 300 500; do
	"$gen" costly $n c$n.data || tap_bail "gen-crafted cannot write the recordings"
done

# pb.py FILE - the profile, decoded from protobuf's wire format: one line
# per sample type ("type TYPE UNIT"), one per sample ("sample STACK VALUES"
# with the stack outermost first, frames joined by '/'), the default type
# and the comments.
cat >pb.py <<'EOF'
import gzip, sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        else:
            raise SystemExit("wire type %d" % wt)
        out.append((f, v))
    return out

def ints(v):   # a packed or a single varint, as signed 64-bit
    vals = []
    if isinstance(v, int):
        vals = [v]
    else:
        i = 0
        while i < len(v):
            x, i = varint(v, i); vals.append(x)
    return [x - (1 << 64) if x >= 1 << 63 else x for x in vals]

raw = open(sys.argv[1], "rb").read()
if raw[:2] != b"\x1f\x8b":
    raise SystemExit("not gzipped")
top = fields(gzip.decompress(raw))
strings = [v.decode() for f, v in top if f == 6]
if strings[0] != "":
    raise SystemExit("string 0 is not empty")
funcs = {}
for f, v in top:
    if f == 5:
        d = dict(fields(v)); funcs[d[1]] = strings[d.get(2, 0)]
locs = {}
for f, v in top:
    if f == 4:
        fl = fields(v); d = dict(fl)
        line = dict(fields([x for k, x in fl if k == 4][0]))
        locs[d[1]] = funcs[line[1]]
for f, v in top:
    if f == 1:
        d = dict(fields(v)); print("type", strings[d[1]], strings[d[2]])
for f, v in top:
    if f == 2:
        fl = fields(v)
        stack = sum((ints(x) for k, x in fl if k == 1), [])
        vals = sum((ints(x) for k, x in fl if k == 2), [])
        print("sample", "/".join(locs[l] for l in reversed(stack)), *vals)
for f, v in top:
    if f == 14:
        print("default", strings[v])
    if f == 13:
        for x in ints(v):
            print("comment", strings[x])
EOF

"$VARPERF" report -i c200.data --format pprof -o c200.pb.gz 2>err
tap_is 0 \
	"$?" \
	"report --format pprof -o writes the profile"
python3 pb.py c200.pb.gz >c200.txt 2>&1
tap_is 0 \
	"$?" \
	"the file is a gzipped profile.proto that decodes"
tap_is "type calls count type self_time nanoseconds type time nanoseconds type time_squared microseconds_squared " \
	"$(grep '^type' c200.txt | tr '\n' ' ')" \
	"sample types: calls, own time, time and time squared"
tap_is "default self_time" \
	"$(grep '^default' c200.txt)" \
	"the default type is the own time: a flame graph"
# work: 5 N calls, 10 000 ns each, squares as the header says, all its own
tap_is "sample main/work 1000 10000000 10000000 269070" \
	"$(grep '^sample main/work ' c200.txt)" \
	"work: 1000 calls, 10 ms, 269070 us^2, exactly"
tap_is 200 \
	"$(awk '/^sample main / { print $3 }' c200.txt)" \
	"main: 200 calls"
# main's own time is its time less work's
tap_is 10000000 \
	"$(awk '/^sample main / { print $5 - $4 }' c200.txt)" \
	"main's own time is its time less its callee's"

# each context's mean and variance from the sums are the report's
"$VARPERF" report -i c200.data --format json >c200.json 2>/dev/null
python3 - c200.txt c200.json >stats.out <<'EOF'
import json, sys
nodes = json.load(open(sys.argv[2]))["nodes"]
by_id = {n["id"]: n for n in nodes}
def chain(n):
    return (chain(by_id[n["parent"]]) + "/" if n["parent"] is not None else "") + n["function"]
rep = {chain(n): n for n in nodes}
bad = []
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] != "sample":
        continue
    calls, time, sq = int(w[2]), int(w[4]), int(w[5])
    n = rep[w[1]]
    mean = time / calls
    # the report's variance is over N; the squares were rounded to 1 us^2
    var = (sq * 1e6 - time * time / calls) / calls
    if calls != n["count"] or abs(mean - n["mean"]) > 1e-6 * n["mean"] or \
       abs(var - n["variance"]) > 1e-6 * n["variance"] + 0.5e6 / calls:
        bad.append("%s: %d %r %r vs %d %r %r" % (w[1], calls, mean, var, n["count"],
                                                  n["mean"], n["variance"]))
print(" ".join(bad) or "ok")
EOF
tap_is ok \
	"$(cat stats.out)" \
	"every context's count, mean and variance follow from its sums"

tap_is 3 \
	"$(grep -c '^comment' c200.txt)" \
	"comments say the program, the durations and the formulas"

# options that make no sense with a profile; a bad format names the choices
"$VARPERF" report -i c200.data --format pprof --slowest >out 2>err
tap_is "varperf: error: '--slowest' is for the text report, chrome and folded: a pprof profile sums every call" \
	"$(cat err)" \
	"--slowest with pprof: error"
"$VARPERF" report -i c200.data --format pprff >out 2>err
tap_like "$(cat err)" "must be 'text', 'json', 'dot', 'chrome', 'folded', 'html' or 'pprof'" \
	"a misspelt format lists pprof"

# go tool pprof, the format's own reader
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
	export HOME="$TMPDIR_T" GOCACHE="$TMPDIR_T/gocache" PPROF_TMPDIR="$TMPDIR_T"
	go tool pprof -top -sample_index=calls c200.pb.gz >top.out 2>&1
	tap_is 0 \
		"$?" \
		"go tool pprof -top reads it"
	tap_like "$(grep -E ' main/work$| work$' top.out)" "^ *1000 " "... work's 1000 calls in its flat column"
	for n in 300 500; do
		"$VARPERF" report -i c$n.data --format pprof -o c$n.pb.gz 2>/dev/null
	done
	go tool pprof -proto c200.pb.gz c300.pb.gz >merged.pb.gz 2>merge.err
	tap_is 0 \
		"$?" \
		"go tool pprof merges two profiles"
	python3 pb.py merged.pb.gz >merged.txt
	python3 pb.py c500.pb.gz >c500.txt
	# 200 + 300 calls of main: the squares of 375 + 125 calls of each kind
	tap_is "sample main/work 2500 25000000 25000000 672675" \
		"$(grep '^sample main/work ' merged.txt)" \
		"merged: work's sums add up exactly"
	# the squares are rounded to 1 us^2 once per context and profile:
	# two profiles' sums may differ from one's by 1
	python3 - c500.txt merged.txt >same.out <<'EOF'
import sys
def samples(path):
    return {w[1]: list(map(int, w[2:])) for w in (l.split() for l in open(path))
            if w[0] == "sample"}
a, b = samples(sys.argv[1]), samples(sys.argv[2])
bad = [k for k in set(a) | set(b)
       if k not in a or k not in b or a[k][:3] != b[k][:3] or abs(a[k][3] - b[k][3]) > 1]
print(" ".join(sorted(bad)) or "same")
EOF
	tap_is same "$(cat same.out)" \
		"two recordings merged are one recording of both workloads (squares to 1 us^2)"
else
	tap_skip "go tool pprof not installed (Debian's golang-go)" 5
fi

tap_done
