#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# report-text-t.sh - the text report's percentiles, path fractions and
# widths, against ground truth:
#
# - a crafted file (gen-crafted quantiles) whose durations are known
#   exactly, with no probe cost to subtract: the report's percentiles
#   must be within the histogram's relative error (1/128) of the exact
#   nearest-rank ones, the text's equal to them as the report writes
#   times (three significant digits), and main's path fraction of work
#   exactly the calls the generator made;
# - fx-percentiles, recorded: the text's percentiles are the JSON's,
#   written, and in on-CPU time no more than what the fixture's thread ran
#   in its brackets of the same calls (and less than their CPU time by no
#   more than 10 % + 5 us: the probes' costs), as report-percentiles-t.sh
#   wants of the JSON;
# - fx-paths, recorded: the path fraction of rare() and always() in
#   parent() exactly as the fixture counted them, in JSON and text;
# - widths: by default every node line's numbers and function name fit
#   in 100 columns, so do the percentile and contributor lines; --wide
#   shows the columns the default leaves out.

. "$top_srcdir/tests/lib/test-subr.sh"

require_cmd python3
require_file "$VARPERF" "$top_builddir/tests/perf-collector/gen-crafted" \
	"$FIXTURES/fx-percentiles" "$FIXTURES/fx-paths" "$DEMO"

cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

# text.py - reads a text report; the checks below call its functions
cat >text.py <<'PY'
import json, re, sys

UNITS = [(1, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")]

def fmt(ns, compact):
    """A time as the report writes it (fmt_duration: three significant
    digits), without the space when compact."""
    i = 0
    while i + 1 < len(UNITS) and abs(ns) >= UNITS[i + 1][0]:
        i += 1
    v = ns / UNITS[i][0]
    if i > 0 and abs(v) >= 999.5 and i + 1 < len(UNITS):
        i += 1
        v /= 1000
    s = "%.0f" % v if abs(v) >= 99.95 or i == 0 else "%.1f" % v if abs(v) >= 9.995 else "%.2f" % v
    return s + ("" if compact else " ") + UNITS[i][1]

def parse(t):
    m = re.fullmatch(r"(-?[0-9.]+) ?(ns|us|ms|s)", t)
    return float(m.group(1)) * dict((u, s) for s, u in UNITS)[m.group(2)] if m else None

def table(path):
    """Header names and, per function name, its node lines' columns (a
    dict of name -> text) with the function name's last column."""
    lines = open(path, encoding="utf-8").read().split("\n")
    h = next(i for i, l in enumerate(lines)
             if l.startswith(("High-variance nodes", "Significant nodes")))
    head = lines[h + 1]
    ctx = head.index("calling context")
    names, ends = [], []
    for m in re.finditer(r"\S+", head[:ctx]):
        names.append(m.group(0))
        ends.append(m.end())
    rows = {}
    for l in lines[h + 2:]:
        if not l.strip():
            break
        if len(l) <= ctx or l[ctx - 2:ctx] != "  " or l[0] not in " *" or l[1] != " ":
            continue
        cols, start = {}, 1
        for n, e in zip(names, ends):
            cols[n] = l[start:e].strip()
            start = e
        rest = l[ctx:]
        func = rest.strip().split(" ")[0]
        cols["_end"] = ctx + len(rest) - len(rest.lstrip()) + len(func)
        cols["_line"] = l
        rows.setdefault(func, []).append(cols)
    return names, ctx, rows

def row_of(path, func):
    """@func's first node line, or exit saying what the table has."""
    rows = table(path)[2]
    if func not in rows:
        raise SystemExit("no node line of %s in %s: %s" % (func, path, [
            l for l in open(path, encoding="utf-8").read().split("\n") if func in l]))
    return rows[func][0]

def node(j, func):
    return [n for n in json.load(open(j))["nodes"] if n["function"] == func][0]

def truth(path, kind, func):
    for l in open(path):
        w = l.split()
        if w[:2] == [kind, func] or w[:3] == [kind, "parent", func] or \
           w[:3] == [kind, "main", func]:
            return {k: int(v) for k, v in (x.split("=") for x in w if "=" in x)}
    raise SystemExit("no '%s %s' in %s" % (kind, func, path))

KEYS = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.9": "p99_9", "max": "max"}

def same(txt, j, func, keys, compact):
    """The text's columns @keys of @func are the JSON's, written."""
    n = node(j, func)
    row = row_of(txt, func)
    bad = []
    for k in keys:
        want = n["min"] if k == "min" else n["percentiles"][KEYS[k]]
        if row.get(k) != fmt(want, compact):
            bad.append("%s: text %r, JSON %d (%r)" % (k, row.get(k), want, fmt(want, compact)))
    return bad

def cmd_same(txt, j, func, keys, compact):
    bad = same(txt, j, func, keys.split(","), compact == "compact")
    print("ok" if not bad else "; ".join(bad))

def cmd_exact(txt, j, tr, func, keys):
    """JSON within 1/128 of the exact quantiles, the text within that and
    the display's rounding (half a unit of the third digit)."""
    t = truth(tr, "quantiles", func)
    n = node(j, func)
    row = row_of(txt, func)
    bad = []
    for k in keys.split(","):
        exact = t[KEYS.get(k, k).replace(".", "_")]
        seen = n["min"] if k == "min" else n["percentiles"][KEYS[k]]
        if abs(seen - exact) > exact / 128:
            bad.append("JSON %s %d, exact %d" % (k, seen, exact))
        v = parse(row[k])
        if v is None or abs(v - exact) > exact / 128 + exact * 0.005:
            bad.append("text %s %r, exact %d" % (k, row[k], exact))
    print("ok" if not bad else "; ".join(bad))

def cmd_measured(txt, tr, func, keys):
    """@func's on-CPU percentiles in the text against the fixture's own of
    the same calls.  The fixture's brackets enclose the probes' window,
    and compensation only subtracts, so no call can be seen longer than
    the thread ran in its bracket (steal included, which the scheduler
    folds into on-CPU time until its next tick): above that by more than
    the histogram's 1/128 and the text's rounding (1/200) is wrong,
    whatever the host did.  Below the fixture's CPU clock by the probes'
    costs, and their estimate's error: 10 % + 5 us."""
    t, r = truth(tr, "cpu", func), truth(tr, "ran", func)
    row = row_of(txt, func)
    bad = []
    for k in keys.split(","):
        want, seen = t[k + "_ns"], parse(row[k])
        if seen is None or seen > r[k + "_ns"] * (1 + 1 / 128 + 1 / 200) + 1 or \
           seen < want - (0.10 * want + 5000):
            bad.append("%s: text %r, measured %d on-CPU, %d ran" % (k, row[k], want,
                                                                 r[k + "_ns"]))
    print("ok" if not bad else "; ".join(bad))

def cmd_pattern(txt, j, func, wide):
    """The line under @func's pattern: its node's percentiles (one node)."""
    lines = open(txt, encoding="utf-8").read().split("\n")
    n = node(j, func)
    want = ", ".join(["min " + fmt(n["min"], False)] * (wide == "wide") +
                     ["%s %s" % (k, fmt(n["percentiles"][KEYS[k]], False)) for k in KEYS])
    for i, l in enumerate(lines):
        if re.match(r"^ +[0-9]+ +[0-9.]+% ", l) and re.search(r"(^| )%s \[" % func, l):
            seen = lines[i + 1].strip()
            print("ok" if seen == want else "%r, wanted %r" % (seen, want))
            return
    print("no pattern of %s" % func)

def cmd_header(txt):
    print(" ".join(table(txt)[0]))

def cmd_path_json(j, tr, func):
    t = truth(tr, "path", func)
    n = node(j, func)
    p = n.get("path")
    want = {"calls": t["calls"], "of": t["of"], "fraction": t["calls"] / t["of"]}
    ok = p is not None and p["calls"] == want["calls"] and p["of"] == want["of"] and \
        abs(p["fraction"] - want["fraction"]) < 1e-12
    total = t.get("total")
    if total is not None and n["count"] != total:
        ok = False
    print("ok" if ok else "path %r, count %d; wanted %r, count %r" % (p, n["count"], want, total))

def cmd_no_path(j, func):
    print("ok" if "path" not in node(j, func) else node(j, func)["path"])

def cmd_suffix(tr, func):
    t = truth(tr, "path", func)
    print(" (in %d of %d calls, %.1f%%)" % (t["calls"], t["of"], 100.0 * t["calls"] / t["of"]))

def cmd_no_node_path(txt):
    rows = table(txt)[2]
    bad = [r["_line"] for rs in rows.values() for r in rs if "(in " in r["_line"]]
    print("ok" if not bad else bad)

def cmd_ends(txt, text):
    lines = open(txt, encoding="utf-8").read().split("\n")
    print("ok" if any(l.endswith(text) for l in lines) else "no line ends in %r" % text)

def cmd_fits(txt, width, what):
    """The node lines' numbers end by column 78, leaving the calling
    context 22 columns of @width; with @what "whole", every node line fits
    whole; every line of percentiles and contributors fits."""
    width = int(width)
    names, ctx, rows = table(txt)
    bad = [] if ctx <= width - 20 else ["the calling context starts at %d" % ctx]
    if what == "whole":
        bad += ["%d columns: %s" % (len(r["_line"]), r["_line"]) for rs in rows.values()
                for r in rs if len(r["_line"]) > width]
    sec = None
    for l in open(txt, encoding="utf-8").read().split("\n"):
        if not l.startswith(" "):
            sec = l.split(" ")[0]
        elif sec in ("Pattern", "Variance") and len(l) > width and \
                (re.match(r"^ +p50 ", l) or re.match(r"^ +-?[0-9.]+%  ", l)):
            bad.append("%d columns: %s" % (len(l), l))
    print("ok" if not bad else "; ".join(bad))

globals()["cmd_" + sys.argv[1].replace("-", "_")](*sys.argv[2:])
PY
t() { python3 text.py "$@" 2>&1; }

# ---- a crafted file: exact durations ----
"$top_builddir/tests/perf-collector/gen-crafted" quantiles 3000 q.data >q.truth ||
	tap_bail "gen-crafted cannot write q.data"
"$VARPERF" report -i q.data >q.txt 2>q.err &&
	"$VARPERF" report --wide -i q.data >q.wide.txt 2>>q.err &&
	"$VARPERF" report --format json -i q.data >q.json 2>>q.err ||
	tap_bail "varperf report cannot read q.data: $(cat q.err)"
tap_is ok "$(t exact q.txt q.json q.truth work p50,p99,max)" \
	"crafted: p50, p99, max of the node line within 1/128 of the exact ones"
tap_is ok "$(t exact q.wide.txt q.json q.truth work min,p50,p90,p99,p99.9,max)" \
	"crafted --wide: min, p50, p90, p99, p99.9 and max too"
tap_is ok "$(t same q.txt q.json work p50,p99,max compact)" \
	"crafted: the node line's percentiles are the JSON's, written as one word"
tap_is ok "$(t same q.wide.txt q.json work min,p50,p90,p99,p99.9,max spaced)" \
	"crafted --wide: as the rest of the report writes times"
tap_is "N mean sigma CoV p50 p99 max total share" "$(t header q.txt)" \
	"crafted: the default columns"
tap_is "N mean sigma CoV min p50 p90 p99 p99.9 max total share" "$(t header q.wide.txt)" \
	"crafted --wide: every column"
tap_is ok "$(t pattern q.txt q.json work narrow)" \
	"crafted: under work's pattern, its p50, p90, p99, p99.9 and max"
tap_is ok "$(t pattern q.wide.txt q.json work wide)" "crafted --wide: and its min first"
tap_is ok "$(t path-json q.json q.truth work)" \
	"crafted JSON: work's path is main's calls that called it, of main's calls"
tap_is ok "$(t no-path q.json main)" "crafted JSON: main, outermost, has no path"
suffix=$(t suffix q.truth work)
tap_is ok "$(t ends q.txt "  work@prog.c:7$suffix")" \
	"crafted: main's contributors say it: 'work@prog.c:7$suffix'"
tap_is ok "$(t ends q.wide.txt "    work [prog.c:7]$suffix")" "crafted --wide: so does work's line"
tap_is ok "$(t no-node-path q.txt)" "crafted: by default, node lines do not"
tap_like "$(cat q.wide.txt)" '^  \(in k of n calls, %\): its caller called it in k of its n calls$' \
	"crafted --wide: the legend says what it means"

# ---- recordings of fixtures ----
if [ "$(id -u)" -ne 0 ] || [ ! -e /sys/bus/event_source/devices/uprobe ]; then
	tap_skip "needs root for the uprobe PMU" 21
	tap_done
fi

# fx-percentiles: bimodal() and heavy(), 2000 calls each
"$VARPERF" record --mode=probe -q -f bimodal -f heavy -o p.data -- "$FIXTURES/fx-percentiles" \
	>p.truth 2>p.err
tap_is 0 $? "fx-percentiles: record exits 0"
[ -s p.err ] && tap_diag "$(cat p.err)"
"$VARPERF" report --all -i p.data >p.txt 2>/dev/null &&
	"$VARPERF" report --all --wide -i p.data >p.wide.txt 2>/dev/null &&
	"$VARPERF" report --format json -i p.data >p.json 2>/dev/null ||
	tap_bail "varperf report cannot read p.data"
# on-CPU time needs the threads' off-CPU times, which the BPF backend records
if "$VARPERF" version --build-options | grep -q '^bpf: on$'; then
	no_cpu=
	"$VARPERF" report --all --wide --time=cpu -i p.data >p.cpu.txt 2>/dev/null ||
		tap_bail "varperf report --time=cpu cannot read p.data"
else
	no_cpu="varperf was built without BPF: its recordings have no off-CPU times (--time=cpu)"
fi
for f in bimodal heavy; do
	tap_is ok "$(t same p.txt p.json $f p50,p99,max compact)" \
		"fx-percentiles: $f's p50, p99 and max are the JSON's"
	tap_is ok "$(t same p.wide.txt p.json $f min,p50,p90,p99,p99.9,max spaced)" \
		"fx-percentiles --wide: $f's min, p50, p90, p99, p99.9 and max too"
	if [ -n "$no_cpu" ]; then
		tap_skip "$no_cpu"
	else
		tap_is ok "$(t measured p.cpu.txt p.truth $f p50,p90,p99)" \
			"fx-percentiles --time=cpu: $f's p50, p90, p99 at most the fixture's, within 10% + 5 us"
	fi
done

# fx-paths: parent() calls rare() in some of its calls, always() in all
"$VARPERF" record --mode=probe -q -f parent -f rare -f always -o w.data -- "$FIXTURES/fx-paths" \
	>w.truth 2>w.err
tap_is 0 $? "fx-paths: record exits 0"
[ -s w.err ] && tap_diag "$(cat w.err)"
"$VARPERF" report -i w.data >w.txt 2>/dev/null &&
	"$VARPERF" report --wide -i w.data >w.wide.txt 2>/dev/null &&
	"$VARPERF" report --format json -i w.data >w.json 2>/dev/null ||
	tap_bail "varperf report cannot read w.data"
tap_is ok "$(t path-json w.json w.truth rare)" \
	"fx-paths JSON: rare's path is the fixture's count of parent's calls that called it"
tap_is ok "$(t path-json w.json w.truth always)" "fx-paths JSON: always's path is every call"
tap_is ok "$(t no-path w.json parent)" "fx-paths JSON: parent, outermost, has no path"
rare=$(t suffix w.truth rare)
always=$(t suffix w.truth always)
tap_is ok "$(t ends w.txt "  rare@fx-paths.c:$(grep -n '	rare();$' "$top_srcdir/tests/fixtures/fx-paths.c" |
	head -1 | cut -d: -f1)$rare")" "fx-paths: parent's contributors say 'rare@...$rare'"
tap_unlike "$(grep '  always@fx-paths' w.txt)" "\(in [0-9]" \
	"fx-paths: but not of always(), called in every call"
tap_is ok "$(t ends w.wide.txt "$always")" "fx-paths --wide: always's line says '$always'"
tap_is ok "$(t ends w.wide.txt "$rare")" "fx-paths --wide: rare's line says '$rare'"

# widths: the default report in a terminal of 100 columns
"$VARPERF" record --mode=probe -q -o d.data -- "$DEMO" 100 >/dev/null 2>d.err
tap_is 0 $? "demo: record exits 0"
"$VARPERF" report --all -i d.data >d.txt 2>/dev/null &&
	"$VARPERF" report --all --wide -i d.data >d.wide.txt 2>/dev/null ||
	tap_bail "varperf report cannot read d.data"
for r in p w; do
	tap_is ok "$(t fits $r.txt 100 whole)" \
		"$r.data: node lines, percentiles and contributors fit in 100 columns"
done
tap_is ok "$(t fits d.txt 100 numbers)" \
	"demo: the numbers of node lines, the percentiles and contributors fit in 100 columns"
tap_like "$(t fits d.wide.txt 100 numbers)" 'the calling context starts at 1[0-9][0-9]' \
	"demo --wide: they do not"
tap_done
