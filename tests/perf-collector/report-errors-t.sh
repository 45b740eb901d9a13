# SPDX-License-Identifier: GPL-3.0-or-later
# report-errors-t.sh - `varperf report` on damaged data files and bad
# command lines: the exact message, the exit status, and nothing on stdout.
# Needs no root: the data files are written byte by byte with printf (the
# format is in core/datafile.h and man/varperf-data.5).

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

# A complete file, one chunk per variable (octal escapes; each CRC is zlib's
# crc32 of the chunk's payload, as varperf's writer computes it):
#   header: "VPDATA\0\0", version 1, flags 0
#   META:   unit ns, CLOCK_MONOTONIC, module "t", function "f"
#   EVENTS: base time 1000; thread 0 (tid 1); call site 0; entry of f at
#           sp 0x1000, exit 1500 ns later at sp 0x1008
#   END:    exited with status 0, 2 events, end time 2500
# File offsets: META at 16 (its CRC at 28), EVENTS at 57, END at 104, size 127.
HDR='VPDATA\000\000\001\000\000\000\000\000\000\000'
META_HEAD='VPCK\001\000\000\000\031\000\000\000'
META_CRC='\310\351\316\221'
META_BODY='\001\001\001\002\001\001\006\003\001t\000\007\014\000\020\020\020\000\001\001f\001f\001f'
EVENTS='VPCK\002\000\000\000\037\000\000\000\227\006\325\371\350\003\000\000\000\000\000\000\006\000\001\001\012\000\000\001 \000\000\000\000\000\000\200@\000\001\000\270\027\020'
END_BODY='\003\000\000\000\007\000\000\000/\014\330\007\000\001\002\000\000\304\023'

printf "$HDR$META_HEAD$META_CRC$META_BODY$EVENTS"'VPCK'"$END_BODY" >good.data
printf "$HDR$META_HEAD$META_CRC$META_BODY$EVENTS"'XXXX'"$END_BODY" >badchunk.data
printf "$HDR$META_HEAD"'\000\000\000\000'"$META_BODY" >badcrc.data
printf 'VPDATA\000\000\143\000\000\000\000\000\000\000' >v99.data
printf 'NOTVPDAT\001\000\000\000\000\000\000\000' >badmagic.data
: >empty.data
head -c 10 good.data >short.data
head -c 126 good.data >trunc.data

[ "$(wc -c <good.data)" -eq 127 ] || tap_bail "good.data has the wrong size"

# check_fail DESC STATUS STDERR ARGS... - varperf report ARGS exits with
# STATUS, prints exactly STDERR on stderr and nothing on stdout.
check_fail() {
	_desc=$1 _status=$2 _err=$3
	shift 3
	"$VARPERF" report "$@" >out 2>err
	tap_is "$_status" "$?" "$_desc: exit status"
	tap_is "$_err" "$(cat err)" "$_desc: message"
	tap_is "" "$(cat out)" "$_desc: nothing on stdout"
}

tap_plan 47

# The well-formed file is read: the baseline for the damaged ones.
"$VARPERF" report -i good.data >out 2>err
tap_is 0 "$?" "good file: exit status"
tap_is "" "$(cat err)" "good file: no message"
tap_like "$(cat out)" '^  invocations: +1$' "good file: one invocation"
tap_like "$(cat out)" '^  total time: +1\.50 us ' "good file: its duration is 1500 ns"

check_fail "empty file" 1 \
	"varperf: error: 'empty.data': offset 0: file is empty (expected a varperf data file)" \
	-i empty.data
check_fail "wrong magic" 1 \
	"varperf: error: 'badmagic.data': offset 0: not a varperf data file (bad magic)" \
	-i badmagic.data
check_fail "version 99" 1 \
	"varperf: error: 'v99.data': offset 8: unsupported format version 99 (this varperf reads versions 1 to 4)" \
	-i v99.data
check_fail "META chunk with a bad CRC" 1 \
	"varperf: error: 'badcrc.data': offset 28: chunk checksum mismatch (stored 00000000, computed 91cee9c8)" \
	-i badcrc.data
check_fail "file truncated inside the header" 1 \
	"varperf: error: 'short.data': offset 10: file ends inside the file header (truncated)" \
	-i short.data
# The EVENTS chunk before the bad one was fine: still no numbers at all.
check_fail "bad chunk magic after valid events" 1 \
	"varperf: error: 'badchunk.data': offset 104: bad chunk magic (expected \"VPCK\")" \
	-i badchunk.data
check_fail "missing input file" 1 \
	"varperf: error: cannot open 'missing.data': No such file or directory" \
	-i missing.data

# A truncated tail is a warning (the complete chunks are reported) ...
trunc_msg="'trunc.data': offset 104: chunk of 7 bytes ends past the end of the file (truncated); read up to the last complete chunk"
"$VARPERF" report -i trunc.data >out 2>err
tap_is 0 "$?" "truncated tail: exit status"
tap_is "varperf: warning: $trunc_msg" "$(cat err)" "truncated tail: warning"
tap_like "$(cat out)" '^  invocations: +1$' "truncated tail: the complete events are reported"
tap_like "$(cat out)" '^  target: +recording incomplete \(no END chunk\)$' \
	"truncated tail: the report says the recording is incomplete"
# ... and an error with --strict.
check_fail "truncated tail with --strict" 1 "varperf: error: $trunc_msg" --strict -i trunc.data

# Usage errors: exit 129 before the data file is even opened.
check_fail "unknown option" 129 \
	"$(printf '%s\n%s' "varperf: error: unknown option '--bogus'" 'usage: varperf report [<options>] [<file>...]')" \
	--bogus -i good.data
check_fail "non-numeric --beta" 129 \
	"varperf: error: invalid value 'x' for '--beta': must be between 0 and 1" \
	--beta x -i good.data
check_fail "--beta above 1" 129 \
	"varperf: error: invalid value '2' for '--beta': must be between 0 and 1" \
	--beta 2 -i good.data
check_fail "unknown --format" 129 \
	"varperf: error: invalid value 'xml' for '--format': must be 'text', 'json', 'dot', 'chrome', 'folded', 'html' or 'pprof'" \
	--format xml -i good.data
check_fail "--vcg with --format html" 129 \
	"varperf: error: '--vcg' is for the text report: the HTML report draws the graph at its top" \
	--vcg --format html -i good.data

tap_done
