# SPDX-License-Identifier: GPL-3.0-or-later
# man-t.sh - the manual pages agree with the program: every long option
# that "varperf CMD --help" prints is documented in varperf-CMD(1) (the
# global options and "version", which has no page of its own, in
# varperf(1)), and every page passes mandoc's linter when it is installed.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"

mandir=$top_srcdir/man
# "command:page" pairs; an empty command is varperf itself.
checks=":varperf.1 version:varperf.1 compare:varperf-compare.1 gdb:varperf-gdb.1 predict:varperf-predict.1 record:varperf-record.1 report:varperf-report.1 explain:varperf-explain.1 bound:varperf-bound.1"
pages="varperf.1 varperf-compare.1 varperf-gdb.1 varperf-predict.1 varperf-record.1 varperf-report.1 varperf-data.5 varperf-explain.1 varperf-bound.1"

# page_text PAGE - the page source with troff escapes that commonly appear
# inside option names removed: "\-" becomes "-", font changes and "\&"
# disappear, so that "\fB\-\-output\fR" reads "--output".
page_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\f\[[^]]*\]//g' \
		-e 's/\\&//g' "$1"
}

for check in $checks; do
	cmd=${check%%:*}
	name=${check#*:}
	page=$mandir/$name
	what="varperf${cmd:+ $cmd} --help"
	"$VARPERF" $cmd --help >"$TMPDIR_T/help" 2>"$TMPDIR_T/err"
	st=$?
	opts=$(grep -oE -- '--[a-z][a-z0-9-]*' "$TMPDIR_T/help" | sed 's/-*$//' | sort -u)
	if [ "$st" -eq 0 ] && [ -n "$opts" ]; then
		tap_pass "$what exits 0 and lists long options"
	else
		tap_fail "$what exits 0 and lists long options"
		tap_diag "exit status $st; output:"
		tap_diag "$(cat "$TMPDIR_T/help" "$TMPDIR_T/err")"
	fi
	if [ ! -f "$page" ]; then
		tap_fail "man/$name exists"
		continue
	fi
	page_text "$page" >"$TMPDIR_T/page"
	for opt in $opts; do
		# The option followed by a non-name character, so that --out
		# does not pass because --output is documented.
		if grep -qE -- "$opt([^a-z0-9-]|\$)" "$TMPDIR_T/page"; then
			tap_pass "$name documents $what's $opt"
		else
			tap_fail "$name documents $what's $opt"
		fi
	done
done

if command -v mandoc >/dev/null 2>&1; then
	for p in $pages; do
		out=$(mandoc -Tlint -Wwarning "$mandir/$p" 2>&1)
		st=$?
		if [ "$st" -eq 0 ] && [ -z "$out" ]; then
			tap_pass "mandoc -Tlint: $p has no warnings"
		else
			tap_fail "mandoc -Tlint: $p has no warnings"
			tap_diag "$out"
		fi
		# (a STYLE message, below warnings, that misplaces a font change)
		out=$(mandoc -Tlint "$mandir/$p" 2>&1 | grep 'unterminated quoted')
		tap_is "" "$out" "mandoc -Tlint: $p has no unterminated quoted argument"
	done
else
	for p in $pages; do
		tap_skip "mandoc is not installed (lint $p)" 2
	done
fi

# What "varperf help" shows outside a UTF-8 locale: man(1) renders for a
# device that lacks some glyphs, and groff says so on every view.
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
	for p in $pages; do
		out=$(LC_ALL=C MANWIDTH=80 man -l "$mandir/$p" 2>&1 >/dev/null)
		tap_is "" "$out" "LC_ALL=C man: $p renders without a warning"
	done
else
	for p in $pages; do
		tap_skip "man or groff is not installed (render $p)"
	done
fi

tap_done
