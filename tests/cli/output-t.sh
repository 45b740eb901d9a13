#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# output-t.sh - one way to write a named output (util/output.h) for report
# -o and compare -o (record -o is in record-output-t.sh): the file is
# replaced whole, never emptied in place (a hard link to the old one keeps
# the old bytes); a FIFO with a reader and a character device are written
# straight through, a FIFO nobody reads is an error at once; a directory
# is refused; and, as root, a symbolic link another user planted in a
# directory others can write (sticky or not) is not followed, by report,
# compare or record, while the kernel's protected_symlinks rule still lets
# through the links it would (the caller's own, the directory owner's);
# a report killed by SIGTERM leaves no half file and no temporary one.
# Needs no recording: gen-crafted writes the data files.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen"
require_cmd timeout mkfifo
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"
umask 022

"$gen" wide 10 a.data && "$gen" wide 12 b.data || tap_bail "gen-crafted cannot write the data files"
"$VARPERF" report -i a.data >report.std 2>/dev/null || tap_bail "report -i a.data fails"
"$VARPERF" compare a.data b.data >compare.std 2>/dev/null
crc=$?	# the verdict's exit status (0, 1 or 3; 2: trouble)
[ $crc -ne 2 ] && [ -s compare.std ] || tap_bail "compare a.data b.data fails"

# leftovers: temporary names an output may not leave behind
leftovers() {
	find . -name '*.vp-*' -o -name '.*.??????' | sort
}

# ---- a regular file: replaced whole, with its read and write bits ----
"$VARPERF" report -i a.data -o new.txt 2>err
tap_is "0:644" "$?:$(stat -c %a new.txt)" "report -o a new file: exit 0, mode 0666 less the umask"
tap_ok "$(cmp -s new.txt report.std; echo $?)" "... the bytes report prints on stdout"
for cmd in report compare; do
	echo old >$cmd.old
	chmod 640 $cmd.old
	ln $cmd.old $cmd.hard
	ino=$(stat -c %i $cmd.old)
	if [ $cmd = report ]; then
		"$VARPERF" report -i a.data -o $cmd.old 2>err
	else
		"$VARPERF" compare -o $cmd.old a.data b.data 2>err
	fi
	tap_is "0:old:640" "$?:$(cat $cmd.hard):$(stat -c %a $cmd.old)" \
		"$cmd -o an existing file: replaced, not emptied in place (a hard link keeps 'old'), mode kept"
	tap_unlike "$ino" "$(stat -c %i $cmd.old)" "... a new file under the name"
	tap_ok "$(cmp -s $cmd.old $cmd.std; echo $?)" "... holding what $cmd prints on stdout"
done
echo old >kept.txt
"$VARPERF" report -i a.data --slowest=nosuch -o kept.txt 2>err
tap_is "1:old" "$?:$(cat kept.txt)" "a report that fails leaves the old file as it was"

# ---- a symbolic link of the caller: the file it names is replaced ----
echo old >target.txt
ln -s target.txt link.txt
"$VARPERF" compare -o link.txt a.data b.data 2>err
tap_ok "$(test $? -eq 0 && test -L link.txt && cmp -s target.txt compare.std; echo $?)" \
	"compare -o through the caller's symbolic link: the file it names, the link kept"

# ---- FIFOs and devices: straight through, or an error at once ----
mkfifo fifo
for cmd in report compare; do
	if [ $cmd = report ]; then
		timeout 20 "$VARPERF" report -i a.data -o fifo >out 2>err
	else
		timeout 20 "$VARPERF" compare -o fifo a.data b.data >out 2>err
	fi
	rc=$?
	[ $cmd = report ] && want=1 || want=2
	tap_is "$want:varperf: error: cannot write 'fifo': it is a FIFO that no process reads" \
		"$rc:$(cat err)" "$cmd -o FIFO nobody reads: an error at once, no wait"
	cat fifo >from.$cmd &
	reader=$!
	# until the reader is in its open() (then it counts as one)
	for _i in $(seq 1 200); do
		if [ $cmd = report ]; then
			timeout 20 "$VARPERF" report -i a.data -o fifo 2>err
		else
			timeout 20 "$VARPERF" compare -o fifo a.data b.data 2>err
		fi
		rc=$?
		grep -q 'no process reads' err || break
		sleep 0.1
	done
	wait $reader
	[ $cmd = report ] && want=0 || want=$crc
	tap_is "$want:" "$rc:$(cat err)" "$cmd -o FIFO with a reader: written through"
	tap_ok "$(cmp -s from.$cmd $cmd.std; echo $?)" "... the reader gets what stdout gets"
done
tap_ok "$(test -p fifo; echo $?)" "the FIFO is still one"
"$VARPERF" compare -o /dev/null a.data b.data 2>err
tap_ok "$(test $? -eq $crc && test -c /dev/null && test ! -s err; echo $?)" \
	"compare -o /dev/null writes into the device"
"$VARPERF" report -i a.data -o /dev/stdout 2>err | cat >out
tap_ok "$(cmp -s out report.std; echo $?)" "report -o /dev/stdout into a pipe: the same bytes"
mkdir d
"$VARPERF" compare -o d a.data b.data 2>err
tap_is "2:varperf: error: cannot write 'd': it is a directory, not a regular file" \
	"$?:$(cat err)" "compare -o DIRECTORY: exit 2 and why"
"$VARPERF" report -i a.data -o nodir/r.txt 2>err
tap_is "1:varperf: error: cannot create 'nodir/r.txt': No such file or directory" \
	"$?:$(cat err)" "report -o in a missing directory: exit 1 and why"
# SIGTERM at some point of a report: no half file, whenever it lands
"$gen" wide 3000 big.data || tap_bail "gen-crafted cannot write big.data"
"$VARPERF" report -i big.data --format json >big.std 2>/dev/null
bad=0
for delay in 0.02 0.05 0.1 0.15 0.2 0.3 0.5; do
	rm -f big.json
	"$VARPERF" report -i big.data --format json -o big.json 2>/dev/null &
	vp=$!
	sleep $delay
	kill -TERM $vp 2>/dev/null
	wait $vp
	# killed before the rename: no file; after: the whole report
	[ ! -e big.json ] || cmp -s big.json big.std || bad=$((bad + 1))
done
tap_is 0 "$bad" "report -o killed by SIGTERM at 7 moments: never a half file"
tap_is "" "$(leftovers)" "no temporary file left behind"

# ---- another user's symbolic link (as root; the user 'nobody') ----
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	tap_skip "needs root, the user 'nobody' and setpriv" 12
	tap_done
fi
as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
}
nobody_uid=$(id -u nobody)
chmod 755 "$TMPDIR_T"
mkdir sticky open secret own
chmod 1777 sticky
chmod 777 open
chmod 700 secret
chown nobody own
echo "root-only content" >secret/victim
chmod 600 secret/victim
if ! as_nobody test -w sticky; then
	tap_skip "nobody cannot reach $TMPDIR_T (a private TMPDIR above it?)" 12
	tap_done
fi
refused="it is a symbolic link of another user (uid $nobody_uid) in a directory others can write: not followed"
for dir in sticky open; do
	[ $dir = sticky ] && what="sticky world-writable" || what="world-writable, not sticky,"
	as_nobody ln -s "$TMPDIR_T/secret/victim" $dir/out || tap_bail "nobody cannot plant a link"
	"$VARPERF" report -i a.data --format html -o $dir/out 2>err
	tap_is "1:varperf: error: cannot write '$dir/out': $refused" "$?:$(cat err)" \
		"report -o through nobody's link in a $what directory: refused"
	"$VARPERF" compare -o $dir/out a.data b.data 2>err
	tap_is "2:varperf: error: cannot write '$dir/out': $refused" "$?:$(cat err)" \
		"compare -o through nobody's link in a $what directory: refused"
	"$VARPERF" record -o $dir/out -- /bin/true 2>err
	tap_is "1:varperf: error: cannot write '$dir/out': $refused" \
		"$?:$(grep -v 'warning:' err)" \
		"record -o through nobody's link in a $what directory: refused"
	tap_is "root-only content:600:root" \
		"$(cat secret/victim):$(stat -c %a:%U secret/victim)" "... the file it names untouched"
	tap_is "" "$(ls -A secret | grep -v '^victim$')" "... nothing new beside it"
done
# the kernel's rule lets these through: root's link, and the link of the
# user who owns the directory (who could write there anyway)
ln -s "$TMPDIR_T/secret/victim" sticky/mine
"$VARPERF" report -i a.data -o sticky/mine 2>err
tap_ok "$(test $? -eq 0 && test -L sticky/mine && cmp -s secret/victim report.std; echo $?)" \
	"report -o through root's own link in the sticky directory: followed"
echo "root-only content" >secret/victim
as_nobody ln -s "$TMPDIR_T/secret/victim" own/out
"$VARPERF" compare -o own/out a.data b.data 2>err
tap_ok "$(test $? -eq $crc && cmp -s secret/victim compare.std && test "$(stat -c %U secret/victim)" = root; echo $?)" \
	"compare -o through the link of the directory's owner: followed, the file root's"
tap_done
