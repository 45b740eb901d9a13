#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# predict-files-t.sh - varperf predict over generated recordings, no
# recording: gen-crafted's "sampled N" is a run of N samples of 1 ms of
# CPU time each, so a manifest giving size N for it makes the run time
# exactly N ms, and the prediction for 8000 is 8 s.  A manifest read on
# Windows (CRLF) gives the same; /dev/zero, a directory, a long line, a
# bad or missing size are errors naming the manifest and the line, where
# /dev/zero once read forever, a directory read as empty and a CR made
# "invalid value '2000\r' for 'size'".  More than 20 recordings are
# cross-validated in 20 folds, not left out one by one (a model fitted per
# recording: 400 took minutes).  Run again under ASan and UBSan by setup.sh
# check.
#
# Environment (make check): top_srcdir, top_builddir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd python3 timeout
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
LC_ALL=C
export LC_ALL

: >m.txt
for n in 500 1000 2000 4000; do
	"$gen" sampled $n s$n.data || tap_bail "gen-crafted cannot write s$n.data"
	echo "s$n.data $n" >>m.txt
done

tap_plan 20

# the predicted ns per strategy, and the folds and rows of the evaluation
cat >pred.py <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j.get("prediction") or {}
loo = j["leave_one_out"]
print(" ".join("%.0f" % p[s]["ns"] for s in ("representative", "sample") if s in p),
      loo["folds"], len(loo["runs"]))
PY

"$VARPERF" predict --manifest m.txt --size 8000 --format json >lf.json 2>err
tap_is 0 $? "predict over an LF manifest exits 0"
tap_is "8000000000 8000000000 4 4" "$(python3 pred.py lf.json 2>&1)" \
	"8000 samples of 1 ms: 8 s either strategy; 4 recordings left out one by one"
sed 's/$/\r/' m.txt >crlf.txt
"$VARPERF" predict --manifest crlf.txt --size 8000 --format json >crlf.json 2>err
tap_is "0 " "$? $(cat err)" "predict over a CRLF manifest exits 0, no message"
tap_is "$(python3 pred.py lf.json)" "$(python3 pred.py crlf.json 2>&1)" \
	"a CRLF manifest predicts the same"

# check WHAT MESSAGE FILE - predict --manifest FILE exits 1 with MESSAGE,
# within a timeout
check() {
	timeout 60 "$VARPERF" predict --manifest "$3" --size 10 >out 2>err
	st=$?
	tap_is "1 varperf: error: $2" "$st $(cat err)" "$1"
	tap_is "" "$(cat out)" "$1: nothing on stdout"
}
check "/dev/zero: an error, not forever" \
	"/dev/zero:1: a NUL byte: a manifest is text, lines '<file> <size>'" /dev/zero
mkdir dir.txt
check "a directory: an error, not an empty list" \
	"cannot read manifest 'dir.txt': Is a directory" dir.txt
{ echo "# sizes"; echo; head -c 5000 /dev/zero | tr '\0' x; echo " 10"; } >long.txt
check "a line longer than 4095 bytes" \
	"long.txt:3: a line longer than 4095 bytes: a manifest is text, lines '<file> <size>'" \
	long.txt
printf 's500.data 500\ns1000.data 2000x\n' >bad.txt
check "a bad size names the line and the value" \
	"bad.txt:2: invalid size '2000x': a whole number, K/M/G allowed" bad.txt
printf 's500.data\n' >nosize.txt
check "no size" "nosize.txt:1: expected '<file> <size>', found no size" nosize.txt
printf 's500.data 500\nnone.data 10\n' >none.txt
check "a missing recording names the line" \
	"none.txt:2: cannot open 'none.data': No such file or directory" none.txt
printf '# nothing yet\n' >empty.txt
"$VARPERF" predict --manifest empty.txt >out 2>err
tap_is "1 varperf: warning: manifest 'empty.txt' lists no recordings
varperf: error: predict needs recordings of at least 2 input sizes, got 0 recordings" \
	"$? $(cat err)" "an empty manifest: a warning naming it, then too few recordings"

# 25 recordings: 20 folds of the evaluation, 25 rows
: >m25.txt
i=1
while [ $i -le 25 ]; do
	n=$((400 + 40 * i))
	"$gen" sampled $n r$i.data || tap_bail "gen-crafted cannot write r$i.data"
	echo "r$i.data $n" >>m25.txt
	i=$((i + 1))
done
"$VARPERF" predict --manifest m25.txt --size 2000 --format json >m25.json 2>err
tap_is 0 $? "predict over 25 recordings exits 0"
tap_is "2000000000 2000000000 20 25" "$(python3 pred.py m25.json 2>&1)" \
	"25 recordings: 2 s for 2000 samples, 20 folds, each recording predicted"
"$VARPERF" predict --manifest m25.txt >m25.txt.out 2>&1
tap_like "$(cat m25.txt.out)" "^cross-validation in 20 folds" \
	"the text says cross-validation in 20 folds"

tap_done
