#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# report-html-t.sh - `varperf report --format html`: one self-contained
# page.  check-html.py reads it with python3's html.parser: well-formed,
# nothing fetched, every name escaped, and against the JSON report of the
# same file: the graph's nodes and edges, per Task as many histogram bars
# as buckets that hold calls, p50 and p99 in their buckets, a timeline
# that counts every call in at most 460 columns, covariance bars adding up
# to 100 %, the sampled tree's rows; the warnings as the command printed
# them, the Pattern Set's rows, each Task's slowest calls and the off-CPU
# rows against the JSON; the graph laid out by dot without an edge through
# a box; the flame graph's boxes as wide as their samples, the root as
# the sample count.  Part one needs no root: gen-crafted writes a file
# whose function, file and command names are markup, with 60 000 calls of
# one Task, and one of samples 3000 frames deep.  Part two records the
# demo (root and the uprobe PMU), probed and sampled.  Part three loads
# the pages in headless Chromium when it is installed: no console errors
# (the page's Content-Security-Policy makes any fetch one), the script's
# fold buttons in the DOM, and what the browser laid out: the sections
# there, the graph and the flame graph within the window, also a narrow
# one.

. "$top_srcdir/tests/lib/test-subr.sh"

gen="$top_builddir/tests/perf-collector/gen-crafted"
require_file "$VARPERF" "$gen" "$DEMO"
require_cmd python3
LC_ALL=C
export LC_ALL
cd "$TMPDIR_T" || tap_bail "cannot enter '$TMPDIR_T'"

check() {
	python3 "$top_srcdir/tests/perf-collector/check-html.py" "$@" 2>&1
}

tap_plan 52

# ---- part one: names with markup, many calls ----

"$gen" markup 30000 'm<&>.data' || tap_bail "gen-crafted cannot write the markup file"
"$VARPERF" report --format html -i 'm<&>.data' >m.html 2>err
tap_is 0 $? "html report of the crafted file exits 0"
"$VARPERF" report --format json -i 'm<&>.data' >m.json 2>/dev/null ||
	tap_bail "no JSON report of the crafted file"
tap_is ok "$(check wellformed m.html)" "crafted: well-formed, nothing fetched"
tap_is ok "$(check escaped m.html 'main<&>"'"'" 'work</title><script>alert(1)</script>' \
	'[<b>&amp;prog.c:7]' '/crafted/<prog> a&b' 'varperf report of m<&>.data')" \
	"crafted: function, file, command and file names escaped, shown whole"
tap_is ok "$(check report m.html m.json)" "crafted: graph, histograms, timelines, rows agree with the JSON"
tap_is ok "$(check calls m.html 'work<' 60000)" \
	"crafted: 60000 calls of work on its timeline, in at most 460 columns"
size=$(wc -c <m.html)
tap_ok "$([ "$size" -lt 100000 ] && echo 0 || echo 1)" \
	"crafted: 30000 calls of main make a page under 100 KB ($size bytes)"
"$VARPERF" report --format html -i 'm<&>.data' -o out.html 2>/dev/null
tap_ok "$(cmp -s m.html out.html && echo 0 || echo 1)" "-o writes the same page"
# samples 3000 frames deep, a probed call without variance: no graph
"$gen" deep-sample 3000 deep.data || tap_bail "gen-crafted cannot write deep.data"
"$VARPERF" report --format html -i deep.data >deep.html 2>/dev/null &&
	"$VARPERF" report --format json -i deep.data >deep.json 2>/dev/null
tap_is 0 $? "html report of 3000-frame samples exits 0"
tap_is ok "$(check wellformed deep.html)" "deep samples: well-formed"
tap_is ok "$(check report deep.html deep.json)" "deep samples: one flat row per context, as many as the JSON's"
tap_is ok "$(check flame deep.html deep.json)" \
	"deep samples: flame graph boxes as wide as their samples, the root as all of them"
tap_like "$(grep -o 'Stacks deeper than [0-9]* frames' deep.html)" 'Stacks deeper than 160 frames' \
	"deep samples: the flame graph ends deep stacks in one box"
# without Graphviz, the built-in layout: the same nodes and edges
PATH=/nonexistent "$VARPERF" report --format html -i 'm<&>.data' >m-nodot.html 2>/dev/null
tap_is 0 $? "html report without dot on the PATH exits 0"
tap_like "$(grep -o 'data-layout="[a-z-]*"' m-nodot.html)" 'data-layout="built-in"' \
	"without dot: the built-in layout, said so"
tap_is ok "$(check report m-nodot.html m.json)" "without dot: graph and Tasks agree with the JSON"
# a dot that answers nonsense, or a node that is not in the graph: the same
mkdir fakedot
printf '#!/bin/sh\ncat >/dev/null\necho "graph 1 2 x"; echo "node n999999 1 1 1 1"; echo stop\n' \
	>fakedot/dot
chmod +x fakedot/dot
PATH="$TMPDIR_T/fakedot:$PATH" "$VARPERF" report --format html -i 'm<&>.data' >m-fake.html 2>err
tap_is "0 built-in" "$? $(grep -o 'data-layout="[a-z-]*"' m-fake.html | cut -d'"' -f2)" \
	"a dot that answers nonsense: the built-in layout, exit 0"
tap_is "" "$(cat err)" "a dot that answers nonsense: nothing said on standard error"

# ---- part two: the demo ----

recorded=
havedot=$(command -v dot)
if [ "$(id -u)" -ne 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	tap_skip "needs root and the uprobe PMU to record the demo" 19
else
	"$VARPERF" record -q -o demo.data -- "$DEMO" >/dev/null 2>err
	tap_is 0 $? "the demo records"
	"$VARPERF" report --format json -i demo.data >demo.json 2>/dev/null ||
		tap_bail "no JSON report of the demo"
	"$VARPERF" report --format html -i demo.data >demo.html 2>demo.err
	tap_is 0 $? "html report of the demo exits 0"
	tap_is ok "$(check wellformed demo.html)" "demo: well-formed, nothing fetched"
	tap_is ok "$(check report demo.html demo.json)" \
		"demo: graph, histograms, timelines, covariance, sampled rows agree with the JSON"
	tasks=$(grep -c '<article class="vp-task"' demo.html)
	tap_ok "$([ "$tasks" -ge 2 ] && echo 0 || echo 1)" \
		"demo: its Tasks have sections ($tasks; physics, render and ai vary)"
	tap_like "$(grep -o '<h3>[^<]*' demo.html)" 'physics \[vp-demo.c:[0-9]+\]' \
		"demo: physics is a Task"
	tap_is ok "$(check sections demo.html demo.err demo.json)" \
		"demo: the warnings printed, the Pattern Set, slowest calls and off-CPU rows"
	if [ -n "$havedot" ]; then
		tap_is ok "$(check layout demo.html)" \
			"demo: laid out by dot, no edge or back-edge through a box, scaled by its viewBox"
	else
		tap_skip "Graphviz's dot is not installed" 1
	fi
	tap_is ok "$(check flame demo.html demo.json)" "demo: phase 1's samples as a flame graph"
	# every pattern kept (--beta 0 --tau 0): wider than the page, scaled to it
	"$VARPERF" report --format html --beta 0 --tau 0 -i demo.data >wide.html 2>/dev/null
	"$VARPERF" report --format json --beta 0 --tau 0 -i demo.data >wide.json 2>/dev/null
	tap_is ok "$(check report wide.html wide.json)" "demo, every pattern: graph and Tasks agree with the JSON"
	if [ -n "$havedot" ]; then
		tap_is ok "$(check layout wide.html)" "demo, every pattern: no edge through a box"
	else
		tap_skip "Graphviz's dot is not installed" 1
	fi
	# sample mode: the flame graph is the page's
	"$VARPERF" record -q --mode sample -o samp.data -- "$DEMO" >/dev/null 2>err
	tap_is 0 $? "the demo records in sample mode"
	"$VARPERF" report --format json -i samp.data >samp.json 2>/dev/null ||
		tap_bail "no JSON report of the sample recording"
	"$VARPERF" report --format html -i samp.data >samp.html 2>samp.err
	tap_is 0 $? "html report of the sample recording exits 0"
	tap_is ok "$(check wellformed samp.html)" "samples: well-formed, nothing fetched"
	tap_is ok "$(check report samp.html samp.json)" "samples: the sampled rows agree with the JSON"
	tap_is ok "$(check flame samp.html samp.json)" \
		"samples: the flame graph's root is the sample count, every box its node's samples"
	tap_is "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sampled"]["samples"])' samp.json)" \
		"$(grep -o 'class="vp-flame" data-samples="[0-9]*"' samp.html | grep -o '[0-9]*')" \
		"samples: the flame graph is as wide as the header's sample count"
	tap_is ok "$(check sections samp.html samp.err samp.json)" "samples: the warnings printed"
	tap_is "" "$(grep -o 'id="vp-vcg"' samp.html)" "samples: no graph without probes"
	recorded=1
fi

# ---- part three: a real browser ----

# browse PAGE - chromium's DOM of PAGE after its scripts in dom.html, its
# console messages in console (the lines chromium logs as CONSOLE).
browse() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMPDIR_T/profile" --enable-logging=stderr --v=0 \
		--dump-dom "file://$TMPDIR_T/$1" >dom.html 2>browser.err
	_st=$?
	grep ':CONSOLE' browser.err >console
	return $_st
}

# layout PAGE WIDTH - PAGE instrumented, loaded in a window WIDTH px wide
layout() {
	check instrument "$1" "m-$1" >/dev/null
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMPDIR_T/profile" --window-size="$2,900" \
		--dump-dom "file://$TMPDIR_T/m-$1" >dom.html 2>browser.err
}

if ! command -v chromium >/dev/null 2>&1; then
	tap_skip "chromium is not installed" 16
else
	# the check can see an error: a page with one has it in the console
	printf '%s\n' '<!DOCTYPE html><html><head><title>x</title></head><body>' \
		'<script>no_such_function();</script></body></html>' >broken.html
	browse broken.html
	tap_like "$(cat console)" 'no_such_function' \
		"chromium logs a page's script errors (so their absence means something)"
	# ... and a fetch the page's policy refuses (so no message means none tried)
	sed -n '1,/<\/head>/p' m.html | sed 's|</head>|</head><body><img alt="" src="http://192.0.2.1/x.png"></body></html>|' \
		>fetch.html
	browse fetch.html
	tap_like "$(cat console)" 'Content Security Policy' \
		"chromium logs a fetch the page's policy refuses"
	browse m.html
	tap_is 0 $? "chromium loads the crafted page"
	tap_is "" "$(cat console)" "crafted: no console messages"
	tap_is ok "$(check dom dom.html m.html)" "crafted: after the script, fold buttons where rows have rows below"
	layout m.html 1280
	tap_is ok "$(check measured dom.html graph)" \
		"crafted: sections in the DOM, no sideways scrolling, the graph within 1280 px"
	if [ -n "$recorded" ]; then
		browse demo.html
		tap_is 0 $? "chromium loads the demo's page"
		tap_is "" "$(cat console)" "demo: no console messages"
		tap_is ok "$(check dom dom.html demo.html)" \
			"demo: after the script, fold buttons where rows have rows below"
		tap_like "$(grep -o 'data-toggles="[0-9]*"' dom.html)" 'data-toggles="[1-9][0-9]*"' \
			"demo: the sampled tree folds"
		layout demo.html 1280
		tap_is ok "$(check measured dom.html graph flame)" \
			"demo: every section in the DOM, no sideways scrolling, graph and flame graph within 1280 px"
		layout wide.html 1280
		tap_is ok "$(check measured dom.html graph)" \
			"demo, every pattern: a graph $(grep -o 'class="vp-graph"[^>]*width="[0-9]*"' wide.html | grep -o '[0-9]*$') px wide fits in 1280"
		layout demo.html 600
		tap_is ok "$(check measured dom.html --narrow graph flame)" \
			"demo: in a 600 px window the graph and the flame graph shrink to fit"
		browse samp.html
		tap_is 0 $? "chromium loads the sample recording's page"
		tap_is "" "$(cat console)" "samples: no console messages"
		layout samp.html 1280
		tap_is ok "$(check measured dom.html flame sampled)" \
			"samples: the flame graph and the sampled tree in the DOM, within the window"
	else
		tap_skip "the demo was not recorded" 10
	fi
fi
tap_done
