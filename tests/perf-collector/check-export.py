#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# check-export.py - check `varperf report --format chrome` and `--format
# folded` against the JSON report of the same recording (and the chrome
# export of every call, for --slowest).  Prints "ok" or what is wrong, one
# line, and exits 0 either way: the shell test compares the line.
"""usage: check-export.py COMMAND ARGS...

  chrome-format CHROME           every event as the Trace Event Format has it:
                                 X events with name, cat, ph, ts, dur (us),
                                 pid, tid, args; M events naming each process
                                 and thread that has X events
  chrome-nodes CHROME REPORT     per node, the X events' count, total, min and
                                 max (ns) are the report's, args.mean_us and
                                 sigma_us its mean and stddev, z the call's
  chrome-sampled CHROME REPORT   the sampled stacks' spans nest strictly on
                                 each track, and their samples per calling
                                 context are the sampled tree's
  chrome-nesting CHROME REPORT   on each thread, events nest strictly (none
                                 touches another), and the innermost event
                                 around one is of its parent's node (when its
                                 node has a parent)
  chrome-truth CHROME REPORT TRUTH FUNC CONTEXT
                                 as many calls of FUNC in CONTEXT as the
                                 fixture's truth line says, their mean (from
                                 dur, us) within the fixtures' bounds of its
  chrome-slowest ALL SLOW REPORT K [CONTEXT]
                                 SLOW holds exactly the K slowest calls of
                                 each selected node in ALL (the significant
                                 nodes with more than K calls, or CONTEXT's)
                                 and the calls nested in them
  folded-time FOLDED REPORT      one line per node with its own time: total
                                 + open_total less its children's; stacks
                                 are calling contexts; the lines add up to
                                 the outermost nodes' time; and the sampled
                                 stacks, under "[sampled]" when there are
                                 probed lines: one per sampled context with
                                 its own samples times the period
  folded-variance FOLDED REPORT [ERR]
                                 the lines add up to N Var of the outermost
                                 nodes with variance (1e-9 relative), less
                                 the shares below 0 left out that varperf's
                                 warning in ERR states (to its 3 digits)
  folded-slowest FOLDED ALL REPORT K [CONTEXT]
                                 the lines add up to the durations of the K
                                 slowest calls of the outermost selected nodes
  folded-typical FOLDED REPORT K [CONTEXT]
                                 the lines add up to each outermost selected
                                 node's total time times min(K, N) / N
"""

import bisect
import json
import re
import sys


class Fail(Exception):
    pass


def load(path):
    with open(path) as f:
        return json.load(f)


def ns(us):
    # ts and dur are written as exact microseconds with three decimals
    return round(us * 1000)


def nodes_of(report):
    return {n["id"]: n for n in report["nodes"]}


def chain(nodes, i):
    c = []
    while i is not None:
        c.append(nodes[i]["function"])
        i = nodes[i]["parent"]
    return ";".join(reversed(c))


def ancestors(nodes, i):
    """The ids above node i, outermost first."""
    a = []
    i = nodes[i]["parent"]
    while i is not None:
        a.append(i)
        i = nodes[i]["parent"]
    return list(reversed(a))


def xevents(trace):
    """The probed calls' X events (the sampled stacks' are chrome_sampled's)."""
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "varperf"]


def sevents(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "varperf.sampled"]


def chrome_sampled(path, rpath):
    """The sampled stacks' spans nest strictly on each track, and each
    calling context's samples (the spans' args.samples summed over the
    spans with that context) are the sampled tree's, context by context."""
    report = load(rpath)
    sd = {n["id"]: n for n in report["sampled"]["nodes"]} if report.get("sampled") else {}
    want = {}
    for i, n in sd.items():
        c = sampled_chain(sd, i)
        want[c] = want.get(c, 0) + n["samples"]
    by_track = {}
    for e in sevents(load(path)):
        s = ns(e["ts"])
        by_track.setdefault((e["pid"], e["tid"]), []).append((s, s + ns(e["dur"]), e))
    seen = {}
    for evs in by_track.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, end, e in evs:
            while stack and stack[-1][1] < s:
                stack.pop()
            if stack and end > s and (stack[-1][1] == s or end >= stack[-1][1] or
                                      s <= stack[-1][0]):
                raise Fail("sampled span %r over [%d, %d] not strictly inside [%d, %d]" %
                           (e["name"], s, end, stack[-1][0], stack[-1][1]))
            name = e["name"].replace(";", ":")
            stack.append((s, end, stack[-1][2] + ";" + name if stack else name))
            c = stack[-1][2]
            seen[c] = seen.get(c, 0) + e["args"]["samples"]
    if not seen:
        raise Fail("no sampled spans")
    if seen != want:
        diff = sorted(k for k in set(seen) | set(want) if seen.get(k) != want.get(k))[:3]
        raise Fail("samples per context differ from the sampled tree's: %r" %
                   [(k, seen.get(k), want.get(k)) for k in diff])
    return "ok %d" % sum(len(v) for v in by_track.values())


def true_span(e):
    """The call's own [start, end) in ns: the drawn span is moved inward by
    the call's depth at each end (or shrunk to its middle), its exact
    duration is in args.dur_ns."""
    d, drawn, ts = e["args"]["dur_ns"], ns(e["dur"]), ns(e["ts"])
    start = ts - (d - drawn) // 2 if drawn else ts - d // 2
    return start, start + d


def chrome_format(path):
    t = load(path)
    if t.get("displayTimeUnit") not in ("ns", "ms"):
        raise Fail("displayTimeUnit %r" % t.get("displayTimeUnit"))
    ev = t["traceEvents"]
    threads, procs, named_t, named_p = set(), set(), set(), set()
    for e in ev:
        if e["ph"] == "X":
            for k in ("name", "cat", "ts", "dur", "pid", "tid", "args"):
                if k not in e:
                    raise Fail("X event without %s: %r" % (k, e))
            if not isinstance(e["name"], str) or e["cat"] not in ("varperf", "varperf.sampled"):
                raise Fail("name or cat: %r" % e)
            if not all(isinstance(e[k], int) for k in ("pid", "tid")):
                raise Fail("pid/tid not integers: %r" % e)
            if not all(isinstance(e[k], (int, float)) for k in ("ts", "dur")):
                raise Fail("ts/dur not numbers: %r" % e)
            if e["dur"] < 0 or e["ts"] < 0:
                raise Fail("negative ts or dur: %r" % e)
            if set(e["args"]) != ({"node", "dur_ns", "mean_us", "sigma_us", "z"}
                                  if e["cat"] == "varperf" else {"samples"}):
                raise Fail("args: %r" % e["args"])
            threads.add((e["pid"], e["tid"]))
            procs.add(e["pid"])
        elif e["ph"] == "M":
            if e["name"] == "thread_name":
                named_t.add((e["pid"], e["tid"]))
            elif e["name"] == "process_name":
                named_p.add(e["pid"])
            else:
                raise Fail("metadata %r" % e)
            if not isinstance(e["args"].get("name"), str):
                raise Fail("metadata without a name: %r" % e)
        else:
            raise Fail("phase %r" % e["ph"])
    if not threads:
        raise Fail("no X events")
    if threads - named_t or procs - named_p:
        raise Fail("unnamed: threads %r, processes %r" % (threads - named_t, procs - named_p))
    return "ok"


def chrome_nodes(path, rpath):
    ev = xevents(load(path))
    per = {}
    for e in ev:
        per.setdefault(e["args"]["node"], []).append(e)
    for n in load(rpath)["nodes"]:
        es = per.pop(n["id"], [])
        d = [e["args"]["dur_ns"] for e in es]
        if len(d) != n["count"]:
            raise Fail("node %d (%s): %d events, count %d" % (n["id"], n["function"],
                                                             len(d), n["count"]))
        if not d:
            continue
        if sum(d) != n["total"] or min(d) != n["min"] or max(d) != n["max"]:
            raise Fail("node %d: events total/min/max %d/%d/%d, report %d/%d/%d" %
                       (n["id"], sum(d), min(d), max(d), n["total"], n["min"], n["max"]))
        for e in es:
            a = e["args"]
            if e["name"] != n["function"]:
                raise Fail("node %d named %r" % (n["id"], e["name"]))
            if abs(a["mean_us"] - n["mean"] / 1000) > 0.0006 or \
               abs(a["sigma_us"] - n["stddev"] / 1000) > 0.0006:
                raise Fail("node %d: args %r, mean %g sd %g" % (n["id"], a, n["mean"],
                                                                 n["stddev"]))
            z = (a["dur_ns"] - n["mean"]) / n["stddev"] if n["stddev"] > 0 else 0
            # the drawn span: inside the call's, by its depth at each end
            dd = a["dur_ns"] - ns(e["dur"])
            if dd < 0 or (ns(e["dur"]) and dd != 2 * n["depth"]):
                raise Fail("node %d: drawn %d ns of a %d ns call at depth %d" %
                           (n["id"], ns(e["dur"]), a["dur_ns"], n["depth"]))
            if abs(a["z"] - z) > 0.0006:
                raise Fail("node %d: z %g, wanted %g" % (n["id"], a["z"], z))
    if per:
        raise Fail("events of nodes the report lacks: %r" % sorted(per))
    return "ok"


def chrome_nesting(path, rpath):
    """No two drawn calls of one thread overlap or touch without one
    holding the other strictly inside, and every call of a node with a
    parent lies strictly inside a call of its parent's node on its thread
    (calls drawn with no duration, too short to move inward, may touch)."""
    nodes = nodes_of(load(rpath))
    by_thread, by_node = {}, {}
    for e in xevents(load(path)):
        s, t = ns(e["ts"]), (e["pid"], e["tid"])
        iv = (s, s + ns(e["dur"]))
        by_thread.setdefault(t, []).append(iv)
        by_node.setdefault((t, e["args"]["node"]), []).append(iv)
    for evs in by_thread.values():
        evs.sort(key=lambda iv: (iv[0], -iv[1]))
        ends = []
        prev = None
        for s, end in evs:
            if end > s and prev is not None and prev[1] > prev[0] and prev == (s, end):
                raise Fail("two calls drawn over [%d, %d]" % (s, end))
            prev = (s, end)
            while ends and ends[-1] < s:
                ends.pop()
            if ends and end > s and ends[-1] == s:
                raise Fail("a call over [%d, %d] starts where one ends" % (s, end))
            if ends and end > s and end >= ends[-1]:
                raise Fail("a call over [%d, %d] overlaps or ends with one that ends at %d" %
                           (s, end, ends[-1]))
            ends.append(end)
    for ivs in by_node.values():
        ivs.sort()
    checked = 0
    for (t, node), ivs in by_node.items():
        parent = nodes[node]["parent"]
        # a call still open at the end (never returned) is not exported
        if parent is None or nodes[parent]["unpaired"]:
            continue
        outer = by_node.get((t, parent), [])
        starts = [iv[0] for iv in outer]
        for s, end in ivs:
            i = bisect.bisect_right(starts, s)
            strict = end > s
            if not any((outer[j][0] < s and end < outer[j][1]) if strict else
                       (outer[j][0] <= s and end <= outer[j][1])
                       for j in range(max(0, i - 3), i)):
                raise Fail("the call of node %d over [%d, %d] is in no call of node %d" %
                           (node, s, end, parent))
            checked += 1
    if not checked:
        raise Fail("no nested call to check")
    return "ok %d" % checked


def chrome_truth(path, rpath, tpath, func, context):
    """FUNC's calls in CONTEXT (the fixture's truth line): their number
    exactly, their mean within the fixtures' bounds (tests/fixtures/README):
    mean_b - 3 % - probes - disturbed_ns <= mean <= mean_b, where probes
    is what the fixture's bracket holds of probe costs that the
    compensated dur does not: 2 us, or, where probes cost more, the
    recording's calibrated cost (its dearest class) for the call and for
    each probed call inside it."""
    t = None
    for line in open(tpath):
        w = line.split()
        if w[:3] == ["truth", func, context]:
            t = {k: float(v) for k, v in (x.split("=") for x in w[3:])}
    if t is None:
        raise Fail("no truth line for %s %s" % (func, context))
    report = load(rpath)
    nodes = nodes_of(report)
    ids = {i for i in nodes if nodes[i]["function"] == func and
           ("/" + context).endswith("/" + chain(nodes, i).replace(";", "/"))}
    cost = max([c["full_ns"] for c in report.get("probe_costs") or []] + [0])
    calls = sum(nodes[i]["count"] for i in ids)
    inside = sum(n["count"] for n in nodes.values()
                 if any(";%d;" % i in ";%s;" % ";".join(map(str, ancestors(nodes, n["id"])))
                        for i in ids))
    probes = max(2000, cost * (1 + inside / calls)) if calls else 2000
    d = [e["args"]["dur_ns"] for e in xevents(load(path)) if e["args"]["node"] in ids]
    if len(d) != t["count"]:
        raise Fail("%d calls of %s, the fixture made %d" % (len(d), func, t["count"]))
    m, mb = sum(d) / len(d), t["mean_ns"]
    if not mb - 0.03 * mb - probes - t["disturbed_ns"] <= m <= mb:
        raise Fail("%s: mean %.1f ns from the events' dur, the fixture's %.1f" % (func, m, mb))
    return "ok"


def ends_with(nodes, i, context):
    for name in reversed(context.split(";")):
        if i is None or nodes[i]["function"] != name:
            return False
        i = nodes[i]["parent"]
    return True


def selected(nodes, k, context, outermost):
    sel = set()
    for i in sorted(nodes):
        n = nodes[i]
        if context is not None:
            want = ends_with(nodes, i, context)
        else:
            want = n["significant"] and n["count"] > k
        if outermost:
            p = n["parent"]
            while p is not None and p not in sel:
                p = nodes[p]["parent"]
            if p is not None:
                continue
        if want and n["count"]:
            sel.add(i)
    return sel


def slow_calls(ev, sel, k):
    """The K slowest events of each selected node: (node, pid, tid, start, end)."""
    calls = []
    for i in sel:
        es = sorted((e for e in ev if e["args"]["node"] == i), key=lambda e: -e["args"]["dur_ns"])[:k]
        calls += [(i, e["pid"], e["tid"]) + true_span(e) for e in es]
    return calls


def key(e):
    return (e["args"]["node"], e["pid"], e["tid"]) + true_span(e)


def chrome_slowest(apath, spath, rpath, k, context=None):
    nodes = nodes_of(load(rpath))
    k = int(k)
    allev, slow = xevents(load(apath)), xevents(load(spath))
    sel = selected(nodes, k, context, False)
    if not sel:
        raise Fail("no node selected")
    calls = slow_calls(allev, sel, k)
    bynode = {}
    for c in calls:
        bynode.setdefault(c[0], []).append(c)

    def inside(e):
        i = e["args"]["node"]
        s, end = true_span(e)
        while i is not None:
            for c in bynode.get(i, ()):
                if c[1:3] == (e["pid"], e["tid"]) and c[3] <= s and end <= c[4]:
                    return True
            i = nodes[i]["parent"]
        return False

    want = sorted(key(e) for e in allev if inside(e))
    seen = sorted(key(e) for e in slow)
    if want != seen:
        return "%d events, wanted %d (%d slow calls of %d nodes)" % (len(seen), len(want),
                                                                    len(calls), len(sel))
    return "ok %d %d" % (len(calls), len(seen))


def folded_lines(path):
    lines = []
    for line in open(path):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        if not stack or not v.isdigit():
            raise Fail("line %r" % line)
        lines.append((stack, int(v)))
    if not lines:
        raise Fail("no lines")
    return lines


def sampled_chain(sd, i):
    n = sd[i]
    return (sampled_chain(sd, n["parent"]) + ";" if n["parent"] is not None else "") + \
        n["function"].replace(";", ":")


def folded_sampled(lines, report):
    """The sampled lines: each sampled context's own samples times the
    period, in ns (a fixed period: the sampler's)."""
    s = report.get("sampled")
    want = {}
    if s:
        sd = {n["id"]: n for n in s["nodes"]}
        for i, n in sd.items():
            if n["self"]:
                c = sampled_chain(sd, i)
                want[c] = want.get(c, 0) + n["self"] * s["period"]
    seen = {}
    for stack, v in lines:
        seen[stack] = seen.get(stack, 0) + v
    if seen != want:
        extra = sorted(set(seen) ^ set(want))[:3]
        raise Fail("sampled lines differ from the sampled nodes: %r" % extra)


def folded_time(path, rpath):
    report = load(rpath)
    nodes = nodes_of(report)
    want = {}
    # (a caller whose exits were lost or left out has less time than its
    # callees: its line is left out, and the sum falls short by that)
    negative = 0
    for i, n in nodes.items():
        self = n["total"] + n["open_total"] - sum(
            nodes[c]["total"] + nodes[c]["open_total"] for c in n["children"])
        if self > 0:
            c = chain(nodes, i)
            want[c] = want.get(c, 0) + self
        else:
            negative += self
    seen = {}
    lines = folded_lines(path)
    probed = [(st, v) for st, v in lines if not st.startswith("[sampled];")]
    sampled = [(st[len("[sampled];"):], v) for st, v in lines if st.startswith("[sampled];")]
    if not want:
        probed, sampled = [], lines  # a sampled recording: the stacks alone
    elif not sampled and report.get("sampled"):
        raise Fail("no [sampled] lines, and the recording has sampled stacks")
    folded_sampled(sampled, report)
    for stack, v in probed:
        if stack not in want:
            raise Fail("stack %r is no calling context of the report" % stack)
        seen[stack] = seen.get(stack, 0) + v
    if seen != want:
        raise Fail("values %r, wanted %r" % (seen, want))
    top = sum(n["total"] + n["open_total"] for n in nodes.values() if n["parent"] is None)
    if sum(seen.values()) != top - negative:
        raise Fail("sum %d, outermost nodes' time %d less %d left out below 0" %
                   (sum(seen.values()), top, negative))
    return "ok"


def folded_total(path, rpath, total, what, tol=1e-9):
    nodes = nodes_of(load(rpath))
    contexts = {chain(nodes, i) for i in nodes}
    lines = folded_lines(path)
    for stack, _ in lines:
        if stack not in contexts:
            raise Fail("stack %r is no calling context of the report" % stack)
    s = sum(v for _, v in lines)
    # each line is rounded to a whole unit
    if abs(s - total) > max(tol * abs(total), len(lines)):
        raise Fail("sum %d, wanted %s %.17g" % (s, what, total))
    return "ok"


def folded_variance(path, rpath, errpath=None):
    """With ERR (varperf's standard error), less the shares below 0 that
    its warning says were left out."""
    nodes = nodes_of(load(rpath))
    total, left = 0, 0
    for line in open(errpath) if errpath else ():
        m = re.search(r"folded values? below 0 left out \(([-+0-9.e]+) in all\)", line)
        if m:
            left = float(m.group(1))
    for i, n in nodes.items():
        p = n["parent"]
        while p is not None and not (nodes[p]["count"] > 1 and nodes[p]["variance"] > 0):
            p = nodes[p]["parent"]
        if p is None and n["count"] > 1 and n["variance"] > 0:
            total += n["count"] * n["variance"]
    if left:
        # the warning's three digits
        s = sum(v for _, v in folded_lines(path))
        if abs(s + left - total) > 0.005 * abs(left) + 1e-9 * total:
            raise Fail("sum %d and %g left out, wanted N Var of the tasks %.17g" %
                       (s, left, total))
        return folded_total(path, rpath, s, "N Var of the tasks")
    return folded_total(path, rpath, total, "N Var of the tasks")


def folded_slowest(path, apath, rpath, k, context=None):
    nodes = nodes_of(load(rpath))
    k = int(k)
    calls = slow_calls(xevents(load(apath)), selected(nodes, k, context, True), k)
    total = sum(c[4] - c[3] for c in calls)
    if sum(v for _, v in folded_lines(path)) != total:
        raise Fail("sum %d, the %d slow calls' durations %d" %
                   (sum(v for _, v in folded_lines(path)), len(calls), total))
    return folded_total(path, rpath, total, "the slow calls' time")


def folded_typical(path, rpath, k, context=None):
    nodes = nodes_of(load(rpath))
    k = int(k)
    sel = selected(nodes, k, context, True)
    total = sum(nodes[i]["total"] * min(k, nodes[i]["count"]) / nodes[i]["count"] for i in sel)
    # each line is a node's own time scaled as its selected ancestor's
    # calls; those below 0 (lost or left-out exits) are left out
    scale = {}
    for i in sorted(nodes):
        n = nodes[i]
        if i in sel:
            scale[i] = min(k, n["count"]) / n["count"]
        elif n["parent"] is not None and n["parent"] in scale:
            scale[i] = scale[n["parent"]]
        if i in scale:
            self = n["total"] - sum(nodes[c]["total"] for c in n["children"])
            if self < 0:
                total -= self * scale[i]
    return folded_total(path, rpath, total, "the scaled time")


COMMANDS = {
    "chrome-format": chrome_format,
    "chrome-nodes": chrome_nodes,
    "chrome-nesting": chrome_nesting,
    "chrome-sampled": chrome_sampled,
    "chrome-truth": chrome_truth,
    "chrome-slowest": chrome_slowest,
    "folded-time": folded_time,
    "folded-variance": folded_variance,
    "folded-slowest": folded_slowest,
    "folded-typical": folded_typical,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    try:
        print(COMMANDS[sys.argv[1]](*sys.argv[2:]))
    except Fail as e:
        print(e)
