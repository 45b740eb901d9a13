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
    bars = hist[0].find("rect", "vp-bar")
    if len(bars) != len(h) or int(hist[0].attrs["data-bars"]) != len(h):
        probs.append("%s: %d bars (data-bars %s), %d non-empty buckets" %
                     (name, len(bars), hist[0].attrs["data-bars"], len(h)))
    if int(hist[0].attrs["data-calls"]) != node["count"] or sum(h.values()) != node["count"]:
        probs.append("%s: histogram of %s calls, buckets %d, N %d" %
                     (name, hist[0].attrs["data-calls"], sum(h.values()), node["count"]))
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
else:
    sys.exit("check-html.py: unknown command '%s'" % cmd)
