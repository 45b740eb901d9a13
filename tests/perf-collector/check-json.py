#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# check-json.py - query a `varperf report --format json` document and a
# fixture's ground truth for the shell tests, and check the report's
# internal invariants.  Prints one value (or "ok") on stdout; on failure
# prints why on stdout and exits 1, so a test can show it as a diagnostic.
"""usage: check-json.py COMMAND ARGS...

Report queries (REPORT is a JSON file):
  totals REPORT KEY              a field of "totals"
  target REPORT KEY              a field of "target" (exit_code, signal...)
  func REPORT NAME FIELD         a field of the "functions" entry NAME
  node REPORT CHAIN FIELD        a field of the one node CHAIN names
  nodes REPORT CHAIN             how many nodes CHAIN names
  sum REPORT CHAIN FIELD         FIELD summed over the nodes CHAIN names
  pattern REPORT INNER FIELD     a field of the first (highest VIM) pattern
                                 whose innermost element is INNER
  covar REPORT CHAIN A B         children_covariance entry of labels A, B
  rowsum REPORT CHAIN A          row A of it summed: A's share of the
                                 node's variance (labels: self, a function)
  invariant REPORT NAME          check one invariant (see INVARIANTS)
  compare REPORT TRUTH FUNC CONTEXT CHAIN
                                 compare the node CHAIN with the fixture's
                                 truth line FUNC CONTEXT: five checks, one
                                 "ok - ..." or "not ok - ..." line each,
                                 diagnostics as "# ..." lines; exit 0

Ground truth (TRUTH is a fixture's standard output):
  truth TRUTH FUNC CONTEXT FIELD count, mean_ns, stddev_ns, min_ns, max_ns
                                 or cov (stddev / mean)
  count TRUTH NAME               value of "count NAME N"
  line TRUTH NAME                value of "line NAME N"

Arithmetic:
  tolerance MEAN REL ABS         REL + ABS / MEAN: a relative tolerance
                                 for tap_within meaning REL plus ABS
  le A B                         "ok" when A <= B

CHAIN is a calling context, outermost first, "/"-separated, matched
against the end of each node's path from the top of the tree, e.g.
main/run/work; a leading "/" anchors it at the top: /rec is a top-level
node.  An element FUNC:LINE also requires the call site's line.
FUNC matches a function's display name exactly or up to a "(" (C++).
FIELD may be dotted: callsite.line.
"""

import json
import math
import sys

INVARIANTS = {}


class Fail(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail("cannot load '%s': %s" % (path, e))


def name_matches(want, name):
    if name is None:
        return False
    return name == want or (name.startswith(want + "(") and "(" not in want)


def field(obj, dotted):
    for part in dotted.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            raise Fail("no field '%s' in %s" % (dotted, json.dumps(obj)[:300]))
    return obj


def show(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def callsite_line(cs):
    """Line of a call site given as an object, "file:line" or null."""
    if isinstance(cs, dict):
        return cs.get("line")
    if isinstance(cs, str) and ":" in cs:
        tail = cs.rsplit(":", 1)[1]
        return int(tail) if tail.isdigit() else None
    return None


def parse_chain(chain):
    """[(function, line or None), ...]; a leading None anchors at the top."""
    elems = [None] if chain.startswith("/") else []
    for e in chain.lstrip("/").split("/"):
        if ":" in e and e.rsplit(":", 1)[1].isdigit():
            fn, line = e.rsplit(":", 1)
            elems.append((fn, int(line)))
        else:
            elems.append((e, None))
    return elems


def node_paths(doc):
    """Each node with its path [(function, line), ...] from the top."""
    byid = {n["id"]: n for n in doc["nodes"]}
    paths = {}

    def path(n):
        if n["id"] in paths:
            return paths[n["id"]]
        p = []
        cur = n
        seen = set()
        while cur is not None:
            if cur["id"] in seen:
                raise Fail("node %s: parent cycle" % n["id"])
            seen.add(cur["id"])
            p.append((cur["function"], callsite_line(cur.get("callsite"))))
            parent = cur.get("parent")
            cur = byid.get(parent) if parent is not None else None
            if parent is not None and cur is None:
                raise Fail("node %s: parent %s does not exist" % (n["id"], parent))
        p.reverse()
        paths[n["id"]] = p
        return p

    return [(n, path(n)) for n in doc["nodes"]]


def chain_matches(elems, path):
    if elems and elems[0] is None:
        elems = elems[1:]
        if len(elems) != len(path):
            return False
    if len(elems) > len(path):
        return False
    for (fn, line), (pfn, pline) in zip(elems, path[len(path) - len(elems):]):
        if not name_matches(fn, pfn):
            return False
        if line is not None and pline != line:
            return False
    return True


def find_nodes(doc, chain):
    elems = parse_chain(chain)
    return [n for n, p in node_paths(doc) if chain_matches(elems, p)]


def fmt_path(p):
    return "/".join("%s:%s" % (f, l) if l is not None else f for f, l in p)


def one_node(doc, chain):
    found = find_nodes(doc, chain)
    if len(found) != 1:
        paths = dict((n["id"], p) for n, p in node_paths(doc))
        raise Fail("%d nodes match '%s'%s" % (
            len(found), chain,
            "".join("\n  node %s: %s" % (n["id"], fmt_path(paths[n["id"]])) for n in found)))
    return found[0]


def truth_line(path, func, ctx):
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise Fail("cannot read '%s': %s" % (path, e))
    for ln in lines:
        w = ln.split()
        if len(w) >= 3 and w[0] == "truth" and w[1] == func and w[2] == ctx:
            d = dict(kv.split("=", 1) for kv in w[3:])
            return {k: float(v) for k, v in d.items()}
    raise Fail("no 'truth %s %s' line in '%s'" % (func, ctx, path))


def keyed_line(path, kind, name):
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise Fail("cannot read '%s': %s" % (path, e))
    for ln in lines:
        w = ln.split()
        if len(w) == 3 and w[0] == kind and w[1] == name:
            return w[2]
    raise Fail("no '%s %s' line in '%s'" % (kind, name, path))


def pattern_inner_matches(p, fn, line):
    funcs = p.get("functions") or []
    if not funcs or not name_matches(fn, funcs[-1]):
        return False
    if line is None:
        return True
    css = p.get("callsites") or []
    return bool(css) and callsite_line(css[-1]) == line


# ---- invariants of one report ----

def invariant(name):
    def reg(fn):
        INVARIANTS[name] = fn
        return fn
    return reg


def close(a, b, rel=1e-6, absolute=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + absolute


NODE_KEYS = ("id", "parent", "function", "callsite", "count", "mean", "stddev", "variance",
             "cov", "min", "max", "total", "unpaired", "significant", "high_variance", "vim",
             "children_covariance", "slowest")
FUNC_KEYS = ("function", "base", "count", "mean", "stddev", "cov", "total", "min", "max",
             "contexts")
PATTERN_KEYS = ("functions", "callsites", "count", "mean", "stddev", "cov", "vim",
                "in_pattern_set", "nodes")
TOTALS_KEYS = ("events", "invocations", "lost", "unpaired", "unmatched_exits", "threads",
               "foreign", "complete")


@invariant("fields")
def inv_fields(doc):
    errs = []
    for k in ("unit", "totals", "functions", "nodes", "patterns"):
        if k not in doc:
            errs.append("top level lacks '%s'" % k)
    if errs:
        return errs
    if doc["unit"] != "ns":
        errs.append("unit is %r, not 'ns'" % doc["unit"])
    errs += ["totals lacks '%s'" % k for k in TOTALS_KEYS if k not in doc["totals"]]
    for what, keys, items in (("node", NODE_KEYS, doc["nodes"]),
                              ("function", FUNC_KEYS, doc["functions"]),
                              ("pattern", PATTERN_KEYS, doc["patterns"])):
        for i, it in enumerate(items):
            for k in keys:
                if k not in it:
                    errs.append("%s %d lacks '%s'" % (what, i, k))
    if not doc["nodes"]:
        errs.append("no nodes")
    return errs


@invariant("stats")
def inv_stats(doc):
    """stddev = sqrt(variance), cov = stddev / mean, min <= mean <= max,
    total = count * mean."""
    errs = []
    for n in doc["nodes"]:
        tag = "node %s (%s)" % (n["id"], n["function"])
        if n["count"] == 0:
            continue
        if not close(n["stddev"], math.sqrt(n["variance"]), 1e-6, 1e-3):
            errs.append("%s: stddev %r != sqrt(variance %r)" % (tag, n["stddev"], n["variance"]))
        if n["mean"] > 0 and not close(n["cov"], n["stddev"] / n["mean"], 1e-6, 1e-9):
            errs.append("%s: cov %r != stddev/mean %r" % (tag, n["cov"], n["stddev"] / n["mean"]))
        if not n["min"] <= n["mean"] * (1 + 1e-9) and n["mean"] <= n["max"] * (1 + 1e-9):
            errs.append("%s: not min %r <= mean %r <= max %r" % (tag, n["min"], n["mean"],
                                                                 n["max"]))
        if not close(n["total"], n["count"] * n["mean"], 1e-6, 1.0):
            errs.append("%s: total %r != count*mean %r" % (tag, n["total"],
                                                           n["count"] * n["mean"]))
    return errs


@invariant("tree")
def inv_tree(doc):
    """Unique ids, existing parents, children's totals within the parent's."""
    errs = []
    ids = [n["id"] for n in doc["nodes"]]
    if len(set(ids)) != len(ids):
        errs.append("duplicate node ids")
    byid = {n["id"]: n for n in doc["nodes"]}
    for n in doc["nodes"]:
        if n["parent"] is not None and n["parent"] not in byid:
            errs.append("node %s: parent %s missing" % (n["id"], n["parent"]))
    try:
        node_paths(doc)
    except Fail as e:
        errs.append(str(e))
    kids = {}
    for n in doc["nodes"]:
        kids.setdefault(n["parent"], []).append(n)
    for pid, ch in kids.items():
        if pid is None or pid not in byid:
            continue
        s = sum(c["total"] for c in ch)
        if s > byid[pid]["total"] * (1 + 1e-9) + 1:
            errs.append("node %s: children's total %r exceeds its total %r" % (
                pid, s, byid[pid]["total"]))
    return errs


@invariant("slowest")
def inv_slowest(doc):
    """A node's slowest calls: as many as it has paired calls, up to the
    same K for every node; in start order, from the first event; within
    its min and max, the max among them; each split adds up to its call's
    duration exactly, its parts are "self" or the node's children."""
    errs = []
    byid = {n["id"]: n for n in doc["nodes"]}
    k = max((len(n["slowest"]) for n in doc["nodes"]), default=0)
    for n in doc["nodes"]:
        s = n["slowest"]
        if len(s) != min(n["count"], k):
            errs.append("node %s: %d slowest calls of %d, K %d" % (
                n["id"], len(s), n["count"], k))
        starts = [c["start"] for c in s]
        if starts != sorted(starts) or any(t < 0 for t in starts):
            errs.append("node %s: starts %s not in order from 0" % (n["id"], starts[:5]))
        if s and (max(c["duration"] for c in s) != n["max"] or
                  min(c["duration"] for c in s) < n["min"]):
            errs.append("node %s: durations outside [min, max] or without the max" % n["id"])
        for c in s:
            if sum(p["time"] for p in c["split"]) != c["duration"]:
                errs.append("node %s: call at %s: split %s != duration %s" % (
                    n["id"], c["start"], c["split"], c["duration"]))
            for p in c["split"]:
                if p["callee"] == "self":
                    ok = p["node"] is None
                elif p["node"] is None:
                    ok = p["callee"].endswith("other callees)")
                else:
                    ok = p["node"] in n["children"] and p["node"] in byid
                if not ok:
                    errs.append("node %s: part %s" % (n["id"], p))
    return errs


@invariant("covariance")
def inv_covariance(doc):
    """The children covariance matrix is square, symmetric, labelled, has a
    non-negative diagonal, and sums to the node's variance."""
    errs = []
    for n in doc["nodes"]:
        cc = n["children_covariance"]
        if cc is None:
            continue
        tag = "node %s (%s)" % (n["id"], n["function"])
        m, labels = cc["matrix"], cc["labels"]
        k = len(labels)
        if len(m) != k or any(len(r) != k for r in m):
            errs.append("%s: matrix is not %dx%d" % (tag, k, k))
            continue
        for i in range(k):
            if m[i][i] < -1e-6 * max(1.0, n["variance"]):
                errs.append("%s: negative variance %r of %s" % (tag, m[i][i], labels[i]))
            for j in range(i):
                if not close(m[i][j], m[j][i], 1e-9, 1e-6):
                    errs.append("%s: matrix not symmetric at %d,%d" % (tag, i, j))
        s = sum(sum(r) for r in m)
        if not close(s, n["variance"], 1e-6, 1e-3 + 1e-9 * n["mean"] ** 2):
            errs.append("%s: matrix sums to %r, variance is %r" % (tag, s, n["variance"]))
    return errs


@invariant("analysis")
def inv_analysis(doc):
    """significant = total >= cutoff * total time; high_variance =
    significant and CoV >= the threshold; vim = k * stddev * count; Pattern
    Set = VIM >= beta * max VIM; patterns sorted by VIM, their counts the
    sums of their nodes'.  Parameters from the report, else the defaults
    (0.02 %, CoV 0.4, k = 5 for p = 0.96, beta 0.1)."""
    errs = []
    par = doc.get("parameters") or {}
    cutoff = par.get("cutoff", 0.0002)
    thr = par.get("cov_threshold", 0.4)
    k = par.get("k", 5.0)
    beta = par.get("beta", 0.1)
    grand = sum(n["total"] for n in doc["nodes"] if n["parent"] is None)
    if "total_time" in doc["totals"] and doc["totals"]["total_time"] != grand:
        errs.append("totals.total_time %r, top-level nodes sum to %r" % (
            doc["totals"]["total_time"], grand))
    byid = {n["id"]: n for n in doc["nodes"]}
    for n in doc["nodes"]:
        tag = "node %s (%s)" % (n["id"], n["function"])
        sig = n["total"] >= cutoff * grand
        if abs(n["total"] - cutoff * grand) > 1 and n["significant"] != sig:
            errs.append("%s: significant is %r for total %r of %r" % (tag, n["significant"],
                                                                      n["total"], grand))
        hv = n["significant"] and n["count"] > 0 and n["cov"] >= thr
        if abs(n["cov"] - thr) > 1e-9 and n["high_variance"] != hv:
            errs.append("%s: high_variance is %r with cov %r" % (tag, n["high_variance"],
                                                                n["cov"]))
        if not close(n["vim"], k * n["stddev"] * n["count"], 1e-6, 1e-3):
            errs.append("%s: vim %r != k*stddev*count %r" % (tag, n["vim"],
                                                             k * n["stddev"] * n["count"]))
    pats = doc["patterns"]
    vims = [p["vim"] for p in pats]
    if vims != sorted(vims, reverse=True):
        errs.append("patterns are not sorted by VIM, descending")
    top = max(vims) if vims else 0
    for i, p in enumerate(pats):
        want = p["vim"] >= beta * top
        if abs(p["vim"] - beta * top) > 1e-6 * top and p["in_pattern_set"] != want:
            errs.append("pattern %d: in_pattern_set %r, vim %r, max %r" % (
                i, p["in_pattern_set"], p["vim"], top))
        if len(p["functions"]) != len(p["callsites"]) or not p["functions"]:
            errs.append("pattern %d: %d functions, %d callsites" % (
                i, len(p["functions"]), len(p["callsites"])))
        if not p["nodes"]:
            errs.append("pattern %d: no nodes" % i)
        cnt = sum(byid[x]["count"] for x in p["nodes"] if x in byid)
        if cnt != p["count"]:
            errs.append("pattern %d: count %r, its nodes' counts sum to %r" % (
                i, p["count"], cnt))
        if not close(p["vim"], k * p["stddev"] * p["count"], 1e-6, 1e-3):
            errs.append("pattern %d: vim %r != k*stddev*count" % (i, p["vim"]))
        for x in p["nodes"]:
            if x not in byid or byid[x]["function"] != p["functions"][-1]:
                errs.append("pattern %d: node %r is not a %s node" % (
                    i, x, p["functions"][-1]))
            elif not byid[x]["high_variance"]:
                errs.append("pattern %d: node %r is not high-variance" % (i, x))
    return errs


@invariant("totals")
def inv_totals(doc):
    """invocations and unpaired are the nodes' sums; function summaries
    agree with the nodes (no recursion in the programs this is used on)."""
    errs = []
    t = doc["totals"]
    inv = sum(n["count"] for n in doc["nodes"])
    unp = sum(n["unpaired"] for n in doc["nodes"])
    if t["invocations"] != inv:
        errs.append("totals.invocations %r, nodes' counts sum to %r" % (t["invocations"], inv))
    if t["unpaired"] != unp:
        errs.append("totals.unpaired %r, nodes' unpaired sum to %r" % (t["unpaired"], unp))
    if t["events"] < 2 * inv + unp:
        errs.append("totals.events %r < 2 * invocations + unpaired" % t["events"])
    for f in doc["functions"]:
        ns = [n for n in doc["nodes"] if n["function"] == f["function"]]
        c = sum(n["count"] for n in ns)
        tot = sum(n["total"] for n in ns)
        if f["count"] != c or not close(f["total"], tot, 1e-9, 1.0):
            errs.append("function %s: count %r total %r, its nodes: %r %r" % (
                f["function"], f["count"], f["total"], c, tot))
        if f["contexts"] != len(ns):
            errs.append("function %s: contexts %r, %d nodes" % (f["function"], f["contexts"],
                                                                len(ns)))
    return errs


# varperf's window lies inside the fixture's bracket: for each call,
# varperf's duration v = b - g, with b the bracket and g >= 0 the time
# between bracket and probe: the probe's own cost (a few us) plus any time
# the scheduler took the CPU away right there.  The fixture measures how
# much each call exceeded the work it asked for (disturbed_*: mean, RMS and
# maximum excess), which bounds the second part.  So, with a tolerance of
# 3 % plus the probe cost (2 us, or the recording's calibrated cost of its
# dearest class where that is more):
#   mean:  mean_b - tol - disturbed_ns <= mean_v <= mean_b (+ 1 us for the
#          kernel's fast clock accessor)
#   sd:    |sd_v - sd_b| <= that cost + disturbed_rms_ns (Minkowski)
#   CoV:   between the bounds those imply, widened by 5 %
#   min:   min_b - tol - disturbed_max_ns <= min_v <= min_b
#   max:   max_b - tol - disturbed_max_ns <= max_v <= max_b, and where a
#          disturbance was seen, less another disturb_slack_ns (20 us):
#          the longest bracket may be the disturbed call, all of whose
#          excess may lie outside the probes
# On a quiet machine the disturbance is 0 and these are tight; on a loaded
# one the lower bounds widen by what the fixture saw, not by a guess, and
# the upper bounds stay exact.
MEAN_REL, MEAN_ABS, SD_ABS, COV_REL, CLOCK_SLACK = 0.03, 2000.0, 2000.0, 0.05, 1000.0


def compare(doc, truth_path, func, ctx, chain):
    """Print five TAP-like results comparing node CHAIN with the truth."""
    def result(ok, desc, *diag):
        print("%s - %s %s: %s" % ("ok" if ok else "not ok", func, chain, desc))
        if not ok:
            for d in diag:
                print("# " + d)

    try:
        if isinstance(doc, Fail):
            raise doc
        t = truth_line(truth_path, func, ctx)
        n = one_node(doc, chain)
    except Fail as e:
        for d in ("count", "mean", "CoV", "min", "max"):
            result(False, d, str(e))
        return
    dmean = t.get("disturbed_ns", 0.0)
    drms = t.get("disturbed_rms_ns", 0.0)
    dmax = t.get("disturbed_max_ns", 0.0)
    # What the fixture's bracket holds and the probes' window does not is
    # part of a probed call's cost: 2 us where the suite was written, the
    # recording's calibrated cost (its dearest class) where probes cost
    # more - 6.6-8.3 us on another VM of the same kind.
    cost = max([MEAN_ABS] + [c.get("full_ns", 0) for c in doc.get("probe_costs") or []])
    sd_abs = SD_ABS * cost / MEAN_ABS
    note = ("disturbance seen by the fixture: mean %.0f, rms %.0f, max %.0f ns"
            % (dmean, drms, dmax))
    tol = MEAN_REL * t["mean_ns"] + cost
    result(n["count"] == t["count"], "count is %d" % t["count"],
           "wanted: %d" % t["count"], "  seen: %r" % n["count"])
    if dmean > 0:
        print("# " + note)
    result(t["mean_ns"] - tol - dmean <= n["mean"] <= t["mean_ns"] + CLOCK_SLACK,
           "mean within 3 %% + a probe's cost below %.0f ns" % t["mean_ns"],
           "wanted: %.1f - %.1f <= mean <= %.1f" % (t["mean_ns"], tol + dmean,
                                                    t["mean_ns"] + CLOCK_SLACK),
           "  seen: %r" % n["mean"], note)
    mean_t, sd_t = t["mean_ns"], t["stddev_ns"]
    tcov = sd_t / mean_t if mean_t else 0.0
    lo = max(0.0, sd_t - sd_abs - drms) / mean_t * (1 - COV_REL)
    hi = (sd_t + sd_abs + drms) / max(1.0, mean_t - tol - dmean) * (1 + COV_REL)
    result(lo <= n["cov"] <= hi, "CoV agrees with %.3f" % tcov,
           "wanted: %.4f <= CoV <= %.4f" % (lo, hi), "  seen: %r" % n["cov"], note)
    # The probes fire inside the bracket: never longer, and shorter only
    # by the probe cost and the disturbance.  The longest bracket, where
    # a disturbance was seen at all, may be the disturbed call, and all of
    # its excess - the slack the fixture allows for the probes included -
    # may have fallen between the bracket and a probe.
    slack = t.get("disturb_slack_ns", 0.0) if dmax > 0 else 0.0
    for key, allow in (("min", dmax), ("max", dmax + slack)):
        tv = t[key + "_ns"]
        result(tv - tol - allow <= n[key] <= tv + CLOCK_SLACK,
               "%s in [%.0f - tolerance, %.0f]" % (key, tv, tv),
               "wanted: %.0f - %.0f <= %s <= %.0f" % (tv, tol + allow, key, tv + CLOCK_SLACK),
               "  seen: %r" % n[key], note)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__, end="")
        return 2 if len(argv) < 2 else 0
    cmd, args = argv[1], argv[2:]
    want = {"totals": 2, "target": 2, "func": 3, "node": 3, "nodes": 2, "sum": 3, "pattern": 3,
            "covar": 4, "rowsum": 3, "invariant": 2, "truth": 4, "count": 2, "line": 2,
            "tolerance": 3, "le": 2, "compare": 5}
    if cmd not in want or len(args) != want[cmd]:
        print("check-json.py: bad usage: %s" % " ".join(argv[1:]))
        return 2
    if cmd == "truth":
        t = truth_line(args[0], args[1], args[2])
        if args[3] == "cov":
            print(repr(t["stddev_ns"] / t["mean_ns"]) if t["mean_ns"] else "0")
        elif args[3] in t:
            v = t[args[3]]
            print(int(v) if v.is_integer() else repr(v))
        else:
            raise Fail("no field '%s' in the truth line" % args[3])
        return 0
    if cmd in ("count", "line"):
        print(keyed_line(args[0], cmd, args[1]))
        return 0
    if cmd == "tolerance":
        mean, rel, absolute = (float(a) for a in args)
        print(repr(rel + absolute / mean) if mean > 0 else "1e9")
        return 0
    if cmd == "le":
        a, b = float(args[0]), float(args[1])
        if a <= b:
            print("ok")
            return 0
        print("%s > %s" % (args[0], args[1]))
        return 1

    if cmd == "compare":
        try:
            doc = load(args[0])
        except Fail as e:
            doc = e
        compare(doc, args[1], args[2], args[3], args[4])
        return 0
    doc = load(args[0])
    if cmd == "totals":
        print(show(field(doc["totals"], args[1])))
    elif cmd == "target":
        if doc.get("target") is None:
            raise Fail("the report has no target (recording incomplete)")
        print(show(field(doc["target"], args[1])))
    elif cmd == "func":
        fs = [f for f in doc["functions"] if name_matches(args[1], f["function"])]
        if len(fs) != 1:
            raise Fail("%d functions match '%s'" % (len(fs), args[1]))
        print(show(field(fs[0], args[2])))
    elif cmd == "node":
        print(show(field(one_node(doc, args[1]), args[2])))
    elif cmd == "nodes":
        print(len(find_nodes(doc, args[1])))
    elif cmd == "sum":
        print(show(sum(field(n, args[2]) for n in find_nodes(doc, args[1]))))
    elif cmd == "pattern":
        fn, line = parse_chain(args[1])[-1]
        ps = [p for p in doc["patterns"] if pattern_inner_matches(p, fn, line)]
        if not ps:
            raise Fail("no pattern ends in '%s'; patterns: %s" % (
                args[1], "; ".join("/".join(p["functions"]) + " " + json.dumps(p["callsites"])
                                   for p in doc["patterns"])[:2000]))
        print(show(field(ps[0], args[2])))
    elif cmd in ("covar", "rowsum"):
        n = one_node(doc, args[1])
        cc = n["children_covariance"]
        if cc is None:
            raise Fail("node %s has no children_covariance" % n["id"])

        def idx(label):
            hits = [i for i, lab in enumerate(cc["labels"])
                    if lab == label or name_matches(label, lab.split(" ")[0].split("@")[0])]
            if len(hits) != 1:
                raise Fail("%d labels match '%s' in %r" % (len(hits), label, cc["labels"]))
            return hits[0]
        if cmd == "rowsum":
            print(show(sum(cc["matrix"][idx(args[2])])))
        else:
            print(show(cc["matrix"][idx(args[2])][idx(args[3])]))
    elif cmd == "invariant":
        if args[1] not in INVARIANTS:
            raise Fail("unknown invariant '%s'" % args[1])
        errs = INVARIANTS[args[1]](doc)
        if errs:
            print("\n".join(errs[:20]))
            return 1
        print("ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Fail as e:
        print(str(e))
        sys.exit(1)
    except (KeyError, TypeError, ValueError) as e:
        print("malformed report: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
