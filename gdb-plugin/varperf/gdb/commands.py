# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb.commands - the GDB commands of the varperf plugin:
`info variance` (context, frame, patterns, function), `varperf load` and
`varperf break`, and register_varperf_commands(), which the loader calls to
add them with `varperf record` (record.py), the `set/show variance`
settings (settings.py) and the events of `varperf break`'s breakpoints
(slowbreak.py).

Every user error is a gdb.GdbError with a one-line message that starts
with the command's name, so GDB prints it without a traceback and goes on.
"""

import math
import os

import gdb

import varperf
import varperf.gdb
from varperf.gdb import bound, record, settings, slowbreak

# The plugin's Session (varperf/gdb/__init__.py), set by
# register_varperf_commands().
_session = None


def _out(lines):
    varperf.gdb.write(lines)


def _func_names(rec):
    names = set()
    for f in range(rec.nfuncs):
        fn = rec.func(f)
        names.update((fn["display"], fn["name"], fn["base"]))
    return sorted(n for n in names if n)


def _complete_funcs(word):
    rec = _session.rec
    if rec is None:
        return gdb.COMPLETE_SYMBOL
    return [n for n in _func_names(rec) if n.startswith(word)]



# ---- info variance ----


class InfoVariance(gdb.Command):
    """Variance statistics of the current calling context, from a recording.

Usage: info variance
       info variance frame N
       info variance patterns [COUNT]
       info variance function NAME
       info variance histogram [CONTEXT]
       info variance slowest [CONTEXT]

Without a subcommand: map the call stack, from the selected frame out,
onto the calling-context tree of the recording that 'varperf load' loaded,
and print for the innermost frame that has a recorded context its number
of calls, mean, standard deviation (sigma), coefficient of variation,
min, the percentiles p50, p90, p99 and p99.9 (measured: nearest rank,
within 1/128), max, how often its caller takes this path (runs in N of
M calls of the caller), its rank among the variance patterns, the
children that contribute most to its variance with how often it calls
each, and its slowest recorded call with where that call's time went.
With a recording that holds off-CPU times (the BPF backend), also its
mean on-CPU and off-CPU time and how much of its variance is off-CPU
time (preempted, blocked, sleeping).
Frames of functions the recording did not probe are skipped.  When the
stack differs from every recorded context, the nearest recorded context
is shown with what differs.

'set variance raw on' prints exact numbers as 'varperf report --format
json' does; 'set variance contributors N' sets how many children are
listed."""

    def __init__(self):
        super().__init__("info variance", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE, True)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        if arg.strip():
            raise gdb.GdbError("info variance: unknown subcommand '%s' (see 'help info "
                               "variance')" % gdb.string_to_argv(arg)[0])
        _session.require("info variance")
        _context_report("info variance", _selected_frame("info variance"))


class InfoVarianceFrame(gdb.Command):
    """Variance statistics of the calling context of an outer frame.

Usage: info variance frame N

Like 'info variance', from frame N (as 'backtrace' numbers frames)
outwards instead of from the selected frame."""

    def __init__(self):
        super().__init__("info variance frame", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        argv = gdb.string_to_argv(arg)
        if len(argv) != 1:
            raise gdb.GdbError("info variance frame: usage: info variance frame N")
        try:
            level = int(argv[0], 0)
            if level < 0:
                raise ValueError
        except ValueError:
            raise gdb.GdbError("info variance frame: invalid frame number '%s'" % argv[0])
        _session.require("info variance frame")
        _selected_frame("info variance frame")
        f = gdb.newest_frame()
        while f is not None and varperf.gdb.frame_level(f) < level:
            f = f.older()
        if f is None:
            raise gdb.GdbError("info variance frame: no frame #%d on the stack" % level)
        _context_report("info variance frame", f)


class InfoVariancePatterns(gdb.Command):
    """The variance patterns of the recording, as 'varperf report' lists them.

Usage: info variance patterns [COUNT]

Without COUNT, the Pattern Set (patterns whose variance impact metric,
VIM = k sigma N, is at least beta times the largest); with COUNT, the
first COUNT patterns by rank, in the Pattern Set or not.  Then, when this
varperf has it, the Variance Characterization Graph: per pattern, its
Task, Contributor and Contrast nodes as a tree, with the back-edges that
say which share (cf) of a node's variance a node below explains, as
'varperf report' prints it (computed on first use; it may read the
recording again)."""

    def __init__(self):
        super().__init__("info variance patterns", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        rec = _session.require("info variance patterns")
        argv = gdb.string_to_argv(arg)
        count = None
        if len(argv) > 1:
            raise gdb.GdbError("info variance patterns: usage: info variance patterns [COUNT]")
        if argv:
            try:
                count = int(argv[0], 10)
                if count < 0:
                    raise ValueError
            except ValueError:
                raise gdb.GdbError("info variance patterns: invalid count '%s'" % argv[0])
        _out(varperf.pattern_lines(rec, count, settings.raw()))
        g = _session.vcg()
        if g is not None:
            _out([""] + varperf.vcg_lines(rec, g, count, settings.raw()))


class InfoVarianceFunction(gdb.Command):
    """Every recorded calling context of a function, with its statistics.

Usage: info variance function NAME

NAME is the function's name (for C++ without or with its parameters, or
its mangled symbol).  Contexts are listed by total time; '*' marks
high-variance contexts, #R their pattern ranks ('*' after it: in the
Pattern Set)."""

    def __init__(self):
        super().__init__("info variance function", gdb.COMMAND_STATUS)

    def complete(self, text, word):
        return _complete_funcs(word)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        rec = _session.require("info variance function")
        argv = gdb.string_to_argv(arg)
        if len(argv) != 1:
            raise gdb.GdbError("info variance function: usage: info variance function NAME")
        funcs = rec.funcs_named(argv[0])
        if not funcs:
            raise gdb.GdbError("info variance function: no function '%s' in '%s'"
                               % (argv[0], _session.path))
        _out(varperf.function_lines(rec, funcs, settings.raw()))


def _selected_frame(cmd):
    try:
        return gdb.selected_frame()
    except gdb.error:
        raise gdb.GdbError("%s: no stack (the program is not being run)" % cmd) from None


def _frame_title(lf):
    return "#%d %s" % (lf.level, lf.name)


def _describe_ops(rec, chain, ops):
    """Lines saying how the live chain differs from the recorded context."""
    lines = []
    for i, (op, li, nid) in enumerate(ops):
        if op == "same":
            continue
        if op == "callsite":
            lf = chain[li]
            cs = rec.node(nid)["callsite"]
            rwhere = rec.callsite(cs)["label"] if cs is not None else "the top of its thread"
            lines.append("%s is called from %s here, from %s in the recording"
                         % (_frame_title(lf), lf.where(), rwhere or "an unknown place"))
        elif op == "live":
            lf = chain[li]
            lines.append("%s (called from %s) is not in the recorded context"
                         % (_frame_title(lf), lf.where()))
        else:
            n = rec.node(nid)
            inner = next((chain[x[1]] for x in ops[i + 1:] if x[1] is not None), None)
            lines.append("the recorded context has %s%s, which this stack does not have" % (
                n["label"], " above %s" % _frame_title(inner) if inner else ""))
    return lines


def _map_stack(cmd, start):
    """The recorded context of the stack from frame @start outwards:
    (lines saying how it was found, node id).  The innermost frame whose
    function has recorded contexts decides; a stack the recording lacks
    gets the nearest recorded context, with what differs."""
    s = _session
    rec = s.require(cmd)
    varperf.gdb.warn(s.check_program())
    chain, walked = s.live_chain(start)
    if not chain:
        raise gdb.GdbError("%s: no frame from #%d outwards runs a function that '%s' probed"
                           % (cmd, varperf.gdb.frame_level(start), s.path))
    # the innermost frame whose function has recorded contexts
    k = len(chain) - 1
    while k >= 0 and not any(rec.func(f)["ncontexts"] for f in chain[k].funcs):
        k -= 1
    lines = []
    level = varperf.gdb.frame_level(start)
    if chain[-1].level != level:
        many = chain[-1].level - level > 1
        lines.append("(frame%s #%d%s: not a function of the recording)" % (
            "s" if many else "", level, "-#%d" % (chain[-1].level - 1) if many else ""))
    for lf in reversed(chain[k + 1:]):
        lines.append("(%s: probed, but never called while '%s' was recorded)"
                     % (_frame_title(lf), s.path))
    if k < 0:
        _out(lines)
        raise gdb.GdbError("%s: no function on this stack was called while '%s' was recorded"
                           % (cmd, s.path))
    elems = [(lf.funcs, lf.callsites) for lf in chain[:k + 1]]
    lf = chain[k]
    nid = rec.lookup(elems)
    if nid is not None:
        lines.append("%s, in the recorded context (node %d):" % (_frame_title(lf), nid))
        lines.append("  " + varperf.chain_label(rec, rec.node_path(nid), collapse=True))
    else:
        near = rec.nearest(elems)
        nid = near["node"]
        lines.append("%s: this calling context was not recorded; the nearest recorded one "
                     "(node %d) is" % (_frame_title(lf), nid))
        lines.append("  " + varperf.chain_label(rec, rec.node_path(nid), collapse=True))
        lines.append("  differences:")
        lines.extend("    " + d for d in _describe_ops(rec, chain[:k + 1], near["ops"]))
    return lines, nid


def _context_report(cmd, start):
    lines, nid = _map_stack(cmd, start)
    lines.extend(varperf.node_lines(_session.rec, nid, settings.raw(), settings.contributors()))
    _out(lines)


def _context_arg(cmd, arg):
    """The node that CONTEXT names for @cmd (lines introducing it, node id):
    nothing - the context of the selected frame; a number - that node, as
    'info variance' numbers them; else a calling context as 'varperf break
    --context' takes it (main/frame/step, FUNC:LINE), which must match one
    recorded context."""
    rec = _session.require(cmd)
    argv = gdb.string_to_argv(arg)
    if len(argv) > 1:
        raise gdb.GdbError("%s: usage: %s [CONTEXT]" % (cmd, cmd))
    if not argv:
        return _map_stack(cmd, _selected_frame(cmd))
    text = argv[0]
    if text.isdigit():
        nid = int(text)
        if not 0 < nid < rec.nnodes:
            raise gdb.GdbError("%s: no node %d in '%s' (nodes are 1..%d)"
                               % (cmd, nid, _session.path, rec.nnodes - 1))
    else:
        try:
            nodes = varperf.match_context(rec, varperf.parse_context(text))
        except ValueError as e:
            raise gdb.GdbError("%s: %s" % (cmd, e)) from None
        if not nodes:
            raise gdb.GdbError("%s: '%s' matches no recorded context" % (cmd, text))
        if len(nodes) > 1:
            raise gdb.GdbError("%s: '%s' matches %d recorded contexts (nodes %s): give a node "
                               "number or a longer context" % (
                                   cmd, text, len(nodes), ", ".join(map(str, nodes))))
        nid = nodes[0]
    return ["node %d:" % nid,
            "  " + varperf.chain_label(rec, rec.node_path(nid), collapse=True)], nid


def _width():
    """The columns GDB's output may take (80 when 'set width' is unlimited)."""
    try:
        w = gdb.parameter("width")
    except (gdb.error, RuntimeError):
        w = None
    return w if isinstance(w, int) and 40 <= w < 1000 else 80


class InfoVarianceHistogram(gdb.Command):
    """A histogram of the durations of one calling context.

Usage: info variance histogram [CONTEXT]

Draws the recorded durations of the calling context at the selected frame
(as 'info variance' finds it), or of CONTEXT: a node number as 'info
variance' prints it, or a calling context as 'varperf break --context'
takes it (main/frame/step; FUNC:LINE also requires the line of the call),
which must match one recorded context.  The recording counts every call
in log-linear buckets (within 1/128 of the values); they are merged into
at most 24 rows of equal ratio hi/lo (a log scale), each with its range,
its count of calls and a bar as wide as the terminal allows; the rows
that hold the p50 and the p99 are marked."""

    def __init__(self):
        super().__init__("info variance histogram", gdb.COMMAND_STATUS)

    def complete(self, text, word):
        return _complete_funcs(word)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        lines, nid = _context_arg("info variance histogram", arg)
        _out(lines + varperf.histogram_lines(_session.rec, nid, width=_width(),
                                             raw=settings.raw()))


class InfoVarianceSlowest(gdb.Command):
    """The slowest recorded calls of one calling context.

Usage: info variance slowest [CONTEXT]

Lists the slowest calls that the recording kept of the calling context
at the selected frame, or of CONTEXT (as for 'info variance histogram'),
by start: each one's duration, when it started (time since the
recording's first event), its thread, and where its time went: its own
code and the callees that took the most of that very call."""

    def __init__(self):
        super().__init__("info variance slowest", gdb.COMMAND_STATUS)

    def complete(self, text, word):
        return _complete_funcs(word)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        lines, nid = _context_arg("info variance slowest", arg)
        _out(lines + varperf.slowest_lines(_session.rec, nid, raw=settings.raw()))


# ---- varperf ... ----


class Varperf(gdb.Command):
    """Commands of the varperf variance profiler.

Usage: varperf load [--raw] [--time=wall|cpu|offcpu|blocked|preempted|own] [FILE]
       varperf break FUNCTION [--sigma K | --percentile P | --chebyshev P |
                              --slower-than TIME] [--context CHAIN]
       varperf record [--duration SECONDS] [-o FILE] [RECORD-OPTIONS...]

See also 'info variance' and 'show variance'."""

    def __init__(self):
        super().__init__("varperf", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE, True)




class VarperfLoad(gdb.Command):
    """Load a varperf recording of the program being debugged.

Usage: varperf load [--raw] [--time=wall|cpu|offcpu|blocked|preempted|own] [FILE]

FILE is a data file written by 'varperf record' (default: the setting
'variance data-file', varperf.data).  The file's calling-context tree is
built and analysed as 'varperf report' does, with the probe costs that
'varperf record' calibrated subtracted from the durations; 'info
variance' then maps stops onto it.  With --raw, durations are taken as
measured, probe costs included, as 'varperf report --raw' does.  With
--time=cpu or --time=offcpu, the durations are on-CPU or off-CPU time
only; --time=blocked or --time=preempted, the off-CPU time's two parts;
--time=own, wall-clock time less preemption; as with 'varperf report
--time' (a recording with off-CPU times, made with the BPF backend, is
needed, version 5 for the last three); with such a recording 'info
variance' shows each context's on-CPU and off-CPU time anyway, and
the off-CPU time's split into preempted and blocked and what it waited
for.  Warns
when the program GDB debugs is not the recorded one or another build of
it (its build-id differs).  A recording that only sampled has no probed
function: 'info variance' and 'varperf break' need probed calls."""

    def __init__(self):
        super().__init__("varperf load", gdb.COMMAND_FILES, gdb.COMPLETE_FILENAME)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        raw = False
        time = "wall"
        files = []
        options = True
        argv = gdb.string_to_argv(arg)
        while argv:
            a = argv.pop(0)
            if options and a == "--raw":
                raw = True
            elif options and (a == "--time" or a.startswith("--time=")):
                if a == "--time":
                    if not argv:
                        raise gdb.GdbError("varperf load: option '--time' needs a value")
                    time = argv.pop(0)
                else:
                    time = a[len("--time="):]
                if time not in varperf.TIME_NAMES:
                    raise gdb.GdbError("varperf load: invalid value '%s' for '--time': must "
                                       "be 'wall', 'cpu', 'offcpu', 'blocked', 'preempted' "
                                       "or 'own'" % time)
            elif options and a == "--":
                options = False
            elif options and a.startswith("-") and a != "-":
                raise gdb.GdbError("varperf load: unknown option '%s'" % a)
            else:
                files.append(a)
        if len(files) > 1:
            raise gdb.GdbError("varperf load: usage: varperf load [--raw] "
                               "[--time=wall|cpu|offcpu|blocked|preempted|own] [FILE]")
        path = os.path.expanduser(files[0] if files else settings.data_file())
        rec = varperf.gdb.load_recording("varperf load", path, raw, time=time)
        if not rec.nfuncs:
            _out(["'%s' has no probed function, only samples: 'info variance' and "
                  "'varperf break' need the calls of probed functions (record with "
                  "--mode=probe; 'varperf report -i %s' shows the samples)." % (path, path)])


class VarperfBreak(gdb.Command):
    """Stop when a call of a function takes unusually long.

Usage: varperf break FUNCTION [--sigma K | --percentile P | --chebyshev P |
                              --slower-than TIME] [--context CHAIN]

Sets a breakpoint that stops at FUNCTION's return, with its frame still
there to inspect, only when that call ran longer than a threshold taken
from the loaded recording's durations of FUNCTION (merged over all its
calling contexts, or over those matching --context):

  --sigma K          mean + K standard deviations (default: the setting
                     'variance threshold', 3)
  --percentile P     the measured P-th percentile (99, 99.9%, 0.99) of
                     the recorded durations: a call slower than that
                     many of the recorded ones (a fraction 1 - P of calls
                     like them stops); nearest rank, from the recording's
                     histogram, as 'varperf report --format json' prints
  --chebyshev P      Chebyshev's bound for percentile P: mean + k sigma
                     with k = 1/sqrt(1 - P), since P(X >= mean + k sigma)
                     <= 1/k^2 for any distribution; at most a fraction
                     1 - P stops, usually far fewer (none for most)
  --slower-than TIME a fixed duration (2ms, 500us, 1.5s); works without
                     a recording
  --context CHAIN    only calls in these calling contexts count: CHAIN is
                     outermost first, '/'-separated, e.g. main/frame/step,
                     and FUNC:LINE also requires the line of the call

With a recording loaded with --time=cpu, calls are timed in on-CPU time,
as its durations are; one loaded with --time=offcpu gives no threshold.
On a stop it prints the call's duration and how unusual it is.  Calls
are timed between a stop at FUNCTION's first instruction and one at its
return; the time these stops cost is measured on the first calls and
subtracted (see varperf-gdb(1)).  'delete' and 'disable' the breakpoint
as any other."""

    def __init__(self):
        super().__init__("varperf break", gdb.COMMAND_BREAKPOINTS)

    OPTIONS = ("--sigma", "--percentile", "--chebyshev", "--slower-than", "--context")
    THRESHOLDS = ("--sigma", "--percentile", "--chebyshev", "--slower-than")

    def complete(self, text, word):
        words = text.split()
        tok = words[-1] if words and not text.endswith(" ") else ""
        prev = words[-1] if text.endswith(" ") and words else \
            (words[-2] if len(words) > 1 else "")
        if prev in self.OPTIONS:
            return []  # a value
        if tok.startswith("-"):
            # GDB may split the word at '-': complete what it calls the word
            cut = len(tok) - len(word)
            return [o[cut:] for o in self.OPTIONS if o.startswith(tok)]
        return _complete_funcs(word)

    def _parse(self, argv):
        opts = {}
        func = None
        i = 0
        while i < len(argv):
            a = argv[i]
            if a.startswith("--"):
                name, eq, val = a.partition("=")
                if name not in self.OPTIONS:
                    raise gdb.GdbError("varperf break: unknown option '%s'" % name)
                if not eq:
                    if i + 1 >= len(argv):
                        raise gdb.GdbError("varperf break: option '%s' needs a value" % name)
                    i += 1
                    val = argv[i]
                if name in opts:
                    raise gdb.GdbError("varperf break: option '%s' given twice" % name)
                opts[name] = val
            elif func is None:
                func = a
            else:
                raise gdb.GdbError("varperf break: unexpected argument '%s'" % a)
            i += 1
        if func is None:
            raise gdb.GdbError("varperf break: usage: varperf break FUNCTION [--sigma K | "
                               "--percentile P | --chebyshev P | --slower-than TIME] "
                               "[--context CHAIN]")
        given = [o for o in self.THRESHOLDS if o in opts]
        if len(given) > 1:
            raise gdb.GdbError("varperf break: options '%s' and '%s' cannot be used together"
                               % (given[0], given[1]))
        return func, opts

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        slowbreak.reap_calibration()
        self.dont_repeat()
        func, opts = self._parse(gdb.string_to_argv(arg))
        sigma = percentile = chebyshev = slower = None
        try:
            if "--sigma" in opts:
                sigma = float(opts["--sigma"])
                if not math.isfinite(sigma) or sigma <= 0:
                    raise ValueError("invalid value '%s' for '--sigma': must be a number "
                                     "greater than 0" % opts["--sigma"])
            if "--percentile" in opts:
                percentile = varperf.parse_fraction(opts["--percentile"], "percentile")
            if "--chebyshev" in opts:
                chebyshev = varperf.parse_fraction(opts["--chebyshev"], "percentile")
            if "--slower-than" in opts:
                slower = varperf.parse_duration(opts["--slower-than"])
        except ValueError as e:
            msg = str(e)
            if msg.startswith("could not convert"):
                msg = "invalid value '%s' for '--sigma': must be a number greater than 0" \
                    % opts["--sigma"]
            raise gdb.GdbError("varperf break: %s" % msg) from None
        if sigma is None and percentile is None and chebyshev is None and slower is None:
            sigma = settings.threshold()
        rec = _session.rec
        if rec is None and slower is None:
            raise gdb.GdbError("varperf break: no recording loaded (use 'varperf load [FILE]', "
                               "or give --slower-than)")
        if rec is not None and rec.time in ("offcpu", "blocked", "preempted") and slower is None:
            # a stopped thread is off the CPU: GDB's stops would be in it
            raise gdb.GdbError("varperf break: the durations of '%s' are off-CPU time "
                               "(--time=%s), which cannot be timed across GDB's stops: "
                               "load it with --time=wall or --time=cpu, or give --slower-than"
                               % (_session.path, rec.time))
        symbol, size, module, stats, ctx_nodes, nodes = func, 0, None, None, None, None
        if rec is not None:
            funcs = rec.funcs_named(func)
            if funcs:
                fn = rec.func(funcs[0])
                symbol, size, module = fn["name"], fn["size"], fn["module"]
                if "--context" in opts:
                    try:
                        elems = varperf.parse_context(opts["--context"])
                    except ValueError as e:
                        raise gdb.GdbError("varperf break: %s" % e) from None
                    if not any(n in (fn["name"], fn["display"], fn["base"]) or
                               fn["display"].startswith(n + "(") for n in [elems[-1][0]]):
                        elems.append((func, None))
                    ctx_nodes = varperf.match_context(rec, elems)
                    if not ctx_nodes:
                        raise gdb.GdbError("varperf break: no recorded context of '%s' matches "
                                           "'%s'" % (func, opts["--context"]))
                    nodes = ctx_nodes
                    stats = rec.merge_stats(ctx_nodes)
                else:
                    nodes = [n for f in funcs for n in rec.nodes_of(f)]
                    stats = rec.merge_stats(nodes) if nodes else None
            elif slower is None:
                raise gdb.GdbError("varperf break: no function '%s' in '%s'"
                                   % (func, _session.path))
            elif "--context" in opts:
                raise gdb.GdbError("varperf break: '--context' needs '%s' in the recording"
                                   % func)
        elif "--context" in opts:
            raise gdb.GdbError("varperf break: '--context' needs a recording (use 'varperf "
                               "load [FILE]')")
        try:
            thr = varperf.threshold(stats, sigma, percentile, slower, chebyshev, rec, nodes)
        except ValueError as e:
            raise gdb.GdbError("varperf break: '%s': %s" % (func, e)) from None
        varperf.gdb.warn_unprobe()
        sb = slowbreak.SlowBreak(_session, func, symbol, size, module, thr,
                                 set(ctx_nodes) if ctx_nodes else None, opts.get("--context"))
        where = "in context %s" % opts["--context"] if ctx_nodes else "in any context"
        limit = varperf.format_time(rec, thr.ns, settings.raw()) \
            if rec is not None and thr.how != "fixed" else varperf.format_duration(thr.ns)
        if stats and thr.percentile is not None:
            _out(["varperf: breakpoint %d stops at the return of %s when a call (%s) takes "
                  "longer than %s: %s of %d recorded call%s (max %s)" % (
                      sb.entry.number, func, where, limit, thr.how, stats["count"],
                      "" if stats["count"] == 1 else "s",
                      varperf.format_time(rec, stats["max"], settings.raw()))])
            if math.ceil(thr.percentile * stats["count"]) >= stats["count"]:
                # nearest rank: the slowest call's bucket
                varperf.gdb.warn(["with %d recorded call%s, the %s is the slowest one: only a "
                                  "call slower than every recorded one stops" % (
                                      stats["count"], "" if stats["count"] == 1 else "s",
                                      varperf.percentile_name(thr.percentile))])
        elif stats and thr.how != "fixed":
            _out(["varperf: breakpoint %d stops at the return of %s when a call (%s) takes "
                  "longer than %s: %s of %d recorded call%s (mean %s, sigma %s)" % (
                      sb.entry.number, func, where, limit, thr.how, stats["count"],
                      "" if stats["count"] == 1 else "s",
                      varperf.format_time(rec, stats["mean"]),
                      varperf.format_time(rec, stats["stddev"]))])
            if stats["max"] is not None and thr.ns > stats["max"]:
                varperf.gdb.warn(["%s is more than the recorded maximum of %s: a call slower "
                                  "than every recorded one is needed to stop" % (
                                      varperf.format_duration(thr.ns),
                                      varperf.format_time(rec, stats["max"]))])
        else:
            _out(["varperf: breakpoint %d stops at the return of %s when a call (%s) takes "
                  "longer than %s" % (sb.entry.number, func, where, limit)])


def register_varperf_commands():
    """Add `info variance`, `varperf ...` and `set/show variance ...` (once)."""
    global _session
    if _session is not None:
        return
    _session = varperf.gdb.get_session()
    settings.register()
    InfoVariance()
    InfoVarianceFrame()
    InfoVariancePatterns()
    InfoVarianceFunction()
    InfoVarianceHistogram()
    InfoVarianceSlowest()
    Varperf()
    VarperfLoad()
    VarperfBreak()
    record.VarperfRecord()
    slowbreak.register()
    bound.register()
