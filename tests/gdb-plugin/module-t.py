#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# module-t.py - the GDB plugin's Python layer without GDB: the _varperf
# extension (core/ as Python objects) and the pure-Python helpers of the
# varperf package.  It writes data files with core's writer, whose
# statistics it knows exactly, reads them back through _varperf and, when
# $VARPERF is set, checks every number against `varperf report --format
# json`.  Speaks TAP on standard output.
#
# Environment: top_srcdir (the package is in $top_srcdir/gdb-plugin),
# VARPERF_GDB_PLUGIN (directories holding the built _varperf module or its
# .libs), VARPERF (optional: the varperf command).

import errno
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

_count = 0
_failed = 0


def ok(cond, desc, diag=None):
    global _count, _failed
    _count += 1
    if cond:
        print("ok %d - %s" % (_count, desc))
    else:
        _failed += 1
        print("not ok %d - %s" % (_count, desc))
        if diag is not None:
            for line in str(diag).splitlines():
                print("# " + line)


def is_(want, seen, desc):
    ok(want == seen, desc, "wanted: %r\n  seen: %r" % (want, seen))


def close(want, seen, desc, rel=1e-12):
    good = isinstance(seen, float) and abs(seen - want) <= rel * max(abs(want), 1.0)
    ok(good, desc, "wanted: %r (within %g relative)\n  seen: %r" % (want, rel, seen))


def raises(exc, fn, desc):
    try:
        fn()
    except exc as e:
        ok(True, desc)
        return e
    except Exception as e:  # noqa: BLE001 - reported as the failure
        ok(False, desc, "raised %r instead of %s" % (e, exc.__name__))
        return None
    ok(False, desc, "raised nothing")
    return None


top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(top_srcdir, "gdb-plugin"))
if not os.environ.get("VARPERF_GDB_PLUGIN"):
    print("1..0 # SKIP VARPERF_GDB_PLUGIN is not set (the GDB plugin is not built)")
    sys.exit(0)
try:
    import varperf
except ImportError as e:
    print("Bail out! cannot import the varperf package: %s" % e)
    sys.exit(255)

tmp = tempfile.mkdtemp(prefix="varperf-module-t.")

# ---- a recording whose every number we know ----
#
# main (func 0) calls run (1) 40 times from address 0x1050 (line 10); run
# calls work (2) from 0x1150 (line 20) and leaf (3) twice from 0x1160
# (line 21); main also calls work 10 times from 0x1060 (line 11).

FUNCS = [
    {"name": "main", "module": 0, "addr": 0x1000, "size": 0x100},
    {"name": "run", "module": 0, "addr": 0x1100, "size": 0x100},
    {"name": "work", "module": 0, "addr": 0x1200, "size": 0x80},
    {"name": "leaf", "module": 0, "addr": 0x1280, "size": 0x40, "insn_class": 2},
    {"name": "_ZN2ns4idleEi", "display": "ns::idle(int)", "base": "ns::idle(int)",
     "module": 0, "addr": 0x1300, "size": 0x10},
]
# (in-window, full) ns of a probed call of class 1 (emulated)
PROBE_COST = (20, 30)
CALLSITES = [
    dict(flags=varperf._varperf.CS_NONE),
    dict(module=0, offset=0x1050, caller="main+0x50", file="/src/x.c", line=10),
    dict(module=0, offset=0x1150, caller="run+0x50", file="/src/x.c", line=20),
    dict(module=0, offset=0x1160, caller="run+0x60", file="/src/x.c", line=21),
    dict(module=0, offset=0x1060, caller="main+0x60", file="/src/x.c", line=11),
    dict(module=-1, offset=0x2724a, caller="__libc_start_main@@GLIBC_2.34+0xac",
         file="../csu/libc-start.c", line=135),
]


def header():
    return {"pid": 4242, "ncpu": 2, "host": "test-host", "argv": ["/bin/x", "a b"],
            "start_time": 1700000000, "modules": [("/bin/x", bytes.fromhex("c0ffee"))],
            "functions": FUNCS, "probe_costs": [(1,) + PROBE_COST]}


class Sim:
    """Writes nested entry/exit events and keeps each context's durations."""

    def __init__(self, w):
        self.w = w
        self.t = 1000
        self.sp = 0x7fff0000
        self.durs = {}

    def call(self, ctx, func, cs, body):
        # A probed call of class 1 costs what the header's probe_costs
        # say, where the kernel spends it: the in-window part after the
        # entry's timestamp (emulating or single-stepping the probed
        # instruction), the rest after the exit's.
        cost = PROBE_COST if FUNCS[func].get("insn_class", 1) == 1 else (0, 0)
        self.sp -= 0x100
        sp = self.sp
        t0 = self.t
        self.w.event("entry", func, 0, self.t, sp, cs)
        self.spend(cost[0])
        body()
        self.w.event("exit", func, 0, self.t, sp + 8)
        self.durs.setdefault(ctx, []).append(self.t - t0)
        self.spend(cost[1] - cost[0])
        self.sp += 0x100

    def spend(self, ns):
        self.t += ns


def write_main(path, finish=True):
    w = varperf.create(path, header())
    w.thread(0, 4242, 4242)
    for i, cs in enumerate(CALLSITES):
        w.callsite(i, **cs)
    sim = Sim(w)

    def run(i):
        def body():
            sim.spend(7 + i % 3)
            sim.call("main/run/work", 2, 2, lambda: sim.spend(100 + (i * 37) % 200))
            for _ in range(2):
                sim.call("main/run/leaf", 3, 3, lambda: sim.spend(5))
            sim.spend(3)
        return body

    def main_body():
        for i in range(40):
            sim.call("main/run", 1, 1, run(i))
        for i in range(10):
            sim.call("main/work", 2, 4, lambda: sim.spend(50 + 400 * (i == 7)))
    sim.call("main", 0, 5, main_body)
    if finish:
        w.finish(wait_status=0)
    else:
        w.flush()  # what a killed recorder leaves: flushed chunks, no END
        w.abandon()
    return sim.durs


def stats(xs):
    n = len(xs)
    mean = math.fsum(xs) / n
    var = math.fsum((x - mean) ** 2 for x in xs) / n
    return {"count": n, "mean": mean, "variance": var, "stddev": math.sqrt(var),
            "min": min(xs), "max": max(xs), "total": sum(xs)}


path = os.path.join(tmp, "x.data")
durs = write_main(path)
# The simulated durations are the ground truth as written: read them raw
# (the header's probe costs are compared with report's subtraction below).
rec = varperf.load(path, compensate=False)
is_(False, rec.compensated, "compensate=False: durations as written")

# ---- the file ----
is_(path, rec.path, "path")
h = rec.header
is_((4242, 2, "test-host", ["/bin/x", "a b"], 1700000000),
    (h["pid"], h["ncpu"], h["host"], h["argv"], h["start_time"]), "header fields")
is_([{"path": "/bin/x", "build_id": "c0ffee"}], h["modules"], "modules with hex build-id")
is_([(1, 20, 30)], h["probe_costs"], "probe costs")
is_(len(FUNCS), rec.nfuncs, "nfuncs")
is_(len(CALLSITES), rec.ncallsites, "ncallsites")
is_([], rec.warnings, "a complete file has no warnings")
t = rec.totals
is_((91 + 40 * 2, 0, True), (t["invocations"], t["unpaired"], t["complete"]),
    "totals: invocations, unpaired, complete")

# ---- nodes: main, main/run, main/run/work, main/run/leaf, main/work ----
byctx = {}
for nid in range(1, rec.nnodes):
    names = [rec.func(rec.node(p)["func"])["name"] for p in rec.node_path(nid)]
    byctx["/".join(names)] = nid
is_(sorted(durs), sorted(byctx), "one node per calling context")
for ctx, xs in sorted(durs.items()):
    n = rec.node(byctx[ctx])
    want = stats(xs)
    is_((want["count"], want["min"], want["max"], want["total"]),
        (n["count"], n["min"], n["max"], n["total"]), "%s: count, min, max, total" % ctx)
    close(want["mean"], n["mean"], "%s: mean" % ctx)
    close(want["variance"], n["variance"], "%s: population variance" % ctx, 1e-9)
    close(want["stddev"] / want["mean"], n["cov"], "%s: CoV = sigma / mean" % ctx, 1e-9)
run = rec.node(byctx["main/run"])
is_([byctx["main/run/work"], byctx["main/run/leaf"]], run["children"], "run's children")
is_(byctx["main"], run["parent"], "run's parent")
is_(None, rec.node(byctx["main"])["parent"], "a top-level node has no parent")
is_("work@x.c:20", rec.node(byctx["main/run/work"])["label"], "node label as report prints")

# contributors: row sums of the covariance matrix add up to the variance
var, rows = rec.contributors(byctx["main/run"])
close(run["variance"], var, "matrix sum = run's variance", 1e-9)
close(var, math.fsum(v for _, v in rows), "row sums add up to the variance", 1e-9)
is_(byctx["main/run/work"], rows[0][0], "work contributes most to run's variance")
ok(all(abs(rows[i][1]) >= abs(rows[i + 1][1]) for i in range(len(rows) - 1)),
   "contributors sorted by |row sum|")
is_(None, rec.contributors(byctx["main/run/leaf"]), "a leaf has no contributors")
cov = rec.covariance(byctx["main/run"])
close(var, math.fsum(math.fsum(r) for r in cov), "covariance() sums to the variance", 1e-9)
# leaf takes a constant 5 ns: its variable has no variance
is_(0.0, cov[2][2], "constant child: zero variance")

# merged statistics of work over both contexts
m = rec.merge_stats([byctx["main/run/work"], byctx["main/work"]])
want = stats(durs["main/run/work"] + durs["main/work"])
is_((want["count"], want["min"], want["max"], want["total"]),
    (m["count"], m["min"], m["max"], m["total"]), "merge_stats: exact integers")
close(want["variance"], m["variance"], "merge_stats: variance (Chan)", 1e-9)
fs = rec.func_stats(2)
is_((m["count"], 2), (fs["count"], fs["contexts"]), "func_stats: work over 2 contexts")
is_(None, rec.func_stats(4), "never-called function has no statistics")
is_([byctx["main/run/work"], byctx["main/work"]], sorted(rec.nodes_of(2)), "nodes_of(work)")

# ---- functions and call sites by address and name ----
is_(2, rec.func_at(0, 0x1234), "func_at inside work")
is_(None, rec.func_at(0, 0x12c0), "func_at past leaf's end")
is_(None, rec.func_at(1, 0x1234), "func_at in another module")
is_([4], rec.funcs_named("ns::idle"), "C++ display name up to '('")
is_([4], rec.funcs_named("_ZN2ns4idleEi"), "mangled symbol")
is_([], rec.funcs_named("nosuch"), "unknown name")
is_([2], rec.callsites_at(0, 0x1150), "callsites_at by module and offset")
is_([5], rec.callsites_at(None, 0x2724a), "callsites_at in a file that is not a module")
is_([0], rec.callsites_at(None, 0), "the top-of-thread call site")
is_([5], rec.callsites_where(caller="__libc_start_main+0xac"),
    "callsites_where by caller, symbol version ignored")
is_([3], rec.callsites_where(file="x.c", line=21), "callsites_where by file:line")
cs = rec.callsite(2)
is_(("x.c:20", "/src/x.c:20", 0, 0x1150), (cs["label"], cs["where"], cs["module"], cs["offset"]),
    "callsite dict")

# ---- mapping a live chain ----
chain = [([0], [5]), ([1], [1]), ([2], [2])]
is_(byctx["main/run/work"], rec.lookup(chain), "lookup of an exact context")
is_(byctx["main/run"], rec.lookup(chain, 2), "lookup of a prefix")
is_(None, rec.lookup([([0], [5]), ([2], [2])]), "lookup: work at run's call site under main")
is_(byctx["main/work"], rec.lookup([([0], None), ([2], [4])]),
    "lookup with any call site for the outermost frame")
near = rec.nearest([([0], [5]), ([1], [1]), ([2], [4])])
is_((byctx["main/run/work"], 1, ["same", "same", "callsite"]),
    (near["node"], near["cost"], [o[0] for o in near["ops"]]),
    "nearest: same frames, another call site of work")
near = rec.nearest([([0], [5]), ([3], [1]), ([1], [1]), ([2], [2])])
is_((byctx["main/run/work"], ["same", "live", "same", "same"]),
    (near["node"], [o[0] for o in near["ops"]]), "nearest: a frame the recording lacks")
near = rec.nearest([([0], [5]), ([3], [3])])
is_((byctx["main/run/leaf"], ["same", "recorded", "same"]),
    (near["node"], [o[0] for o in near["ops"]]), "nearest: a recorded frame the stack lacks")
is_(None, rec.nearest([([4], [1])]), "nearest: no context of a never-called function")

# ---- patterns ----
pats = rec.patterns()
ok(len(pats) >= 1 and pats[0]["rank"] == 1, "patterns are ranked")
ok(all(pats[i]["vim"] >= pats[i + 1]["vim"] for i in range(len(pats) - 1)),
   "patterns sorted by VIM")
for p in pats:
    want = rec.merge_stats(p["nodes"])
    is_((want["count"], want["total"]), (p["count"], p["total"]),
        "pattern %d: statistics of its nodes" % p["rank"])
    close(rec.params["k"] * p["stddev"] * p["count"], p["vim"], "pattern %d: VIM = k sigma N"
          % p["rank"], 1e-12)
    is_(p, rec.pattern(p["rank"]), "pattern(%d)" % p["rank"])
    for nid in p["nodes"]:
        ok(p["rank"] in rec.node(nid)["patterns"], "node %d knows pattern %d" % (nid, p["rank"]))

# ---- the Variance Characterization Graph ----
g = rec.vcg()
ok(all(g["patterns"][i]["vim"] >= g["patterns"][i + 1]["vim"]
       for i in range(len(g["patterns"]) - 1)), "VCG patterns sorted by VIM")
for vn in g["nodes"]:
    want = rec.merge_stats(vn["cct"])
    is_((want["count"], want["total"]), (vn["count"], vn["total"]),
        "VCG node %d: the statistics of its calling-context nodes" % vn["id"])
    ok(vn["type"] in ("task", "contributor", "contrast"), "VCG node %d has a type"
       % vn["id"], vn["type"])
for sg in g["segments"]:
    ok(0 <= sg["cf"] <= 1.0 + 1e-9, "segment contribution fraction in [0, 1]", sg["cf"])
lines = varperf.vcg_lines(rec, g)
ok(lines[0] == "Variance Characterization Graph (tau_S = 0.4, beta = 0.1):",
   "vcg_lines header", "\n".join(lines))
raises(varperf.Error, lambda: rec.vcg(tau=2.0), "vcg: tau out of range")
# every keyword reaches core/, each alone, all five together and by
# position (the parse format once had four conversions for five
# keywords and read once_probability as an unsigned int)
VCG_KW = dict(tau=0.3, beta=0.2, min_contribution=0.25, once_probability=0.75,
              max_passes=1)
for k, v in VCG_KW.items():
    g1 = rec.vcg(**{k: v})
    is_(v, g1[k], "vcg(%s=%r) reaches core/" % (k, v))
g1 = rec.vcg(**VCG_KW)
is_(VCG_KW, {k: g1[k] for k in VCG_KW}, "vcg: all five keywords at once")
g2 = rec.vcg(*VCG_KW.values())
is_(VCG_KW, {k: g2[k] for k in VCG_KW}, "vcg: all five by position")
ok(g1["passes"] <= 1, "vcg(max_passes=1) makes at most one extra pass", g1["passes"])
is_(0, rec.vcg(max_passes=0)["passes"], "vcg(max_passes=0) makes no extra pass")
for bad, what in ((dict(once_probability=0.4), "once_probability below 0.5"),
                  (dict(once_probability=1.0), "once_probability of 1"),
                  (dict(min_contribution=0.0), "min_contribution of 0"),
                  (dict(max_passes=1001), "max_passes above 1000"),
                  (dict(max_passes=-1), "negative max_passes")):
    e = raises(varperf.Error, lambda: rec.vcg(**bad), "vcg: %s is refused" % what)
    ok(e is not None and e.errno == errno.EINVAL, "vcg: %s is EINVAL" % what, repr(e))
raises(TypeError, lambda: rec.vcg(max_passes=1.5), "vcg: a fractional max_passes")
raises(TypeError, lambda: rec.vcg(sigma=2), "vcg: an unknown keyword")

# ---- the same numbers as varperf report --format json ----
VARPERF = os.environ.get("VARPERF")


def same_as_report(rec, opts, what):
    """Every number of @rec equal to `varperf report --format json @opts`."""
    out = subprocess.run([VARPERF, "report", "-i", path, "--format", "json"] + opts,
                         stdout=subprocess.PIPE, check=False)
    is_(0, out.returncode, "varperf report --format json %s exits 0" % " ".join(opts))
    doc = json.loads(out.stdout) if out.returncode == 0 else {
        "nodes": [], "patterns": [], "parameters": {}, "totals": {}, "compensated": None}
    is_(doc["compensated"], rec.compensated, "%s: compensated as the report says" % what)
    keys = ("count", "mean", "stddev", "variance", "cov", "total", "min", "max", "vim",
            "significant", "high_variance", "children", "percentiles")
    for jn in doc["nodes"]:
        n = rec.node(jn["id"])
        bad = [k for k in keys if jn[k] != n[k]]
        ok(not bad, "%s: node %d: %s equal to the JSON report, bit for bit"
           % (what, jn["id"], ",".join(keys)),
           "differ: %s" % ", ".join("%s %r != %r" % (k, jn[k], n[k]) for k in bad))
        if jn["children_covariance"]:
            ok(jn["children_covariance"]["matrix"] == rec.covariance(jn["id"]),
               "%s: node %d: covariance matrix equal to the JSON report" % (what, jn["id"]))
    for jp in doc["patterns"]:
        p = rec.pattern(jp["rank"])
        bad = [k for k in ("count", "mean", "stddev", "cov", "total", "vim", "vim_share",
                           "in_pattern_set", "nodes") if jp[k] != p[k]]
        ok(not bad, "%s: pattern %d equal to the JSON report" % (what, jp["rank"]),
           ", ".join(bad))
    is_(doc["parameters"].get("k"), rec.params["k"], "%s: Chebyshev k as in the JSON report"
        % what)
    is_(doc["totals"].get("total_time"), rec.totals["total_time"],
        "%s: total time as in the report" % what)
    # formatting: the JSON text itself, number by number
    for jn in doc["nodes"]:
        n = rec.node(jn["id"])
        for k in ("mean", "stddev", "variance", "cov"):
            text = json.dumps(jn[k])
            if varperf.format_exact(n[k]) != text and float(text) != n[k]:
                ok(False, "%s: node %d %s printed as the report prints it" % (what, jn["id"], k))
    ok(True, "%s: format_exact prints every node's numbers as the report does" % what)


if VARPERF and os.access(VARPERF, os.X_OK):
    same_as_report(rec, ["--raw"], "raw")
    crec = varperf.load(path)
    is_(True, crec.compensated, "by default the probe costs are subtracted")
    same_as_report(crec, [], "compensated")
    # main/run/work (class 1) loses its in-window 20 ns per call; main/run
    # its own 20 and work's full 30, and nothing for the leaves (class 2
    # has no calibrated cost); a leaf stays as it is
    for ctx, less in (("main/run/work", 20), ("main/run", 50), ("main/run/leaf", 0)):
        raw_n, comp_n = rec.node(byctx[ctx]), crec.node(byctx[ctx])
        close(raw_n["mean"] - less, comp_n["mean"], "%s: compensated mean is %d ns less"
              % (ctx, less))
else:
    print("ok %d # skip VARPERF is not set: no comparison with varperf report" % (_count + 1))
    _count += 1

# ---- off-CPU times (format version 3) ----
#
# main calls work 6 times from line 11; call i runs 100 + 10 i ns on the
# CPU and is off it for OFF[i] ns in the middle.  No probe costs.
OFF = [0, 500, 0, 2000, 50, 900]
opath = os.path.join(tmp, "offcpu.data")
oh = header()
oh.update(probe_costs=[], backend=varperf._varperf.BACKEND_BPF, offcpu=True)
w = varperf.create(opath, oh)
w.thread(0, 4242, 4242)
for i, cs in enumerate(CALLSITES):
    w.callsite(i, **cs)
t, off = 1000, 7
w.event("entry", 0, 0, t, 0x7000, 5, offcpu=off)
for i, o in enumerate(OFF):
    t += 10
    w.event("entry", 2, 0, t, 0x6f00, 4, offcpu=off)
    t += 50
    off += o
    t += o + 50 + 10 * i
    w.event("exit", 2, 0, t, 0x6f08, offcpu=off)
t += 10
w.event("exit", 0, 0, t, 0x7008, offcpu=off)
w.finish(wait_status=0)
wall = [100 + 10 * i + o for i, o in enumerate(OFF)]
on = [100 + 10 * i for i in range(len(OFF))]
orec = varperf.load(opath)
is_((varperf._varperf.BACKEND_BPF, True, "wall"),
    (orec.header["backend"], orec.header["offcpu"], orec.time), "off-CPU: header and time")
onid = varperf.match_context(orec, [("main", None), ("work", None)])[0]
o = orec.node(onid)["offcpu"]
sw, so = stats(wall), stats(OFF)
cwo = math.fsum((x - sw["mean"]) * (y - so["mean"]) for x, y in zip(wall, OFF)) / len(OFF)
close(sw["mean"], orec.node(onid)["mean"], "off-CPU: wall-clock mean", 1e-12)
close(so["mean"], o["off_mean"], "off-CPU: off-CPU mean", 1e-12)
close(stats(on)["mean"], o["on_mean"], "off-CPU: on-CPU mean", 1e-12)
close(cwo / sw["variance"], o["off_share"], "off-CPU: share Cov(W, O) / Var(W)", 1e-12)
close(1.0, o["off_share"] + o["on_share"], "off-CPU: the shares add up to 1", 1e-12)
lines = varperf.node_lines(orec, onid)
ok(any(line.startswith("  off-CPU   mean ") and "of the wall-clock variance" in line
       for line in lines), "node_lines: the off-CPU line", "\n".join(lines))
# ---- preempted versus blocked (format version 5) ----
#
# The same calls, each asleep in pread64 for BLK[i] ns of its OFF[i]
# (a WAIT record at its wake-up), the rest of it preempted.
BLK = [0, 300, 0, 2000, 0, 100]
bpath = os.path.join(tmp, "blocked.data")
bh = header()
bh.update(probe_costs=[], backend=varperf._varperf.BACKEND_BPF, offcpu=True, blocked=True,
          host="6.18.0 x86_64")
w = varperf.create(bpath, bh)
w.thread(0, 4242, 4242)
for i, cs in enumerate(CALLSITES):
    w.callsite(i, **cs)
t, off = 1000, 7
w.event("entry", 0, 0, t, 0x7000, 5, offcpu=off)
for i, oi in enumerate(OFF):
    t += 10
    w.event("entry", 2, 0, t, 0x6f00, 4, offcpu=off)
    t += 50
    off += oi
    if BLK[i]:
        w.wait(0, t + BLK[i], BLK[i], 17 + 1)
    t += oi + 50 + 10 * i
    w.event("exit", 2, 0, t, 0x6f08, offcpu=off)
t += 10
w.event("exit", 0, 0, t, 0x7008, offcpu=off)
w.finish(wait_status=0)
brec = varperf.load(bpath)
bo = brec.node(varperf.match_context(brec, [("main", None), ("work", None)])[0])["offcpu"]
pre = [oi - b for oi, b in zip(OFF, BLK)]
sb, sp_ = stats(BLK), stats(pre)
cwb = math.fsum((x - sw["mean"]) * (y - sb["mean"]) for x, y in zip(wall, BLK)) / len(OFF)
cwp = math.fsum((x - sw["mean"]) * (y - sp_["mean"]) for x, y in zip(wall, pre)) / len(OFF)
close(sb["mean"], bo.get("blocked_mean"), "blocked: mean of the calls' sleeps", 1e-12)
close(sp_["mean"], bo.get("preempted_mean"), "preempted: mean of the rest", 1e-12)
close(cwb / sw["variance"], bo.get("blocked_share"), "blocked: share Cov(W, B) / Var(W)", 1e-9)
close(cwp / sw["variance"], bo.get("preempted_share"), "preempted: share Cov(W, P) / Var(W)",
      1e-9)
is_([("pread64", 3, sum(BLK))], [(x["reason"], x["count"], x["ns"]) for x in bo.get("waits", [])],
    "waits: pread64, 3 sleeps, all their time")
blines = varperf.node_lines(brec, varperf.match_context(brec, [("main", None),
                                                              ("work", None)])[0])
ok(any(line.startswith("    blocked   mean ") for line in blines) and
   any(line.startswith("    preempted mean ") for line in blines) and
   any(line.startswith("    waits:    pread64 ") and "3x" in line for line in blines),
   "node_lines: the preempted and blocked lines, and the waits", "\n".join(blines))
is_(None, orec.node(onid)["offcpu"].get("blocked_mean"), "a version-3 file: no split")
crec = varperf.load(opath, time="cpu")
is_("cpu", crec.time, "time='cpu'")
close(stats(on)["mean"], crec.node(onid)["mean"], "time='cpu': on-CPU durations", 1e-12)
close(stats(on)["variance"], crec.node(onid)["variance"], "time='cpu': their variance", 1e-9)
close(o["off_share"], crec.node(onid)["offcpu"]["off_share"],
      "time='cpu': the same split of the wall-clock variance", 1e-9)
frec = varperf.load(opath, time="offcpu")
close(so["mean"], frec.node(onid)["mean"], "time='offcpu': off-CPU durations", 1e-12)
is_(None, frec.node(onid)["offcpu"], "time='offcpu': no split")
is_(None, rec.node(byctx["main/run"])["offcpu"], "no off-CPU times: no split")
e = raises(varperf.Error, lambda: varperf.load(path, time="cpu"),
           "time='cpu' without off-CPU times raises varperf.Error")
ok(e is not None and e.errno == errno.ENODATA and e.strerror.startswith("'%s': no off-CPU" % path),
   "ENODATA, and the message names the file", e)
raises(ValueError, lambda: varperf.load(opath, time="user"), "an unknown time base")
if VARPERF and os.access(VARPERF, os.X_OK):
    out = subprocess.run([VARPERF, "report", "-i", opath, "--format", "json"],
                         stdout=subprocess.PIPE, check=False)
    doc = json.loads(out.stdout) if out.returncode == 0 else {"nodes": []}
    jn = [n for n in doc["nodes"] if n["id"] == onid]
    is_(("bpf", "wall"), (doc.get("backend"), doc.get("time")),
        "JSON report: backend and time")
    is_({"mean": o["off_mean"], "stddev": math.sqrt(o["off_variance"]),
         "variance_share": o["off_share"]}, jn[0].get("offcpu") if jn else None,
        "JSON report: the node's offcpu object, bit for bit")
    out = subprocess.run([VARPERF, "report", "-i", path, "--time=cpu"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    ok(out.returncode == 1 and b"'%s': no off-CPU times" % path.encode() in out.stderr,
       "varperf report --time=cpu without off-CPU times: an error naming the file",
       out.stderr)
else:
    for _ in range(3):
        _count += 1
        print("ok %d # skip VARPERF is not set: no comparison with varperf report" % _count)

# ---- imperfect and broken files ----
path2 = os.path.join(tmp, "killed.data")
write_main(path2, finish=False)
r2 = varperf.load(path2, compensate=False)
w = r2.warnings
ok(len(w) == 1 and w[0].startswith("'%s': recording incomplete" % path2),
   "a file without END chunk loads with a warning", w)
is_((False, rec.node(byctx["main/run"])["mean"]),
    (r2.totals["complete"], r2.node(byctx["main/run"])["mean"]), "and with its statistics")
e = raises(OSError, lambda: varperf.load(os.path.join(tmp, "nosuch.data")),
           "a missing file raises an OSError")
ok(isinstance(e, varperf.Error) and e.errno == errno.ENOENT, "varperf.Error with ENOENT", e)
is_("cannot open '%s': No such file or directory" % os.path.join(tmp, "nosuch.data"),
    getattr(e, "strerror", None), "core's message in .strerror")
# A FIFO: opening it for reading once waited for a writer, and GDB with it.
# The alarm turns a hang into a failure (the open is interrupted).
fifo = os.path.join(tmp, "fifo.data")
os.mkfifo(fifo)


def _blocked(signum, frame):
    raise TimeoutError("varperf.load() blocked on a FIFO")


old_alarm = signal.signal(signal.SIGALRM, _blocked)
signal.alarm(20)
e = raises(varperf.Error, lambda: varperf.load(fifo), "a FIFO raises varperf.Error at once")
signal.alarm(0)
signal.signal(signal.SIGALRM, old_alarm)
is_("'%s' is not a regular file" % fifo, getattr(e, "strerror", None),
    "core's message: not a regular file")
ok(e is not None and e.errno == errno.EINVAL, "varperf.Error with EINVAL", e)
# The tree's budget (report's --max-memory): past it, an error, not GDB's
# memory; the default of 1 GiB loads the file.
e = raises(varperf.Error, lambda: varperf.load(path, max_memory=1024),
           "a tree over max_memory raises varperf.Error")
is_("'%s': analysing it would take more than max_memory allows (1024 bytes)" % path,
    getattr(e, "strerror", None), "and says so")
ok(e is not None and e.errno == errno.E2BIG, "varperf.Error with E2BIG", e)
ok(varperf.load(path, max_memory=0).nnodes == rec.nnodes, "max_memory=0: no limit")
bad = os.path.join(tmp, "bad.data")
with open(bad, "wb") as f:
    f.write(b"not a data file at all\n")
e = raises(varperf.Error, lambda: varperf.load(bad), "garbage raises varperf.Error")
is_("'%s': offset 0: not a varperf data file (bad magic)" % bad, getattr(e, "strerror", None),
    "bad magic message")
is_(bad, getattr(e, "filename", None), ".filename")
corrupt = os.path.join(tmp, "corrupt.data")
with open(path, "rb") as f:
    data = bytearray(f.read())
data[-30] ^= 0xff  # inside the last chunk: its CRC fails
with open(corrupt, "wb") as f:
    f.write(data)
e = raises(varperf.Error, lambda: varperf.load(corrupt), "a flipped byte raises varperf.Error")
ok(e is not None and "offset" in e.strerror and e.errno == errno.EBADMSG,
   "the message names the offset, errno EBADMSG", e)
e = raises(varperf.Error, lambda: varperf.load(path, probability=1.5),
           "bad analysis parameters raise varperf.Error")
ok(e is not None and e.strerror.startswith("invalid analysis parameters"), "and say so", e)
raises(TypeError, lambda: varperf.Recording(), "Recording cannot be made directly")
raises(IndexError, lambda: rec.node(0), "node 0 (the root) is not a node")
raises(IndexError, lambda: rec.node(rec.nnodes), "node ids are checked")
raises(IndexError, lambda: rec.func(rec.nfuncs), "function ids are checked")
raises(TypeError, lambda: rec.lookup([(1, 2, 3)]), "a malformed chain is a TypeError")

# ---- pure-Python helpers ----
is_(["999 ns", "1.00 us", "12.3 us", "456 us", "4.56 ms", "1.20 s"],
    [varperf.format_duration(x) for x in (999, 1000, 12345, 456000, 4.56e6, 1.2e9)],
    "format_duration as fmt_duration")
is_(["1", "0.1", "603423.816", "216478725", "null", "7"],
    [varperf.format_exact(x) for x in (1.0, 0.1, 603423.816, 216478725.0, float("nan"), 7)],
    "format_exact as report-json.c")
is_([2e6, 1.5e9, 300e3, 250000.0, 42.0, 5e3],
    [varperf.parse_duration(x) for x in ("2ms", "1.5 s", "300us", "250000ns", "42", "5\u00b5s")],
    "parse_duration")
raises(ValueError, lambda: varperf.parse_duration("fast"), "parse_duration rejects words")
raises(ValueError, lambda: varperf.parse_duration("-1ms"), "parse_duration rejects <= 0")
is_([0.99, 0.99, 0.5], [varperf.parse_fraction(x) for x in ("0.99", "99%", "50")],
    "parse_fraction")
raises(ValueError, lambda: varperf.parse_fraction("100%"), "percentile 100% is refused")
close(10.0, varperf.chebyshev_k(0.99), "Chebyshev k for 99% is 10")
st = {"count": 10, "mean": 100.0, "stddev": 20.0, "max": 150}
is_(160.0, varperf.threshold(st, sigma=3).ns, "threshold: mean + 3 sigma")
close(300.0, varperf.threshold(st, chebyshev=0.99).ns,
      "threshold: Chebyshev 99% = mean + 10 sigma")
is_(5e6, varperf.threshold(None, slower_than=5e6).ns, "threshold: fixed without statistics")
raises(ValueError, lambda: varperf.threshold({"count": 3, "mean": 1.0, "stddev": 0.0}, sigma=3),
       "threshold: no variance, no sigma threshold")
is_([("main", None), ("frame", 148), ("step", None)],
    varperf.parse_context("main/frame:148/step"), "parse_context")
is_([("ns::f(int)", None)], varperf.parse_context("ns::f(int)"), "parse_context keeps C++ names")
is_([byctx["main/run/work"]], varperf.match_context(rec, [("run", None), ("work", None)]),
    "match_context: run/work")
is_([byctx["main/work"]], varperf.match_context(rec, [("main", None), ("work", 11)]),
    "match_context: the call-site line selects a context")
is_(sorted(rec.nodes_of(2)), varperf.match_context(rec, [("work", None)]),
    "match_context: a function alone matches all its contexts")
lines = varperf.node_lines(rec, byctx["main/run"], raw=True)
ok(any(line.split()[:2] == ["mean", varperf.format_exact(run["mean"])] for line in lines),
   "node_lines raw: the exact mean", "\n".join(lines))
ok(any("work@x.c:20" in line for line in lines), "node_lines lists the contributors",
   "\n".join(lines))
lines = varperf.pattern_lines(rec)
ok(lines[0].startswith("Pattern Set (VIM >= 10% of max; k = 5.0)"), "pattern_lines header",
   "\n".join(lines))

# ---- distributions: percentiles, histogram, path fraction, slowest calls ----
#
# main calls f 200 times; call i of f spins F[i] ns itself and, when i % 5
# is 0 or 1 (80 of the 200 calls), calls g, twice when i % 5 is 0, each
# call of g spinning G[i] ns.  Durations spread over three decades.


def nearest_rank(xs, q):
    xs = sorted(xs)
    r = max(1, math.ceil(q * len(xs)))
    return xs[r - 1]


dpath = os.path.join(tmp, "dist.data")
dh = header()
dh.update(probe_costs=[])
w = varperf.create(dpath, dh)
w.thread(0, 4243, 4242)
for i, cs in enumerate(CALLSITES):
    w.callsite(i, **cs)
F = [1000 + (i * 7919) % 50000 + (900000 if i % 37 == 5 else 0) for i in range(200)]
G = [300 + (i * 104729) % 20000 for i in range(200)]
t = 5000
w.event("entry", 0, 0, t, 0x7000, 5)
fdur, gdur, fparts = [], [], []
for i in range(200):
    t += 11
    t0 = t
    w.event("entry", 1, 0, t, 0x6f00, 1)
    t += F[i] // 2
    ing = 0
    for _ in range({0: 2, 1: 1}.get(i % 5, 0)):
        w.event("entry", 2, 0, t, 0x6e00, 2)
        t += G[i]
        w.event("exit", 2, 0, t, 0x6e08)
        gdur.append(G[i])
        ing += G[i]
    t += F[i] - F[i] // 2
    w.event("exit", 1, 0, t, 0x6f08)
    fdur.append((t0, t - t0, ing))
w.event("exit", 0, 0, t + 5, 0x7008)
w.finish(wait_status=0)
drec = varperf.load(dpath)
fid = varperf.match_context(drec, [("main", None), ("run", None)])[0]
gid = varperf.match_context(drec, [("run", None), ("work", None)])[0]
fn, gn = drec.node(fid), drec.node(gid)
fd = [d for _, d, _ in fdur]
eps = varperf._varperf.HIST_REL_ERROR
is_(0.0078125, eps, "the histogram's relative error is 1/128")
for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999)):
    want = nearest_rank(fd, q)
    ok(abs(fn["percentiles"][key] - want) <= eps * want,
       "node(): %s within 1/128 of the exact nearest rank" % key,
       "wanted %d, seen %d" % (want, fn["percentiles"][key]))
is_(max(fd), fn["percentiles"]["max"], "node(): percentiles' max is exact")
is_([min(fd), max(fd)], drec.quantiles(fid, [0, 1]), "quantiles(): exact at 0 and 1")
both = fd + gdur
got = drec.quantiles([fid, gid], [0.25, 0.5, 0.99])
ok(all(abs(g - nearest_rank(both, q)) <= eps * nearest_rank(both, q)
       for g, q in zip(got, (0.25, 0.5, 0.99))),
   "quantiles() of two nodes: of their merged durations", got)
h = drec.histogram(fid)
is_(200, sum(c for _, _, c, _ in h), "histogram(): every call counted")
ok(all(lo <= hi and varperf._varperf.hist_bucket_range(b) == (lo, hi) for lo, hi, _, b in h),
   "histogram(): (lo, hi, count, bucket) with the bucket's range")
want = {}
for d in fd:
    b = varperf._varperf.hist_bucket(d)
    want[b] = want.get(b, 0) + 1
is_(want, {b: c for _, _, c, b in h}, "histogram(): each duration in its bucket")
is_(sum(c for _, _, c, _ in drec.histogram([fid, gid])), 200 + len(gdur),
    "histogram() of two nodes: merged")
raises(ValueError, lambda: drec.quantiles(fid, [1.5]), "quantiles(): q above 1 is refused")
raises(IndexError, lambda: drec.histogram([fid, drec.nnodes]), "histogram(): node ids checked")
raises(TypeError, lambda: drec.quantiles(fid, 0.5), "quantiles(): q must be a sequence")
is_((80, 0.4), (gn["path_calls"], gn["path_fraction"]),
    "path fraction: g runs in 80 of f's 200 calls (twice in 40 of them)")
is_((None, 1), (drec.node(fn["parent"])["path_fraction"], fn["path_calls"]),
    "path fraction: None at the top; f runs in main's one call")
slow = drec.slowest(fid)
keep = sorted(sorted(fdur, key=lambda x: (-x[1], x[0]))[:varperf._varperf.SLOWEST_DEFAULT])
is_([(s0, d) for s0, d, _ in keep], [(c["start"], c["duration"]) for c in slow],
    "slowest(): the 16 largest durations, by start")
is_([d for _, d, _ in keep], [sum(p[1] for p in c["parts"]) for c in slow],
    "slowest(): each call's parts add up to its duration")
is_([ing for _, _, ing in keep], [sum(p[1] for p in c["parts"] if p[0] == gid) for c in slow],
    "slowest(): the part of g is that call's own time in g")
is_((4243, 4242, 0), (slow[0]["thread"], slow[0]["pid"], slow[0]["thread_index"]),
    "slowest(): thread id, process id, thread index")
is_(slow[0]["start"] - 5000, slow[0]["offset"], "slowest(): offset since the first event")
is_([], drec.slowest(gid)[:0], "slowest() of a leaf works")
# what the GDB commands print
lines = varperf.node_lines(drec, fid, raw=True)
for key, label in (("p50", "p50"), ("p99_9", "p99.9")):
    ok(any(line.split()[:2] == [label, str(fn["percentiles"][key])] for line in lines),
       "node_lines raw: the exact %s" % label, "\n".join(lines))
ok(any("work@x.c:20  (runs in 80 of 200 calls, 0.4)" in line for line in lines),
   "node_lines: the callee's path fraction", "\n".join(lines))
lines = varperf.node_lines(drec, gid)
ok("  path      runs in 80 of 200 calls of run, 40.0%" in lines, "node_lines: its own path",
   "\n".join(lines))
lines = varperf.histogram_lines(drec, fid, width=72)
rows = lines[2:]
is_(200, sum(int(r.split()[5]) for r in rows), "histogram_lines: the rows count every call")
ok(1 < len(rows) <= 24, "histogram_lines: at most 24 rows", len(rows))
ok(all(len(r) <= 72 for r in lines), "histogram_lines: fits the width", "\n".join(lines))
p99row = [r for r in rows if r.endswith("p99") or " p99" in r]
lo, hi = (varperf.parse_duration(x) for x in (" ".join(p99row[0].split()[0:2]),
                                               " ".join(p99row[0].split()[3:5])))
ok(len(p99row) == 1 and lo * (1 - 0.01) <= fn["percentiles"]["p99"] <= hi * (1 + 0.01),
   "histogram_lines: the p99 row holds the p99", "\n".join(lines))
lines = varperf.slowest_lines(drec, fid)
is_(17, len(lines), "slowest_lines: a title and 16 calls")

# More children than a node's covariance tracks (256, cct.h): the others
# are one variable, which contributors() names "(N other callees)" and
# covariance() has last.  gen-crafted's wide-var: 200 invocations of
# main calling work from 2000 call sites.
gen = os.path.join(os.environ.get("top_builddir", "."), "tests/perf-collector/gen-crafted")
wide = os.path.join(tmp, "wide.data")
subprocess.run([gen, "wide-var", "2000", wide], check=True)
wrec = varperf.load(wide)
wmain = [i for i in range(1, wrec.nnodes) if wrec.node(i)["parent"] is None][0]
var, rows = wrec.contributors(wmain)
is_(258, len(rows), "2000 callees: 258 contributors (self, 256 callees, the others)")
is_(["(1744 other callees)"], [c for c, _ in rows if isinstance(c, str)],
    "the other 1744 callees are one contributor, named")
close(wrec.node(wmain)["variance"], var, "2000 callees: the matrix sums to the variance", 1e-9)
close(var, math.fsum(v for _, v in rows), "2000 callees: the row sums add up to it", 1e-9)
wcov = wrec.covariance(wmain)
close(dict((c, v) for c, v in rows if isinstance(c, str))["(1744 other callees)"],
      math.fsum(wcov[257]), "covariance(): the other callees' row is the last", 1e-9)
lines = varperf.contributor_lines(wrec, wmain, count=3)
ok(any(line.endswith("%  (1744 other callees)") for line in lines),
   "contributor_lines names the other callees", "\n".join(lines))

# ---- term_text: util/escape.h's rule, for the plugin's output ----
is_("new?line?tab?cr?[31mred", varperf.term_text("new\nline\ttab\rcr\x1b[31mred"),
    "term_text: newline, tab, CR and ESC as '?'")
is_("del? csi?2J c1??", varperf.term_text("del\x7f csi\x9b2J c1\x80\x9f"),
    "term_text: DEL and C1 (CSI) as '?'")
bad = b"bad\xff\xc3\x28end".decode("utf-8", "replace")
is_("bad??(end", varperf.term_text(bad), "term_text: invalid UTF-8 (decoded as U+FFFD) as '?'")
is_("raw??", varperf.term_text(b"raw\xfe\xff".decode("utf-8", "surrogateescape")),
    "term_text: a file name's undecodable bytes (lone surrogates) as '?'")
is_("main \u2192 caf\u00e9 \u00a0q\"'%s", varperf.term_text("main \u2192 caf\u00e9 \u00a0q\"'%s"),
    "term_text: printable characters pass")

shutil.rmtree(tmp)
print("1..%d" % _count)
sys.exit(1 if _failed else 0)
