#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# export-size-t.sh - the chrome and folded exports say how much they will
# write before they write it.  gen-crafted's "deep-call 5000" is 5000
# nested probed calls in 55 kB: their folded stacks are 12.5 million
# frames, 62 562 510 bytes (a recording of 425 kB once folded into 200 MB
# without a word), so folding it warns with the size, exactly that of the
# file it writes; a file system with less room than an export is refused
# before a byte is written (a 651 MB recording once exported 7.8 GB of
# chrome trace), with no file left.  No recording.
#
# Environment (make check): top_srcdir, top_builddir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"
LC_ALL=C
export LC_ALL
"$gen" deep-call 5000 deep.data && "$gen" deep-call 50 small.data ||
	tap_bail "gen-crafted cannot write the files"

tap_plan 12

"$VARPERF" report -i deep.data --format folded -o deep.folded 2>err
tap_is 0 $? "folded export of 5000 nested calls exits 0"
tap_is 62562510 "$(wc -c <deep.folded | tr -d ' ')" \
	"its stacks: sum over depths 1..5001 of the frames, 62 562 510 bytes"
tap_like "$(cat err)" \
	"^varperf: warning: 'deep.data': the folded stacks will take about 62.6 MB, [0-9]+ times the data file$" \
	"a warning says so before writing, with the size it writes"
"$VARPERF" report -i deep.data --format folded >stdout.folded 2>err
tap_like "$(cat err)" "the folded stacks will take about 62.6 MB" \
	"the same to standard output"
"$VARPERF" report -i small.data --format folded -o small.folded 2>err
tap_is "0 " "$? $(cat err)" "a small export: no warning"
tap_is 51 "$(wc -l <small.folded | tr -d ' ')" "small: one line per context"
"$VARPERF" report -i deep.data --format chrome -o deep.json 2>err
tap_is "0 " "$? $(cat err)" "chrome export of 5001 calls: no warning (under 1 GB, 14 times)"

# a file system with less room than the export: refused, nothing left
if [ "$(id -u)" = 0 ] && mkdir small && mount -t tmpfs -o size=256k tmpfs small 2>/dev/null; then
	"$VARPERF" report -i deep.data --format chrome -o small/trace.json 2>err
	st=$?
	tap_like "$st $(cat err)" \
		"^1 varperf: error: 'deep.data': the chrome trace would take about [0-9.]+ kB, more than the 262.1 kB free where it goes$" \
		"chrome into 256 KiB: refused, both sizes named"
	tap_is "" "$(ls -A small)" "chrome: no file left"
	"$VARPERF" report -i deep.data --format folded -o small/f.folded 2>err
	st=$?
	tap_is "1 varperf: error: 'deep.data': the folded stacks would take about 62.6 MB, more than the 262.1 kB free where it goes" \
		"$st $(cat err)" "folded into 256 KiB: refused"
	tap_is "" "$(ls -A small)" "folded: no file left"
	"$VARPERF" report -i small.data --format folded -o small/f.folded 2>err
	tap_is "0 51" "$? $(wc -l <small/f.folded | tr -d ' ')" "what fits is written"
	umount small
else
	tap_skip "mounting a small tmpfs needs root" 5
fi

tap_done
