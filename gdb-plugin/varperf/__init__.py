# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf - varperf recordings from Python, for the GDB plugin and scripts.

The C extension _varperf does the work (it is varperf's core/ library:
data file reader, calling-context tree, statistics, covariance and the
pattern analysis); this package finds it and adds what both GDB and plain
Python need: formatting as `varperf report` prints, thresholds for slow
invocations, calling-context specifications, and running the varperf
program (find_program(), RecordProcess: `varperf record -p PID`).
Nothing here imports gdb.
"""

import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading


def _import_extension():
    """Import _varperf from sys.path, from next to this package, or from
    the directories in $VARPERF_GDB_PLUGIN (and their .libs, where libtool
    leaves the module in a build tree)."""
    try:
        import _varperf
        return _varperf
    except ImportError:
        pass
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [d for d in os.environ.get("VARPERF_GDB_PLUGIN", "").split(":") if d]
    dirs.append(here)
    for d in dirs:
        for sub in (d, os.path.join(d, ".libs")):
            if os.path.isdir(sub) and sub not in sys.path:
                sys.path.append(sub)
    import _varperf
    return _varperf


_varperf = _import_extension()

Error = _varperf.Error
Recording = _varperf.Recording
Writer = _varperf.Writer
create = _varperf.create

UNIT_NS = _varperf.UNIT_NS

__all__ = [
    "Error", "Recording", "Writer", "create", "load", "format_duration", "format_exact",
    "format_time", "parse_duration", "parse_fraction", "chebyshev_k", "Threshold",
    "threshold", "parse_context", "match_context", "chain_label", "node_lines",
    "pattern_lines", "function_lines", "vcg_lines", "offcpu_lines", "percentile_name",
    "path_text", "histogram_lines", "slowest_lines",
    "TIME_NAMES", "find_program",
    "has_build_option", "RecordProcess",
]


def load(path, compensate=True, time="wall", **params):
    """Read, build and analyse a data file (see _varperf.open); raises
    Error.  With @compensate (the default) the calibrated probe costs are
    subtracted from the durations as `varperf report` does; False is its
    --raw: durations as measured.  @time is its --time: "wall", "cpu" (on-CPU
    time only), "offcpu" (off-CPU time only), "blocked", "preempted" (its two
    parts) or "own" (wall-clock time less preemption); all but "wall" need
    a file with off-CPU times, the last three one of version 5."""
    return _varperf.open(path, compensate=compensate, time=time, **params)


# What Recording.time says the durations measure.
TIME_NAMES = {"wall": "wall-clock", "cpu": "on-CPU", "offcpu": "off-CPU",
              "blocked": "blocked", "preempted": "preempted",
              "own": "own (wall-clock less preemption)"}


# ---- the varperf program ----

def _executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_program():
    """The varperf program to run: $VARPERF when it is executable (`varperf
    gdb` sets it to itself), else the varperf next to this package (a build
    tree: gdb-plugin/../cli/varperf, also from the directories of
    $VARPERF_GDB_PLUGIN; installed: PREFIX/lib/varperf/gdb ->
    PREFIX/bin/varperf, or a libdir one level deeper), else varperf from
    PATH.  None when there is none."""
    env = os.environ.get("VARPERF")
    if _executable(env):
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [root] + [d for d in os.environ.get("VARPERF_GDB_PLUGIN", "").split(":") if d]
    cands = [os.path.join(d, os.pardir, "cli", "varperf") for d in dirs]
    for up in (3, 4):
        cands.append(os.path.join(root, *([os.pardir] * up), "bin", "varperf"))
    for c in cands:
        if _executable(c):
            return os.path.normpath(c)
    return shutil.which("varperf")


_build_options = {}


def has_build_option(program, name):
    """Whether `PROGRAM version --build-options` says "NAME: on" (asked once
    per program)."""
    if program not in _build_options:
        try:
            out = subprocess.run([program, "version", "--build-options"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 timeout=30, check=False).stdout
            _build_options[program] = dict(
                (k.strip(), v.strip()) for k, sep, v in
                (line.partition(":") for line in out.decode("utf-8", "replace").splitlines())
                if sep)
        except (OSError, subprocess.SubprocessError):
            _build_options[program] = {}
    return _build_options[program].get(name) == "on"


class RecordProcess:
    """`varperf record -p PID ARGS...` attached to a running process, run in
    a session of its own (a terminal's Ctrl-C does not reach it) with its
    output collected by a thread.  Its lines are taken with take_lines();
    attached is set once it said it is recording, ended once its output
    is closed (it exited).  @on_end, when given, is called (from the
    reading thread) when its output ends."""

    def __init__(self, program, pid, args, on_end=None):
        self.pid = pid
        self.argv = [program, "record", "-p", str(pid)] + list(args)
        self._lines = []
        self._lock = threading.Lock()
        self._re = re.compile(r"^varperf: attached to process %d\b" % pid)
        self.attached = threading.Event()
        self.ended = threading.Event()
        self._on_end = on_end
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, name="varperf-record-output",
                                        daemon=True)
        self._reader.start()

    def _read(self):
        try:
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                with self._lock:
                    self._lines.append(line)
                if self._re.match(line):
                    self.attached.set()
        except (OSError, ValueError):
            pass
        finally:
            self.ended.set()
            if self._on_end is not None:
                self._on_end()

    def take_lines(self):
        """The lines it printed since the last call."""
        with self._lock:
            lines, self._lines = self._lines, []
        return lines

    def poll(self):
        """Its exit status (negative: killed by that signal), None while it runs."""
        return self.proc.poll()

    def interrupt(self):
        """Send it SIGINT, which ends the recording (unless it has ended)."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except OSError:
                pass

    def kill(self):
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def wait(self, timeout):
        """Its exit status once it has exited and closed its output, or None
        after @timeout seconds."""
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.ended.wait(2.0)
        return status

    @staticmethod
    def error_of(lines):
        """The message of the first "varperf: error: ..." line, or None."""
        for line in lines:
            if line.startswith("varperf: error: "):
                return line[len("varperf: error: "):]
        return None


# ---- numbers ----

# The terminal rule of util/escape.h: the controls C0 (newline, ESC, ...),
# DEL and C1 (CSI, ...) print as '?', and so does what was no valid UTF-8
# (decoded as U+FFFD, or from file names as lone surrogates), so that a
# name from the recording cannot split a line or drive the terminal.
_TERM_UNSAFE = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0), 0xFFFD, *range(0xD800, 0xE000)],
                             "?")


def term_text(s):
    """@s as a terminal shows it as text (the rule of util/escape.h)."""
    return s.translate(_TERM_UNSAFE)


def format_duration(ns):
    """ns in human units with three significant digits, as varperf's
    fmt_duration(): "12.3 us", "4.56 ms", "1.20 s"."""
    units = ((1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s"))
    i = 0
    while i + 1 < len(units) and abs(ns) >= units[i + 1][0]:
        i += 1
    v = ns / units[i][0]
    if abs(v) >= 100 or i == 0:
        return "%.0f %s" % (v, units[i][1])
    if abs(v) >= 10:
        return "%.1f %s" % (v, units[i][1])
    return "%.2f %s" % (v, units[i][1])


def format_exact(v):
    """A number as `varperf report --format json` writes it: integers as
    they are, doubles as the shortest of %.15g..%.17g that reads back
    exactly; "null" for None or a non-finite value."""
    if v is None:
        return "null"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    v = float(v)
    if not math.isfinite(v):
        return "null"
    for prec in (15, 16, 17):
        s = "%.*g" % (prec, v)
        if float(s) == v:
            break
    return s


def format_time(rec, v, raw=False):
    """A time in the recording's unit: exact with @raw (and the unit's
    name), else human units."""
    if raw:
        unit = "cycles" if rec is not None and rec.header["unit"] != UNIT_NS else "ns"
        return "%s %s" % (format_exact(v), unit)
    if rec is None or rec.header["unit"] == UNIT_NS:
        return format_duration(v)
    return "%.3g cyc" % v


def parse_duration(text):
    """ "2ms", "1.5 s", "300us", "250000ns" or a bare number of ns -> ns.
    Raises ValueError with a message naming what was wrong."""
    s = text.strip().lower().replace("\u00b5", "u").replace("\u03bc", "u")
    scale = 1.0
    for suffix, mult in (("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)):
        if s.endswith(suffix):
            s = s[:-len(suffix)].strip()
            scale = mult
            break
    try:
        v = float(s)
    except ValueError:
        raise ValueError("invalid duration '%s': expected a number with ns, us, ms or s"
                         % text) from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError("invalid duration '%s': must be greater than 0" % text)
    return v * scale


def parse_fraction(text, what="value"):
    """ "0.99", "99%" or "99" (a number above 1 is a percentage) -> 0.99."""
    s = text.strip()
    pct = s.endswith("%")
    try:
        v = float(s[:-1] if pct else s)
    except ValueError:
        raise ValueError("invalid %s '%s': expected a probability such as 0.99 or 99%%"
                         % (what, text)) from None
    if pct or v > 1:
        v /= 100.0
    if not math.isfinite(v) or not 0 < v < 1:
        raise ValueError("invalid %s '%s': must be between 0 and 1 (0%% and 100%%), "
                         "both excluded" % (what, text))
    return v


def chebyshev_k(p):
    """k with P(X >= mean + k sigma) <= 1 - p for any distribution:
    Chebyshev's (one-sided, loose) bound 1/k^2 = 1 - p."""
    return 1.0 / math.sqrt(1.0 - p)


class Threshold:
    """A duration above which an invocation counts as slow, and why."""

    def __init__(self, ns, how, stats=None, k=None, percentile=None, hist=None):
        self.ns = ns
        self.how = how      # "mean + 3 sigma", "the measured p99", "fixed", ...
        self.stats = stats  # statistics it was computed from, or None
        self.k = k
        self.percentile = percentile  # measured percentile (0.99), or None
        self.hist = hist    # the recorded histogram [(lo, hi, count, bucket)], or None

    def sigmas(self, ns):
        """How many standard deviations @ns lies above the recorded mean."""
        if not self.stats or not self.stats["stddev"] > 0:
            return None
        return (ns - self.stats["mean"]) / self.stats["stddev"]

    def faster(self, ns):
        """The fraction of the recorded calls that certainly took less
        than @ns (their whole bucket is below it), or None."""
        if not self.hist:
            return None
        total = sum(b[2] for b in self.hist)
        return sum(b[2] for b in self.hist if b[1] < ns) / total if total else None


def percentile_name(p):
    """0.99 -> "p99", 0.999 -> "p99.9", as the reports name them."""
    return "p%s" % ("%.10g" % (100.0 * p))


def threshold(stats, sigma=None, percentile=None, slower_than=None, chebyshev=None, rec=None,
              nodes=None):
    """The threshold of `varperf break`: mean + sigma * stddev; the
    measured @percentile p of the recorded durations of @nodes of @rec
    (nearest rank from their histogram, as `varperf report --format json`'s
    percentiles); the Chebyshev bound mean + stddev/sqrt(1 - p) for
    @chebyshev p; or a fixed duration in ns.  @stats may be None only
    with @slower_than."""
    if slower_than is not None:
        return Threshold(slower_than, "fixed", stats)
    if not stats or not stats["count"]:
        raise ValueError("no invocations were recorded")
    if percentile is not None:
        q, = rec.quantiles(nodes, [percentile])
        hist = rec.histogram(nodes)
        return Threshold(q, "the measured %s" % percentile_name(percentile), stats,
                         percentile=percentile, hist=hist)
    if not stats["stddev"] > 0:
        raise ValueError("the recorded durations do not vary (%d invocation%s); "
                         "use --slower-than or --percentile" % (
                             stats["count"], "" if stats["count"] == 1 else "s"))
    if chebyshev is not None:
        k = chebyshev_k(chebyshev)
        how = "mean + %s sigma (Chebyshev bound for %s%%)" % (
            "%.3g" % k, "%.10g" % (100 * chebyshev))
    else:
        k = sigma
        how = "mean + %s sigma" % ("%.10g" % k)
    return Threshold(stats["mean"] + k * stats["stddev"], how, stats, k)


# ---- calling contexts ----

def parse_context(text):
    """ "main/frame/step" or "main/frame:148/step" -> [(name, line or None)]:
    a calling context, outermost first; FUNC:LINE also requires the line of
    the call site (the line in the caller that made the call)."""
    elems = []
    for part in text.split("/"):
        part = part.strip()
        if not part:
            raise ValueError("invalid context '%s': an empty function name" % text)
        name, line = part, None
        head, sep, tail = part.rpartition(":")
        if sep and tail.isdigit() and head and not head.endswith(":"):
            name, line = head, int(tail)
        elems.append((name, line))
    return elems


def _elem_matches(rec, node, name, line):
    f = rec.func(node["func"])
    if name not in (f["name"], f["display"], f["base"]) and \
            not f["display"].startswith(name + "("):
        return False
    if line is None:
        return True
    if node["callsite"] is None:
        return False
    return rec.callsite(node["callsite"])["line"] == line


def match_context(rec, elems):
    """Nodes whose context ends with @elems (parse_context()), innermost
    element = the node's function; a leading "" anchors nothing: a context
    matches the end of a node's path, as check-json.py's CHAIN does."""
    name, line = elems[-1]
    funcs = rec.funcs_named(name)
    found = []
    for f in funcs:
        for nid in rec.nodes_of(f):
            node = rec.node(nid)
            ok = True
            for ename, eline in reversed(elems):
                if node is None or not _elem_matches(rec, node, ename, eline):
                    ok = False
                    break
                node = rec.node(node["parent"]) if node["parent"] is not None else None
            if ok:
                found.append(nid)
    return sorted(set(found))


def chain_label(rec, nodes=None, chain=None, collapse=False, sep=" \u2192 "):
    """ "main [x.c:3] → f [x.c:9]" for a list of node ids or of pattern
    (func, callsite) pairs, outermost first, as varperf report prints.
    With @collapse, a run of three or more equal elements (recursion) is
    written once with its count: "rec [r.c:7] ×98"."""
    parts = []
    if chain is None:
        chain = [(rec.node(n)["func"], rec.node(n)["callsite"]) for n in nodes]
    for func, cs in chain:
        label = rec.func(func)["display"]
        where = rec.callsite(cs)["label"] if cs is not None else ""
        parts.append("%s [%s]" % (label, where) if where else label)
    if collapse:
        runs = []
        for p in parts:
            if runs and runs[-1][0] == p:
                runs[-1][1] += 1
            else:
                runs.append([p, 1])
        parts = []
        for p, k in runs:
            parts.extend([p] * k if k < 3 else ["%s \u00d7%d" % (p, k)])
    return sep.join(parts)


def _pct(part, whole):
    """@part in % of @whole without printing rounding noise as -0.0."""
    pct = 100.0 * part / whole
    return 0.0 if abs(pct) < 0.05 else pct


def node_lines(rec, nid, raw=False, contributors=5):
    """The statistics of node @nid as lines of text: N, mean, sigma, CoV,
    min, max, total, its patterns and the children that contribute most to
    its variance (row sums of its covariance matrix over the variance).
    With @raw, every number exactly as `varperf report --format json`."""
    n = rec.node(nid)
    p = rec.params
    t = lambda v: format_time(rec, v, raw)
    num = (lambda v: format_exact(v)) if raw else (lambda v: "%.3f" % v)
    lines = []
    add = lines.append
    add("  calls     %d" % n["count"])
    if rec.time != "wall":
        add("  time      %s only (loaded with --time=%s)" % (TIME_NAMES[rec.time], rec.time))
    if not n["count"]:
        add("  (no completed invocation: %d unpaired)" % n["unpaired"])
        return lines
    add("  mean      %s" % t(n["mean"]))
    add("  sigma     %s" % t(n["stddev"]))
    if raw:
        add("  variance  %s" % format_exact(n["variance"]))
    flag = "high variance" if n["high_variance"] else (
        "significant" if n["significant"] else "not significant")
    cmp = ">=" if n["cov"] >= p["cov_threshold"] else "<"
    add("  CoV       %s  (%s; CoV %s %s)" % (num(n["cov"]), flag, cmp,
                                           "%.3g" % p["cov_threshold"]))
    add("  min       %s" % t(n["min"]))
    ps = n.get("percentiles") or {}
    for key, label in (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9")):
        if key in ps:
            add("  %-9s %s" % (label, t(ps[key])))
    add("  max       %s" % t(n["max"]))
    path = path_text(rec, n, raw)
    if path:
        add("  path      %s" % path)
    lines.extend(offcpu_lines(rec, n, raw))
    share = format_exact(n["share"]) if raw else "%.1f%%" % (100.0 * n["share"])
    add("  total     %s, %s of the recorded time" % (t(n["total"]), share))
    if n["unpaired"]:
        add("  unpaired  %d invocations without a return (not in these statistics)"
            % n["unpaired"])
    add("  VIM       %s  (k sigma N, k = %s)" % (t(n["vim"]), "%.3g" % p["k"]))
    if n["patterns"]:
        for rank in n["patterns"]:
            pat = rec.pattern(rank)
            share = format_exact(pat["vim_share"]) if raw else \
                "%.1f%%" % (100.0 * pat["vim_share"])
            add("  pattern   rank %d of %d, %s (VIM %s, %s of the largest)" % (
                rank, rec.npatterns,
                "in the Pattern Set" if pat["in_pattern_set"] else "not in the Pattern Set",
                t(pat["vim"]), share))
    elif n["high_variance"]:
        add("  pattern   none")
    else:
        add("  pattern   none of the %d (only high-variance contexts make patterns)"
            % rec.npatterns)
    lines.extend(contributor_lines(rec, nid, raw, contributors))
    slow = rec.slowest(nid)
    if slow:
        c = max(slow, key=lambda c: (c["duration"], -c["start"]))
        add("  slowest   %s%s%s" % (t(c["duration"]), _when(rec, c, raw),
                                      _split_text(rec, c, raw, 1)))
    return lines


def path_text(rec, n, raw=False):
    """How often @n's caller takes the path to @n: "runs in 21 of 72 calls
    of its caller, 29.2%" (None for a top-level context)."""
    if n["path_fraction"] is None:
        return None
    parent = rec.node(n["parent"])
    share = format_exact(n["path_fraction"]) if raw else "%.1f%%" % (100.0 * n["path_fraction"])
    return "runs in %d of %d calls of %s, %s" % (
        n["path_calls"], parent["count"], rec.func(parent["func"])["display"], share)


def _when(rec, c, raw):
    """ " at +1.23 s on thread 4242" of a slow call (since the recording's
    first event)."""
    at = "" if c["offset"] is None else " at +%s" % format_time(rec, c["offset"], raw)
    return "%s on thread %s" % (at, "?" if c["thread"] is None else c["thread"])


def _part_label(rec, who, nid):
    if who is None:
        return "its own code"
    if isinstance(who, str):
        return who
    return rec.node(who)["label"]


def _split_text(rec, c, raw, count=3):
    """ ", 6.90 ms of it in fallbackSort@blocksort.c:1034" - where the most
    of slow call @c's time went (its @count largest parts)."""
    parts = sorted(c["parts"], key=lambda p: -p[1])[:count]
    if not parts:
        return ""
    return ", " + ", ".join("%s%s in %s" % (format_time(rec, ns, raw), " of it" if i == 0 else "",
                                            _part_label(rec, who, None))
                            for i, (who, ns) in enumerate(parts))


def offcpu_lines(rec, n, raw=False):
    """The split of node @n's time into on-CPU and off-CPU time (none
    without off-CPU times): their means and the off-CPU share of the
    wall-clock variance, (Var(off) + Cov(on, off)) / Var(wall)."""
    o = n.get("offcpu")
    if not o or not o["count"]:
        return []
    t = lambda v: format_time(rec, v, raw)
    share = o["off_share"]
    if share is None:
        said = "no wall-clock variance to split"
    elif raw:
        said = "share %s of the wall-clock variance" % format_exact(share)
    else:
        said = "%.1f%% of the wall-clock variance" % _pct(share, 1.0)
    lines = ["  on-CPU    mean %s" % t(o["on_mean"]),
             "  off-CPU   mean %s, %s" % (t(o["off_mean"]), said)]
    if "blocked_mean" in o:
        lines += _split_lines(o, t, raw)
    elif share is not None and share > 0.5:
        lines.append("            (mostly off the CPU: preempted, blocked or sleeping, "
                     "not running its code)")
    return lines


def _split_lines(o, t, raw):
    """Off-CPU time split into preempted (runnable, the machine's doing)
    and blocked (asleep: the program's), and what it waited for."""
    lines = []
    for what in ("preempted", "blocked"):
        share = o[what + "_share"]
        if share is None:
            said = ""
        elif raw:
            said = ", share %s" % format_exact(share)
        else:
            said = ", %.1f%%" % _pct(share, 1.0)
        lines.append("    %-9s mean %s%s" % (what, t(o[what + "_mean"]), said))
    waits = [w for w in o.get("waits") or [] if w["ns"]]
    if waits:
        total = sum(w["ns"] for w in waits)
        lines.append("    waits:    " + ", ".join(
            "%s %s (%.0f%%, %dx)" % (w["reason"], t(w["ns"]), 100.0 * w["ns"] / total,
                                     w["count"]) for w in waits[:4]))
    return lines


def contributor_lines(rec, nid, raw=False, count=5):
    """Children by their share of @nid's variance, as varperf report lists
    "Variance contributors": row sums of the covariance matrix."""
    c = rec.contributors(nid)
    name = rec.func(rec.node(nid)["func"])["display"]
    ncalls = rec.node(nid)["count"]
    if c is None:
        return ["  variance  all its own (no probed function was called from it)"]
    var, rows = c
    if not var > 0:
        return ["  variance  none"]
    lines = ["  variance by callee (row sums of the covariance matrix, share of the variance):"]
    shown = rows if count is None or count <= 0 else rows[:count]
    for child, value in shown:
        if child is None:
            label = "self (%s's own time)" % name
        elif isinstance(child, str):
            label = child  # "(N other callees)": the children past the tracked ones
        else:
            cn = rec.node(child)
            label = cn["label"]
            if cn["path_fraction"] is not None:
                label += "  (runs in %d of %d calls, %s)" % (
                    cn["path_calls"], ncalls, format_exact(cn["path_fraction"]) if raw else
                    "%.1f%%" % (100.0 * cn["path_fraction"]))
        share = format_exact(value / var) if raw else "%6.1f%%" % _pct(value, var)
        lines.append("    %s  %s" % (share, label))
    if len(shown) < len(rows):
        rest = sum(v for _, v in rows[len(shown):])
        share = format_exact(rest / var) if raw else "%6.1f%%" % _pct(rest, var)
        lines.append("    %s  (%d more)" % (share, len(rows) - len(shown)))
    return lines


def pattern_lines(rec, count=None, raw=False):
    """The Pattern Set as `varperf report` prints it; with @count, the
    first @count patterns by rank whether in the set or not."""
    p = rec.params
    t = lambda v: format_time(rec, v, raw)
    pats = rec.patterns()
    lines = ["Pattern Set (VIM >= %g%% of max; k = %.1f):" % (100.0 * p["beta"], p["k"])]
    if not pats:
        lines.append("  (none: no significant node has CoV >= %g)" % p["cov_threshold"])
        return lines
    lines.append("  rank share         N      mean     sigma    CoV       VIM  call chain")
    if count is None:
        shown = [x for x in pats if x["in_pattern_set"]]
    else:
        shown = pats[:count]
    for x in shown:
        cov = format_exact(x["cov"]) if raw else "%6.3f" % x["cov"]
        lines.append("  %4d %5.1f%% %9d %9s %9s %6s %9s  %s" % (
            x["rank"], 100.0 * x["vim_share"], x["count"], t(x["mean"]), t(x["stddev"]),
            cov, t(x["vim"]), chain_label(rec, chain=x["chain"], collapse=True) + (
                " \u21d2 " + chain_label(rec, chain=x["through"], collapse=True,
                                         sep=" \u21d2 ") if x.get("through") else "")))
    rest = len(pats) - len(shown)
    if rest:
        if count is None:
            lines.append("  %d other pattern%s not in the Pattern Set "
                         "('info variance patterns %d' lists them)"
                         % (rest, " is" if rest == 1 else "s are", len(pats)))
        else:
            lines.append("  %d more pattern%s" % (rest, "" if rest == 1 else "s"))
    return lines


def function_lines(rec, funcs, raw=False):
    """Every recorded context of the functions @funcs with its statistics,
    largest total first, after the function's merged statistics."""
    t = lambda v: format_time(rec, v, raw)
    lines = []
    for f in funcs:
        fn = rec.func(f)
        s = rec.func_stats(f)
        nodes = rec.nodes_of(f)
        if s is None:
            lines.append("%s: probed, but %s" % (
                fn["display"], "never returned while recording" if nodes else
                "never called while recording"))
            continue
        cov = format_exact(s["cov"]) if raw else "%.3f" % s["cov"]
        lines.append("%s: %d call%s in %d context%s; mean %s, sigma %s, CoV %s, min %s, "
                     "max %s, total %s" % (
                         fn["display"], s["count"], "" if s["count"] == 1 else "s",
                         s["contexts"], "" if s["contexts"] == 1 else "s", t(s["mean"]),
                         t(s["stddev"]), cov, t(s["min"]), t(s["max"]), t(s["total"])))
        lines.append("   node         N      mean     sigma    CoV       min       max     "
                     "total pattern  calling context")
        rows = sorted((rec.node(n) for n in nodes), key=lambda n: (-n["total"], n["id"]))
        for n in rows:
            cov = format_exact(n["cov"]) if raw else "%6.3f" % n["cov"]
            pat = ",".join("#%d%s" % (r, "*" if rec.pattern(r)["in_pattern_set"]
                                      else "") for r in n["patterns"]) or "-"
            mn = t(n["min"]) if n["count"] else "-"
            mx = t(n["max"]) if n["count"] else "-"
            lines.append("  %c%5d %9d %9s %9s %6s %9s %9s %9s %-7s  %s" % (
                "*" if n["high_variance"] else " ", n["id"], n["count"], t(n["mean"]),
                t(n["stddev"]), cov, mn, mx, t(n["total"]), pat,
                chain_label(rec, rec.node_path(n["id"]), collapse=True)))
    return lines


def histogram_lines(rec, nid, width=80, rows=24, raw=False):
    """The durations of node @nid as an ASCII histogram on a log scale: its
    buckets (log-linear, 64 per power of two) merged into at most @rows
    rows of equally many buckets - equal ratios hi/lo - each with its range,
    its count and a bar scaled to fit @width columns; the rows of the p50
    and the p99 are marked.  Every call is in exactly one row; more than
    two empty rows in a row are one line, "0  (N empty rows)"."""
    t = lambda v: format_time(rec, v, raw)
    n = rec.node(nid)
    buckets = rec.histogram(nid)
    if not buckets:
        return ["  (no completed call)"]
    first, last = buckets[0][3], buckets[-1][3]
    nb = last - first + 1
    nrows = max(1, min(nb, rows))
    counts = [0] * nrows
    for _, _, c, b in buckets:
        counts[(b - first) * nrows // nb] += c
    p50, p99 = rec.quantiles(nid, [0.5, 0.99])
    marks = [[] for _ in range(nrows)]
    for name, v in (("p50", p50), ("p99", p99)):
        marks[(min(max(_varperf.hist_bucket(v), first), last) - first) * nrows // nb].append(name)
    lines = ["  %d call%s from %s to %s; p50 %s, p99 %s" % (
        n["count"], "" if n["count"] == 1 else "s", t(n["min"]), t(n["max"]), t(p50), t(p99))]
    cells = []
    for r in range(nrows):
        lo = _varperf.hist_bucket_range(first - (-r * nb // nrows))[0]
        hi = _varperf.hist_bucket_range(first - (-(r + 1) * nb // nrows) - 1)[1]
        cells.append((t(lo), t(hi), str(counts[r]), " ".join(marks[r])))
    wl = max(len(c[0]) for c in cells)
    wh = max(len(c[1]) for c in cells)
    wc = max(5, max(len(c[2]) for c in cells))
    wm = max(len(c[3]) for c in cells)
    room = max(10, width - (2 + wl + 3 + wh + 2 + wc + 2) - (wm + 1 if wm else 0) - 1)
    top = max(counts)
    lines.append("  %*s   %-*s  %*s" % (wl, "from", wh, "to", wc, "calls"))
    r = 0
    while r < nrows:
        e = r
        while e < nrows and not counts[e]:
            e += 1
        if e - r > 2:
            # a gap of the log scale: one line
            lines.append("  %*s - %-*s  %*s  (%d empty rows)" % (
                wl, cells[r][0], wh, cells[e - 1][1], wc, "0", e - r))
            r = e
            continue
        lo, hi, c, m = cells[r]
        bar = "#" * (0 if not counts[r] else max(1, int(round(room * counts[r] / top))))
        lines.append(("  %*s - %-*s  %*s  %-*s %s" % (wl, lo, wh, hi, wc, c, room, bar, m))
                     .rstrip())
        r += 1
    return lines


def slowest_lines(rec, nid, raw=False, parts=3):
    """The slowest calls of node @nid that the recording kept, by start,
    each with where its time went (its @parts largest shares: itself,
    a callee, the other callees)."""
    t = lambda v: format_time(rec, v, raw)
    n = rec.node(nid)
    slow = rec.slowest(nid)
    if not slow:
        return ["  (no completed call)" if not n["count"] else "  (no slow call kept)"]
    lines = ["  the %d slowest of %d call%s, by start:" % (
        len(slow), n["count"], "" if n["count"] == 1 else "s")]
    for c in slow:
        split = ", ".join("%s in %s" % (t(ns), _part_label(rec, who, nid))
                          for who, ns in sorted(c["parts"], key=lambda p: -p[1])[:parts])
        more = len(c["parts"]) - parts
        lines.append("  %9s%s: %s%s" % (t(c["duration"]), _when(rec, c, raw),
                                         split, ", %d more" % more if more > 0 else ""))
    return lines


def _vcg_callsite(rec, n):
    """A VCG node's call site: its own when all its contexts share it
    (report_vcg_callsite() in report-vcg.c)."""
    last = None
    for i, cc in enumerate(n["ccs"]):
        cs = cc[-1][1] if cc else None
        if i and cs != last:
            return "%d call sites" % len(n["ccs"])
        last = cs
    return rec.callsite(last)["label"] if last is not None else ""


def _plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def vim_words(rec):
    """What VIM is, in words, as varperf report says it where it first
    appears."""
    return ["  VIM (Variability Impact Metric) = k sigma N: the spread of one call, k = %g"
            % rec.params["k"],
            "  standard deviations, times the number of calls: time summed over the calls,",
            "  not a duration of the run"]


def vcg_lines(rec, g, count=None, raw=False):
    """The Variance Characterization Graph @g (Recording.vcg()) as
    `varperf report` prints it (report-vcg.c): per pattern, its nodes as an
    indented tree with their type, N, mean, CoV and VIM, and under a node
    at the end of a linear segment the back-edge to its originator with
    the contribution fraction cf.  With @count, the first @count patterns."""
    t = lambda v: format_time(rec, v, raw)
    nodes = g["nodes"]
    pats = g["patterns"] if count is None else g["patterns"][:count]
    lines = ["Variance Characterization Graph (tau_S = %g, beta = %g):" % (g["tau"], g["beta"]),
             "  %s, %s, %s (base layer: %s, %s; %s; trimmed: %s, %s)" % (
                 _plural(len(g["patterns"]), "pattern"), _plural(len(nodes), "node"),
                 _plural(len(g["segments"]), "back-edge"),
                 _plural(g["base_patterns"], "pattern"), _plural(g["base_nodes"], "node"),
                 _plural(g["merges"], "merge"), _plural(g["trimmed_patterns"], "pattern"),
                 _plural(g["trimmed_nodes"], "node"))]
    if not g["patterns"]:
        lines.append("  (none: no significant node has CoV >= %g)"
                     % rec.params["cov_threshold"])
        return lines
    lines += vim_words(rec)
    first = g["patterns"][0]["vim"]
    depth = {}
    for q, p in enumerate(pats):
        share = 100.0 * p["vim"] / first if first > 0 else 0.0
        lines.append("")
        lines.append("  Pattern %d: VIM %s (%.1f%% of the first), %s" % (
            q + 1, t(p["vim"]), share, _plural(p["nnodes"], "node")))
        lines.append("  %7s  %-11s %9s %9s %6s %9s  %s" % ("id", "type", "N", "mean", "CoV",
                                                         "VIM", "node"))
        for nid in range(p["root"], p["root"] + p["nnodes"]):
            n = nodes[nid]
            d = 0 if n["parent"] is None else depth[n["parent"]] + 1
            depth[nid] = d
            ind = 2 * min(d, 16)
            cs = _vcg_callsite(rec, n)
            name = rec.func(n["func"])["display"] + (" [%s]" % cs if cs else "")
            cov = format_exact(n["cov"]) if raw else "%6.3f" % n["cov"]
            lines.append("  %7s  %-11s %9d %9s %6s %9s  %s%s%s" % (
                "(%d)" % nid, n["type"].capitalize(), n["count"], t(n["mean"]), cov,
                t(n["vim"]), " " * ind, "[depth %d] " % d if d > 16 else "", name))
            for sid in n["cls"]:
                sg = g["segments"][sid]
                if sg["nodes"][-1] != nid:
                    continue
                h = sg["nodes"][0]
                comps = ", ".join(rec.callsite(rec.node(c)["callsite"])["label"] or "?"
                                  if rec.node(c)["callsite"] is not None else "?"
                                  for c in sg["components"])
                cf = format_exact(sg["cf"]) if raw else "%.1f%%" % (100.0 * sg["cf"])
                lines.append("%s\u21b0 (%d) %s via [%s]: cf %s%s" % (
                    " " * (61 + ind + 2), h, rec.func(nodes[h]["func"])["display"], comps, cf,
                    "" if sg["how"] == "matrix" else " (%s)" % sg["how"]))
    if count is not None and count < len(g["patterns"]):
        lines.append("")
        lines.append("  %s more" % _plural(len(g["patterns"]) - count, "pattern"))
    return lines
