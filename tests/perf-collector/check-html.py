# SPDX-License-Identifier: GPL-3.0-or-later
# check-html.py - checks of `varperf report --format html` pages for
# report-html-t.sh, with python3's html.parser only.  Each command prints
# "ok", or one line per problem found:
#
#   check-html.py wellformed PAGE       every element closed in order, one
#                                       html/head/body, a doctype; nothing
#                                       fetched: no src, href only to
#                                       "#...", no URL but url(#...)
#   check-html.py escaped PAGE NAME...  the text of the page holds every
#                                       NAME whole, and the page has one
#                                       script element (ours)
#   check-html.py report PAGE JSON      the page against the JSON report of
#                                       the same file: the graph's nodes,
#                                       edges and back-edges; per Task its
#                                       histogram bars, p50/p99 and calls;
#                                       its timeline's calls, maximum and
#                                       columns; the covariance bars; the
#                                       sampled tree's rows
#   check-html.py calls PAGE FUNC N     the timeline of FUNC's Task counts
#                                       N calls in at most 460 columns
#   check-html.py dom DUMP PAGE         the DOM after the scripts ran
#                                       (chromium --dump-dom): a fold
#                                       button on every row of the sampled
#                                       tree with rows below it
#   check-html.py sections PAGE ERR JSON  what the text report says first:
#                                       the warnings the command printed
#                                       (ERR, its standard error), the
#                                       Pattern Set's rows, the off-CPU
#                                       rows, per Task its slowest calls
#   check-html.py layout PAGE           the graph laid out by dot: no edge
#                                       or back-edge within 3 px of a box,
#                                       not even the one it ends at (its
#                                       arrowhead does), the SVG scaled by
#                                       its viewBox
#   check-html.py flame PAGE JSON       the flame graph: its root as wide
#                                       as the samples, each box as wide as
#                                       its node's samples, callees inside
#                                       their caller
#   check-html.py instrument PAGE OUT   OUT: PAGE with a script that writes
#                                       into the body's attributes what the
#                                       browser laid out (for measured)
#   check-html.py measured DUMP [--narrow] NAMES  what the measuring
#                                       script wrote into the DOM: the page
#                                       not wider than the window (unless
#                                       --narrow), the graph's and flame
#                                       graph's right edge within it, the
#                                       sections NAMES imply present

import json
import math
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
COLUMNS = 460


class Elem:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, tag=None, cls=None):
        return [e for e in self.walk()
                if (tag is None or e.tag == tag) and (cls is None or cls in e.classes())]

    def all_text(self):
        return "".join(t for e in self.walk() for t in e.text)


class Page(HTMLParser):
    def __init__(self, path):
        super().__init__(convert_charrefs=True)
        self.problems, self.doctype = [], False
        self.root = Elem("#document", [], None)
        self.cur = self.root
        self.feed(open(path, encoding="utf-8").read())
        self.close()
        while self.cur is not self.root:
            self.problems.append("<%s> not closed" % self.cur.tag)
            self.cur = self.cur.parent

    def handle_decl(self, decl):
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        e = Elem(tag, attrs, self.cur)
        self.cur.children.append(e)
        if tag not in VOID:
            self.cur = e

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Elem(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.cur.tag != tag:
            self.problems.append("</%s> closes <%s>" % (tag, self.cur.tag))
            return
        self.cur = self.cur.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def out(problems):
    print("\n".join(problems[:20]) if problems else "ok")


def wellformed(path):
    p = Page(path)
    probs = list(p.problems)
    if not p.doctype:
        probs.append("no <!DOCTYPE html>")
    for tag in ("html", "head", "body"):
        if len(p.root.find(tag)) != 1:
            probs.append("%d <%s> elements" % (len(p.root.find(tag)), tag))
    if len(p.root.find("head")) == 1 and len(p.root.find("head")[0].find("title")) != 1:
        probs.append("no title in <head>")
    for e in p.root.walk():
        for k, v in e.attrs.items():
            v = v or ""
            if k == "src":
                probs.append("<%s src=%r>: fetched" % (e.tag, v))
            if k in ("href", "xlink:href") and not v.startswith("#"):
                probs.append("<%s %s=%r>: not in the page" % (e.tag, k, v))
            if re.search(r"(?i)(https?:|ftp:|//[a-z0-9])", v) or \
                    re.search(r"url\((?!#)", v):
                probs.append("<%s %s=%r>: a URL" % (e.tag, k, v))
        if e.tag in ("style", "script"):
            body = e.all_text()
            if re.search(r"(?i)(https?:|@import|url\((?!#))", body):
                probs.append("<%s> refers outside the page" % e.tag)
    for tag in ("link", "img", "iframe", "object", "embed", "base"):
        if p.root.find(tag):
            probs.append("a <%s> element" % tag)
    out(probs)


def escaped(path, names):
    p = Page(path)
    text = p.root.all_text()
    probs = ["%r is not in the text whole" % n for n in names if n not in text]
    scripts = p.root.find("script")
    if len(scripts) != 1:
        probs.append("%d script elements (a name got out of its escaping?)" % len(scripts))
    out(probs + p.problems)


def merged_hist(j, node):
    """The Task's calling-context nodes' histograms merged: {(lo, hi): count}."""
    by_id = {n["id"]: n for n in j["nodes"]}
    h = {}
    for c in node["cct_nodes"]:
        for lo, hi, k in by_id[c]["histogram"] or []:
            h[(lo, hi)] = h.get((lo, hi), 0) + k
    return h


def rank_bucket(h, q):
    """The bucket of the nearest-rank q quantile."""
    n = sum(h.values())
    rank, seen = max(1, math.ceil(q * n)), 0
    for b in sorted(h):
        seen += h[b]
        if seen >= rank:
            return b
    return None


def check_task(art, node, j, probs):
    name = "task %d (%s)" % (node["id"], node["function"])
    h = merged_hist(j, node)
    hist = art.find("figure", "vp-hist")
    if len(hist) != 1:
        probs.append("%s: %d histograms" % (name, len(hist)))
        return
    bars = sorted(((int(b.attrs["data-lo"]), int(b.attrs["data-hi"]), int(b.attrs["data-count"]))
                   for b in hist[0].find("rect", "vp-bar")))
    if len(bars) != int(hist[0].attrs["data-bars"]) or not 0 < len(bars) <= 48:
        probs.append("%s: %d bars, data-bars %s" % (name, len(bars), hist[0].attrs["data-bars"]))
    for (lo, hi, k), nxt in zip(bars, bars[1:] + [None]):
        got = sum(c for (blo, bhi), c in h.items() if lo <= blo <= hi)
        if got != k or lo > hi or (nxt and nxt[0] <= hi):
            probs.append("%s: bar [%d, %d] of %d calls, its buckets hold %d" %
                         (name, lo, hi, k, got))
    if sum(k for _, _, k in bars) != node["count"]:
        probs.append("%s: bars of %d calls, N %d" %
                     (name, sum(k for _, _, k in bars), node["count"]))
    cdf = hist[0].find("path", "vp-cdf")
    if len(cdf) != 1 or int(cdf[0].attrs["data-calls"]) != node["count"] or \
            len(re.findall("V", cdf[0].attrs["d"])) != len(h):
        probs.append("%s: the CDF does not step once per bucket to N" % name)
    for mark, q in (("vp-p50", 0.5), ("vp-p99", 0.99)):
        lines = [e for e in hist[0].find("line", mark)]
        b = rank_bucket(h, q)
        if len(lines) != 1 or b is None:
            probs.append("%s: %d %s markers" % (name, len(lines), mark))
            continue
        v = int(lines[0].attrs["data-value"])
        if not (b[0] <= v <= b[1]) or not (node["min"] <= v <= node["max"]):
            probs.append("%s: %s at %d, outside its bucket [%d, %d]" % (name, mark, v, *b))
    tl = art.find("figure", "vp-timeline")
    if len(tl) != 1:
        probs.append("%s: %d timelines" % (name, len(tl)))
        return
    a = tl[0].attrs
    if int(a["data-calls"]) != node["count"]:
        probs.append("%s: timeline of %s calls, N %d" % (name, a["data-calls"], node["count"]))
    if int(a["data-max"]) != node["max"]:
        probs.append("%s: timeline's longest %s, max %d" % (name, a["data-max"], node["max"]))
    marks = sum(len(re.findall("M", e.attrs["d"])) for e in tl[0].find("path", "vp-calls"))
    if marks != int(a["data-columns"]) or not 0 < marks <= COLUMNS:
        probs.append("%s: %d marks, %s columns" % (name, marks, a["data-columns"]))
    for fig in art.find("figure", "vp-contrib"):
        total = sum(float(r.attrs["data-value"]) for r in fig.find("rect", "vp-cbar"))
        if abs(total - 100) > 0.5:
            probs.append("%s: node %s's row sums add up to %.2f%%" %
                         (name, fig.attrs["data-node"], total))


def report(path, jpath):
    p = Page(path)
    j = json.load(open(jpath))
    g = j["vcg"]
    probs = list(p.problems)
    graph = p.root.find("svg", "vp-graph")
    if not graph and not g["nodes"]:
        graph = [Elem("svg", [], None)]  # no graph to draw: nothing drawn
    if len(graph) != 1:
        out(probs + ["%d graphs, JSON %d nodes" % (len(graph), len(g["nodes"]))])
        return
    legend = set(id(e) for l in graph[0].find("g", "vp-legend") for e in l.walk())
    drawn = [e for e in graph[0].find("g", "vp-vcg-node") if id(e) not in legend]
    if sorted(int(e.attrs["data-id"]) for e in drawn) != [n["id"] for n in g["nodes"]]:
        probs.append("graph nodes %s, JSON %d" %
                     (sorted(e.attrs["data-id"] for e in drawn), len(g["nodes"])))
    edges = [e for e in graph[0].find("path", "vp-edge") if id(e) not in legend]
    if len(edges) != sum(n["parent"] is not None for n in g["nodes"]):
        probs.append("%d edges drawn" % len(edges))
    backs = [e for e in graph[0].find("path", "vp-back") if id(e) not in legend]
    if len(backs) != len(g["segments"]):
        probs.append("%d back-edges drawn, JSON %d" % (len(backs), len(g["segments"])))
    arts = {e.attrs.get("id"): e for e in p.root.find("article", "vp-task")}
    tasks = [n for n in g["nodes"] if n["type"] == "task"]
    if len(arts) != len(tasks):
        probs.append("%d Task sections, JSON %d Tasks" % (len(arts), len(tasks)))
    for n in tasks:
        art = arts.get("vp-task-%d" % n["id"])
        if art is None:
            probs.append("no section for task %d" % n["id"])
            continue
        check_task(art, n, j, probs)
    s = j.get("sampled")
    rows = p.root.find("tr", "vp-srow")
    if s:
        want = sum(1 for n in s["nodes"]
                   if n["samples"] and n["samples"] >= 0.005 * s["samples"])
        if len(rows) != want:
            probs.append("%d sampled rows, %d nodes from 0.5%% up" % (len(rows), want))
    elif rows:
        probs.append("sampled rows without samples")
    out(probs)


def calls(path, func, n):
    p = Page(path)
    probs = list(p.problems)
    found = 0
    for art in p.root.find("article", "vp-task"):
        if not art.find("h3")[0].all_text().split(") ", 1)[1].startswith(func):
            continue
        found += 1
        a = art.find("figure", "vp-timeline")[0].attrs
        marks = sum(len(re.findall("M", e.attrs["d"])) for e in
                    art.find("figure", "vp-timeline")[0].find("path", "vp-calls"))
        if int(a["data-calls"]) != n:
            probs.append("%s: %s calls, wanted %d" % (func, a["data-calls"], n))
        if not 0 < marks <= COLUMNS or marks != int(a["data-columns"]):
            probs.append("%s: %d marks for %s columns" % (func, marks, a["data-columns"]))
    if found != 1:
        probs.append("%d Tasks named %s" % (found, func))
    out(probs)


def dom(dump, path):
    d, p = Page(dump), Page(path)
    depth = [int(r.attrs["data-depth"]) for r in p.root.find("tr", "vp-srow")]
    want = sum(1 for i in range(len(depth) - 1) if depth[i + 1] > depth[i])
    probs = list(d.problems)
    buttons = d.root.find("button", "vp-tog")
    body = d.root.find("body")
    if len(buttons) != want:
        probs.append("%d fold buttons, %d rows with rows below" % (len(buttons), want))
    if not body or body[0].attrs.get("data-toggles") != str(want):
        probs.append("body data-toggles %r, wanted %d" %
                     (body[0].attrs.get("data-toggles") if body else None, want))
    for tag, cls in (("svg", "vp-graph"), ("article", "vp-task"), ("figure", "vp-hist"),
                     ("figure", "vp-timeline")):
        if len(d.root.find(tag, cls)) != len(p.root.find(tag, cls)):
            probs.append("%d %s.%s after the scripts, %d in the page" %
                         (len(d.root.find(tag, cls)), tag, cls, len(p.root.find(tag, cls))))
    out(probs)


def task_slow(j, node, rows=8):
    """The Task's kept slowest calls, slowest first (as the page lists them)."""
    by_id = {n["id"]: n for n in j["nodes"]}
    calls = [(c["duration"], c["start"]) for cid in node["cct_nodes"]
             for c in by_id[cid]["slowest"] or []]
    return sorted(calls, key=lambda c: (-c[0], c[1]))[:rows]


def sections(path, errpath, jpath):
    p = Page(path)
    j = json.load(open(jpath))
    probs = list(p.problems)
    # the warnings: as the command printed them, in order
    said = [l.split("warning: ", 1)[1].strip() for l in open(errpath, encoding="utf-8")
            if "warning: " in l]
    shown = [e.all_text().strip() for e in p.root.find("li", "vp-warning")]
    if shown != said:
        probs.append("warnings on the page %r, printed %r" % (shown, said))
    if len(p.root.find("section")) and not [e for e in p.root.find("section")
                                            if e.attrs.get("id") == "vp-warnings"]:
        probs.append("no warnings section")
    if j["vcg"]["nodes"]:
        rows = p.root.find("tr", "vp-pattern-row")
        want = [(q["rank"], q["count"]) for q in j["patterns"] if q["in_pattern_set"]]
        got = [(int(r.attrs["data-rank"]), int(r.attrs["data-n"])) for r in rows]
        if got != want:
            probs.append("Pattern Set rows %r, JSON %r" % (got, want))
        arts = {e.attrs.get("id"): e for e in p.root.find("article", "vp-task")}
        for n in j["vcg"]["nodes"]:
            if n["type"] != "task":
                continue
            art = arts.get("vp-task-%d" % n["id"])
            want = [d for d, _ in task_slow(j, n)]
            got = [int(r.attrs["data-duration"]) for r in art.find("tr", "vp-slow-row")] \
                if art else None
            if got != want:
                probs.append("task %d: slowest %r, JSON %r" % (n["id"], got, want))
            circles = art.find("circle", "vp-slow") if art else []
            if len(circles) != len(want):
                probs.append("task %d: %d slow calls circled, %d listed" %
                             (n["id"], len(circles), len(want)))
    off = p.root.find("p", "vp-offcpu-share")
    if j.get("offcpu_share") is not None and j["time"] == "wall":
        if len(off) != 1 or abs(float(off[0].attrs["data-share"]) - j["offcpu_share"]) > 1e-3:
            probs.append("off-CPU share %r, JSON %r" %
                         ([o.attrs["data-share"] for o in off], j["offcpu_share"]))
        by_id = {n["id"]: n for n in j["nodes"]}
        for r in p.root.find("tr", "vp-offcpu-row"):
            if not by_id[int(r.attrs["data-node"])]["high_variance"]:
                probs.append("off-CPU row of node %s, not high-variance" % r.attrs["data-node"])
        if not p.root.find("tr", "vp-offcpu-row"):
            probs.append("no off-CPU rows")
        # version 5: each row's preempted and blocked means are the JSON's
        for r in p.root.find("tr", "vp-offcpu-row"):
            o = by_id[int(r.attrs["data-node"])].get("offcpu") or {}
            for what in ("preempted", "blocked"):
                cell = r.find("td", "vp-" + what)
                if what not in o:
                    if cell:
                        probs.append("node %s: a %s cell without the split in JSON"
                                     % (r.attrs["data-node"], what))
                    continue
                if (len(cell) != 1 or
                        abs(float(cell[0].attrs.get("data-mean", "nan")) - o[what]["mean"]) >
                        1e-6 * max(1.0, abs(o[what]["mean"]))):
                    probs.append("node %s: %s mean %r, JSON %r" % (
                        r.attrs["data-node"], what,
                        [c.attrs.get("data-mean") for c in cell], o[what]["mean"]))
    elif off:
        probs.append("an off-CPU share without off-CPU times")
    out(probs)


def bezier(d):
    """The points along an SVG path of M, L, C, H and V commands."""
    toks = re.findall(r"[MLCHV]|-?[0-9.]+", d)
    pts, cur, i = [], (0.0, 0.0), 0
    while i < len(toks):
        c = toks[i]
        i += 1
        if c in "ML":
            cur = (float(toks[i]), float(toks[i + 1]))
            i += 2
            pts.append(cur)
        elif c == "C":
            p1, p2, p3 = [(float(toks[i + k]), float(toks[i + k + 1])) for k in (0, 2, 4)]
            i += 6
            for s in range(1, 21):
                t = s / 20
                pts.append(tuple((1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b +
                                 3 * (1 - t) * t ** 2 * c2 + t ** 3 * e
                                 for a, b, c2, e in zip(cur, p1, p2, p3)))
            cur = p3
    return pts


def layout(path):
    p = Page(path)
    probs = list(p.problems)
    graph = p.root.find("svg", "vp-graph")
    if len(graph) != 1:
        out(probs + ["%d graphs" % len(graph)])
        return
    g = graph[0]
    if g.attrs.get("data-layout") != "dot":
        probs.append("laid out by %r, not dot" % g.attrs.get("data-layout"))
    vb = [float(v) for v in g.attrs["viewbox"].split()]
    if abs(float(g.attrs["width"]) - vb[2]) > 1 or "width:100%" not in g.attrs["style"]:
        probs.append("the graph is not scaled by its viewBox: %r" % g.attrs)
    boxes = {}
    for n in g.find("g", "vp-vcg-node"):
        r = n.find("rect") or n.find("ellipse")
        a = r[0].attrs
        if r[0].tag == "rect":
            x, y, w, h = (float(a[k]) for k in ("x", "y", "width", "height"))
        else:
            x, y = float(a["cx"]) - float(a["rx"]), float(a["cy"]) - float(a["ry"])
            w, h = 2 * float(a["rx"]), 2 * float(a["ry"])
        # edges keep 3 px clear of a box's border (dot's boxes are 6 px
        # larger than those drawn); an oval's box is only checked 3 px in
        m = -3 if r[0].tag == "rect" else 3
        boxes[int(n.attrs["data-id"])] = (x + m, y + m, w - 2 * m, h - 2 * m)
    edges = [(e, None) for e in g.find("path", "vp-edge")] + \
        [(e, (int(e.attrs["data-from"]), int(e.attrs["data-to"])))
         for e in g.find("path", "vp-back")]
    for e, ends in edges:
        for x, y in bezier(e.attrs["d"]):
            for nid, (bx, by, bw, bh) in boxes.items():
                if bx < x < bx + bw and by < y < by + bh:
                    probs.append("%s %s crosses box %d at (%.0f, %.0f)" %
                                 ("back-edge" if ends else "edge", ends or "", nid, x, y))
                    break
            else:
                continue
            break
    out(probs)


def flame(path, jpath):
    p = Page(path)
    j = json.load(open(jpath))
    probs = list(p.problems)
    svg = p.root.find("svg", "vp-flame")
    if len(svg) != 1:
        out(probs + ["%d flame graphs" % len(svg)])
        return
    total, width = int(svg[0].attrs["data-samples"]), float(svg[0].attrs["data-width"])
    if total != j["sampled"]["samples"]:
        probs.append("flame graph of %d samples, JSON %d" % (total, j["sampled"]["samples"]))
    by_id = {n["id"]: n for n in j["sampled"]["nodes"]}
    frames = {}
    for f in svg[0].find("g", "vp-frame"):
        r = f.find("rect")[0].attrs
        frames[int(f.attrs["data-node"])] = (float(r["x"]), float(r["width"]),
                                            int(f.attrs["data-samples"]))
    root = frames.get(0)
    if not root or root[2] != total or abs(root[1] - width) > 0.01:
        probs.append("root box %r, %d samples over %g px" % (root, total, width))
    for nid, (x, w, k) in frames.items():
        if nid == 0:
            continue
        n = by_id.get(nid)
        if n is None or n["samples"] != k:
            probs.append("box %d: %d samples, JSON %r" % (nid, k, n and n["samples"]))
            continue
        if abs(w - k * width / total) > 0.01:
            probs.append("box %d: %.2f px for %d samples" % (nid, w, k))
        par = frames.get(n["parent"] or 0)
        if par is None:
            probs.append("box %d drawn without its caller" % nid)
        elif x < par[0] - 0.02 or x + w > par[0] + par[1] + 0.02:
            probs.append("box %d outside its caller's" % nid)
    drawn = sum(1 for n in j["sampled"]["nodes"] if n["samples"] * width / total >= 0.5)
    if len(frames) - 1 > drawn:
        probs.append("%d boxes, %d nodes half a pixel wide" % (len(frames) - 1, drawn))
    out(probs)


MEASURE = """<script>
(function () {
  var b = document.body, d = document.documentElement;
  function right(sel, name) {
    var e = document.querySelector(sel);
    if (e) b.setAttribute("data-" + name + "-w", e.getBoundingClientRect().right);
  }
  b.setAttribute("data-page-w", d.clientWidth);
  b.setAttribute("data-scroll-w", d.scrollWidth);
  right("svg.vp-graph", "graph");
  right("svg.vp-flame", "flame");
  b.setAttribute("data-sections", Array.prototype.map.call(
    document.querySelectorAll("section[id], header[id]"), function (e) { return e.id; }).join(" "));
})();
</script>
"""


def instrument(path, outpath):
    text = open(path, encoding="utf-8").read()
    at = text.rindex("</body>")
    open(outpath, "w", encoding="utf-8").write(text[:at] + MEASURE + text[at:])
    print("ok")


def measured(dump, names):
    d = Page(dump)
    probs = list(d.problems)
    body = d.root.find("body")[0].attrs
    page = float(body["data-page-w"])
    narrow = names[:1] == ["--narrow"]  # a window narrower than the plots
    names = names[narrow:]
    if not narrow and float(body["data-scroll-w"]) > page:
        probs.append("the page scrolls sideways: %s px in %s" % (body["data-scroll-w"], page))
    for name in [n for n in names if n in ("graph", "flame")]:
        w = body.get("data-%s-w" % name)
        if w is None:
            probs.append("no %s measured" % name)
        elif not 0 < float(w) <= page:
            probs.append("%s %s px wide in a page of %s" % (name, w, page))
    ids = set(body.get("data-sections", "").split())
    for want in ["vp-header", "vp-warnings"] + ["vp-" + n for n in names if n != "graph"] + \
            (["vp-vcg", "vp-patterns", "vp-tasks"] if "graph" in names else []):
        if want not in ids:
            probs.append("no #%s in the DOM" % want)
    out(probs)


cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "wellformed":
    wellformed(args[0])
elif cmd == "escaped":
    escaped(args[0], args[1:])
elif cmd == "report":
    report(args[0], args[1])
elif cmd == "calls":
    calls(args[0], args[1], int(args[2]))
elif cmd == "dom":
    dom(args[0], args[1])
elif cmd == "sections":
    sections(args[0], args[1], args[2])
elif cmd == "layout":
    layout(args[0])
elif cmd == "flame":
    flame(args[0], args[1])
elif cmd == "instrument":
    instrument(args[0], args[1])
elif cmd == "measured":
    measured(args[0], args[1:])
else:
    sys.exit("check-html.py: unknown command '%s'" % cmd)
