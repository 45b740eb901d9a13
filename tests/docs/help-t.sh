#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# help-t.sh - "varperf help CMD" shows this varperf's own manual page, as
# git help does: from the source tree when varperf runs from its build
# tree, and from $prefix/share/man (the configured mandir's place relative
# to bindir) when the installation lives under another prefix.  A fake
# "man" first on PATH shows what varperf asks for; the real man, when
# installed, shows that the page is found and rendered.
#
# Environment (make check): top_srcdir, top_builddir, VARPERF, and bindir
# and mandir as configured.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"
if [ -z "$bindir" ] || [ -z "$mandir" ]; then
	tap_skip_all "bindir and mandir are not set (run under make check)"
fi

T=$TMPDIR_T
mkdir "$T/fake" || tap_bail "cannot create $T/fake"
cat >"$T/fake/man" <<'EOF'
#!/bin/sh
printf 'man %s\n' "$*"
printf 'MANPATH=%s\n' "${MANPATH-(unset)}"
EOF
chmod +x "$T/fake/man"

# fake VARPERF ARGS... - run VARPERF with the fake man, MANPATH unset
fake() {
	(unset MANPATH; PATH=$T/fake:$PATH "$@" 2>&1)
}

# ---- the build tree ----
if [ "$top_srcdir/man/varperf.1" -ef "$top_builddir/man/varperf.1" ]; then
	for cmd in compare gdb record report version; do
		page=varperf-$cmd.1
		[ "$cmd" = version ] && page=varperf.1
		out=$(fake "$VARPERF" help "$cmd")
		file=$(printf '%s\n' "$out" | sed -n 's/^man -l //p')
		if [ -n "$file" ] && [ "$file" -ef "$top_srcdir/man/$page" ]; then
			tap_pass "build tree: varperf help $cmd shows man/$page"
		else
			tap_fail "build tree: varperf help $cmd shows man/$page"
			tap_diag "$out"
		fi
	done
	tap_like "$(fake "$VARPERF" help record)" '^MANPATH=\(unset\)$' \
		"build tree: MANPATH is left alone"
else
	tap_skip "a build tree outside the source tree (VPATH): no man/ next to the binary" 6
fi

# ---- an installation under another prefix ----
# The layout of make install DESTDIR=$T/inst: the binary in bindir and the
# pages in mandir/man1, both under $T/inst, which is not where configure
# put them.
inst=$T/inst
mkdir -p "$inst$bindir" "$inst$mandir/man1" || tap_bail "cannot create $inst"
cp "$VARPERF" "$inst$bindir/varperf" || tap_bail "cannot copy $VARPERF"
# a marker in the copied page tells it from any other varperf's
sed 's/^varperf\\-record \\- .*/varperf\\-record \\- the page under the other prefix/' \
	"$top_srcdir/man/varperf-record.1" >"$inst$mandir/man1/varperf-record.1"
out=$(fake "$inst$bindir/varperf" help record)
tap_like "$out" '^man varperf-record$' "another prefix: varperf help record runs man varperf-record"
tap_is "MANPATH=$inst$mandir:" "$(printf '%s\n' "$out" | grep '^MANPATH=')" \
	"with the prefix's mandir first on MANPATH, man's default path after it"
out=$(MANPATH=/usr/share/man PATH=$T/fake:$PATH "$inst$bindir/varperf" help record 2>&1)
tap_is "MANPATH=$inst$mandir:/usr/share/man" "$(printf '%s\n' "$out" | grep '^MANPATH=')" \
	"and the user's MANPATH after it"
# reached through a symbolic link: the binary's own directory counts
ln -s "$inst$bindir/varperf" "$T/varperf-link"
tap_is "MANPATH=$inst$mandir:" "$(fake "$T/varperf-link" help record | grep '^MANPATH=')" \
	"through a symbolic link to the binary too"
# a binary that is not in a bindir leaves MANPATH alone
mkdir "$T/loose"
cp "$VARPERF" "$T/loose/varperf"
out=$(fake "$T/loose/varperf" help record)
tap_is "man varperf-record
MANPATH=(unset)" "$out" "a binary outside any bindir: plain man varperf-record"

# ---- errors ----
out=$(fake "$VARPERF" help nosuch)
st=$?
tap_is 129 "$st" "varperf help nosuch exits 129"
tap_like "$out" "^varperf: error: 'nosuch' is not a varperf command\$" "and says why"
tap_unlike "$out" '^man ' "without running man"

# ---- the real man ----
if command -v man >/dev/null 2>&1 && man -l "$top_srcdir/man/varperf.1" >/dev/null 2>&1; then
	out=$(unset MANPATH; MANWIDTH=200 "$inst$bindir/varperf" help record 2>&1)
	tap_like "$out" 'varperf-record - the page under the other prefix' \
		"man renders the page of the installation under another prefix"
	if [ "$top_srcdir/man/varperf.1" -ef "$top_builddir/man/varperf.1" ]; then
		out=$(MANWIDTH=200 "$VARPERF" help record 2>&1)
		tap_like "$out" '^ *varperf-record - run a program' "and the build tree's page"
	else
		tap_skip "a VPATH build tree"
	fi
else
	tap_skip "man cannot render pages here" 2
fi

tap_done
