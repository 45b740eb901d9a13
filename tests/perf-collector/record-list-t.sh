#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# record-list-t.sh - `varperf record --list` in auto mode (the default)
# lists what auto mode would probe: it runs phase 1, plans, prints the
# plan's functions and ends without phase 2 (a launched program is
# killed, a process given with -p goes on).  The demo with --cutoff 40%
# has functions far on both sides of the cut; a program built here with
# names longer than the planner table's column checks that the table
# stays aligned.

. "$top_srcdir/tests/lib/test-subr.sh"

require_root_uprobes
require_file "$VARPERF" "$DEMO"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# names OUTPUT - the function names of a --list output, sorted
names() {
	"$AWK" '{ print $5 }' "$1" | sort | tr '\n' ' ' | sed 's/ $//'
}

# ---- what auto mode would probe, against what probe mode would ----
wait_unprobed
"$VARPERF" record --list --mode=probe -- "$DEMO" >probe.list 2>err
tap_is 0 $? "--mode=probe --list exits 0"
all=$(names probe.list)
"$VARPERF" record --list --cutoff 40% -- "$DEMO" 100000 >auto.list 2>err </dev/null
tap_is 0 $? "auto --list exits 0"
tap_like "$(cat err)" "^varperf: phase 1 of 2: sampling '.*vp-demo' for 0\.25 s, then listing what phase 2 would probe\$" \
	"auto --list runs phase 1"
tap_unlike "$(cat err)" "^varperf: phase 2 of 2" "and not phase 2"
# the table of the plan on stderr names the listed functions
planned=$("$AWK" '/^varperf: phase 2 probes/ { t = 1; next }
	t && /^varperf:   / { print $2; next } { t = 0 }' err | sort | tr '\n' ' ' | sed 's/ $//')
tap_is "$planned" "$(names auto.list)" "it lists the functions of the plan it printed"
# collide and physics take more than half of the demo's time, input and
# audio some 4%: far from the 40% cut either way
for f in main collide physics; do
	tap_like " $(names auto.list) " " $f " "$f (over 40%) is listed"
done
for f in input audio; do
	tap_unlike " $(names auto.list) " " $f " "$f (some 4%) is not"
done
n_auto=$(wc -l <auto.list)
n_all=$(wc -l <probe.list)
[ "$n_auto" -lt "$n_all" ]
tap_ok $? "auto mode lists fewer functions ($n_auto) than probe mode ($(echo $all | wc -w))"
# each listed line is a line of probe mode's list: the same columns
tap_is "" "$(grep -vxF -f probe.list auto.list)" "in the same format as probe mode's list"

# ---- the program ends with the listing ----
# 100000 frames take minutes; the listing comes after phase 1
start=$(date +%s)
"$VARPERF" record --list -- "$DEMO" 100000 >/dev/null 2>err </dev/null
st=$?
took=$(($(date +%s) - start))
tap_is 0 "$st" "auto --list on a long program exits 0"
[ "$took" -lt 30 ]
tap_ok $? "without waiting for the program's end (${took} s)"

# ---- -p: the process goes on ----
"$DEMO" 100000 >/dev/null 2>&1 </dev/null &
pid=$!
sleep 0.3
"$VARPERF" record --list --cutoff 40% -p "$pid" >p.list 2>err
tap_is 0 $? "auto --list -p exits 0"
tap_like " $(names p.list) " " physics " "and lists what the process would have probed"
kill -0 "$pid" 2>/dev/null
tap_ok $? "the process goes on"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# ---- the planner's table with long names ----
# one name over the column's limit of 60 characters, one of 41: the
# numbers of every row start in one column, the longest name's below it
long=spin_in_a_function_whose_name_is_far_longer_than_sixty_characters
mid=spin_in_a_function_with_a_41_char_name_xy
cat >names.c <<EOF
static volatile unsigned long sink;

__attribute__((noinline)) void $long(void)
{
	for (unsigned long i = 0; i < 20000000UL; i++)
		sink += i;
}

__attribute__((noinline)) void $mid(void)
{
	for (unsigned long i = 0; i < 20000000UL; i++)
		sink += i;
}

__attribute__((noinline)) void spin(void)
{
	for (unsigned long i = 0; i < 20000000UL; i++)
		sink += i;
}

int main(void)
{
	for (int i = 0; i < 100; i++) {
		$long();
		$mid();
		spin();
	}
	return 0;
}
EOF
${CC:-cc} -O0 -g -o names names.c || tap_bail "cannot compile names.c"
tap_is 41 "${#mid}" "the middle name has 41 characters"
"$VARPERF" record --list --cutoff 5% -- ./names >names.list 2>err
tap_is 0 $? "auto --list on a program with long names"
tap_is "$(printf '%s\n' main "$long" "$mid" spin | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(names names.list)" "lists its four functions"
# the column where each row's share ends ("%"), names of up to 60
# characters padded to the longest (41)
cols=$("$AWK" '/^varperf: phase 2 probes/ { t = 1; next }
	t && /^varperf:   / && /%  ~/ { print index($0, "%  ~") } ' err | sort -u)
tap_is "$((9 + 2 + 41 + 1 + 6 + 1))" "$cols" "every row's share ends in the same column"
tap_like "$(cat err)" "^varperf:   $long\$" "the long name on a line of its own"
tap_like "$("$AWK" -v l="varperf:   $long" 'p { print; exit } $0 == l { p = 1 }' err)" \
	"^varperf: {45}[ 0-9]{3}\.[0-9]{2}%  ~[0-9]+ calls  \+[0-9.]+%\$" \
	"its numbers on the next line, under the other rows' numbers"

tap_done
