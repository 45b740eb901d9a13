# SPDX-License-Identifier: GPL-3.0-or-later
# json-subr.sh - what the tests that check a recording through its JSON
# report share.  Source it after test-subr.sh:
#
#	. "$top_srcdir/tests/lib/json-subr.sh"
#
# $T is where a test keeps the fixture's own output (its ground truth),
# $R the report; q runs tests/perf-collector/check-json.py on either.

CHECK=$top_srcdir/tests/perf-collector/check-json.py
T=$TMPDIR_T/truth
R=$TMPDIR_T/report.json

# q ARGS... - check-json.py ARGS (see its usage).
q() {
	python3 "$CHECK" "$@"
}

# j FILE EXPR: EXPR in Python with j the JSON report FILE and node(f) its
# nodes of function f.
j() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
def node(f):
    return [n for n in j["nodes"] if n["function"] == f]
print(eval(sys.argv[2]))' "$@"
}

# tap_from FILE - one TAP test per "ok - ..."/"not ok - ..." line of FILE
# (check-json.py compare), "# ..." lines as diagnostics.
tap_from() {
	while IFS= read -r _l; do
		case $_l in
		"ok - "*) tap_pass "${_l#ok - }" ;;
		"not ok - "*) tap_fail "${_l#not ok - }" ;;
		*) tap_diag "${_l#\# }" ;;
		esac
	done <"$1"
}

# report_json DATA DESC - varperf report --raw on DATA as JSON into $R:
# one test (exit status 0, DESC), what it printed as diagnostics.
report_json() {
	"$VARPERF" report --raw -i "$1" --format json >"$R" 2>"$TMPDIR_T/err"
	tap_is 0 $? "$2"
	[ -s "$TMPDIR_T/err" ] && tap_diag "$(cat "$TMPDIR_T/err")"
	return 0
}
