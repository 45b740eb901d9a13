# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb.commands - the GDB commands of the varperf plugin:
`info variance` (context, frame, patterns, function), `varperf load`,
`varperf break` and the `set/show variance` settings; `varperf record` is
in record.py, which uses load_recording() and the settings from here.

Every user error is a gdb.GdbError with a one-line message that starts
with the command's name, so GDB prints it without a traceback and goes on.
"""

import collections
import math
import os
import time

import gdb

import varperf
import varperf.gdb

# The plugin's Session (varperf/gdb/__init__.py), set by register().
_session = None

# ---- settings ----


class _SetVariance(gdb.Command):
    """Settings of the varperf plugin (info variance, varperf break)."""

    def __init__(self):
        super().__init__("set variance", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


class _ShowVariance(gdb.Command):
    """Show the settings of the varperf plugin."""

    def __init__(self):
        super().__init__("show variance", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("show variance: unknown setting '%s'" % arg.strip())
        for name in ("data-file", "threshold", "raw", "contributors"):
            gdb.execute("show variance " + name, from_tty)


class DataFileParameter(gdb.Parameter):
    """The data file that 'varperf load' reads when given no file name.
The default is varperf.data, the file 'varperf record' writes."""

    set_doc = "Set the data file that 'varperf load' reads by default."
    show_doc = "Show the data file that 'varperf load' reads by default."

    def __init__(self):
        super().__init__("variance data-file", gdb.COMMAND_DATA, gdb.PARAM_FILENAME)
        self.value = "varperf.data"

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "The data file of 'varperf load' is \"%s\"." % svalue


class ThresholdParameter(gdb.Parameter):
    """How many standard deviations above the recorded mean an invocation
must take for 'varperf break' to stop, when no --sigma, --percentile or
--slower-than is given.  The default is 3."""

    set_doc = "Set the default threshold of 'varperf break', in standard deviations."
    show_doc = "Show the default threshold of 'varperf break', in standard deviations."

    def __init__(self):
        super().__init__("variance threshold", gdb.COMMAND_DATA, gdb.PARAM_STRING)
        self.value = "3"
        self.sigma = 3.0

    def get_set_string(self):
        try:
            v = float(self.value)
            if not math.isfinite(v) or v <= 0:
                raise ValueError
        except (TypeError, ValueError):
            bad, self.value = self.value, "%g" % self.sigma
            raise gdb.GdbError("set variance threshold: invalid value '%s': must be a number "
                               "of standard deviations greater than 0" % bad)
        self.sigma = v
        return ""

    def get_show_string(self, svalue):
        return "'varperf break' stops %s standard deviations above the mean by default." % svalue


class RawParameter(gdb.Parameter):
    """Whether 'info variance' prints exact numbers: times in the
recording's unit (ns) and every number with all its digits, exactly as
'varperf report --format json' writes them, instead of human units."""

    set_doc = "Set whether 'info variance' prints exact numbers."
    show_doc = "Show whether 'info variance' prints exact numbers."

    def __init__(self):
        super().__init__("variance raw", gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = False

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "Exact numbers in 'info variance' are %s." % svalue


class ContributorsParameter(gdb.Parameter):
    """How many variance contributors (children of a calling context, by
their share of its variance) 'info variance' lists; unlimited lists all."""

    set_doc = "Set how many variance contributors 'info variance' lists."
    show_doc = "Show how many variance contributors 'info variance' lists."

    def __init__(self):
        super().__init__("variance contributors", gdb.COMMAND_DATA,
                         gdb.PARAM_ZUINTEGER_UNLIMITED)
        self.value = 5

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "'info variance' lists %s variance contributors." % svalue


_params = {}


def _warn_unprobe(since=None):
    if varperf.gdb.unprobe_running(since):
        _warn(["an earlier 'varperf record' is still removing its probes: breakpoints at the "
               "entry of probed functions do not stop until it is done (a few seconds)"])


def _raw():
    return bool(_params["raw"].value)


def _ncontrib():
    v = _params["contributors"].value
    return None if v is None or v < 0 else v


def _out(lines):
    gdb.write("".join(line + "\n" for line in lines))


def _warn(msgs):
    for m in msgs:
        gdb.write("warning: %s\n" % m, gdb.STDERR)


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

Without a subcommand: map the call stack, from the selected frame out,
onto the calling-context tree of the recording that 'varperf load' loaded,
and print for the innermost frame that has a recorded context its number
of calls, mean, standard deviation (sigma), coefficient of variation,
min, max, its rank among the variance patterns and the children that
contribute most to its variance.  With a recording that holds off-CPU
times (the BPF backend), also its mean on-CPU and off-CPU time and how
much of its variance is off-CPU time (preempted, blocked, sleeping).
Frames of functions the recording did not probe are skipped.  When the
stack differs from every recorded context, the nearest recorded context
is shown with what differs.

'set variance raw on' prints exact numbers as 'varperf report --format
json' does; 'set variance contributors N' sets how many children are
listed."""

    def __init__(self):
        super().__init__("info variance", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE, True)

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
        _out(varperf.pattern_lines(rec, count, _raw()))
        g = _session.vcg()
        if g is not None:
            _out([""] + varperf.vcg_lines(rec, g, count, _raw()))


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
        _out(varperf.function_lines(rec, funcs, _raw()))


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


def _context_report(cmd, start):
    s = _session
    rec = s.require(cmd)
    _warn(s.check_program())
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
    lines.extend(varperf.node_lines(rec, nid, _raw(), _ncontrib()))
    _out(lines)


# ---- varperf ... ----


class Varperf(gdb.Command):
    """Commands of the varperf variance profiler.

Usage: varperf load [--raw] [--time=wall|cpu|offcpu] [FILE]
       varperf break FUNCTION [--sigma K | --percentile P | --slower-than TIME]
                              [--context CHAIN]
       varperf record [--duration SECONDS] [-o FILE] [RECORD-OPTIONS...]

See also 'info variance' and 'show variance'."""

    def __init__(self):
        super().__init__("varperf", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE, True)


def load_recording(cmd, path, raw=False, since=None, time="wall"):
    """Load @path for command @cmd ('varperf load', 'varperf record'): read,
    build and analyse it as 'varperf report' does (@raw: as its --raw, the
    probe costs not subtracted; @time: its --time), make it the recording
    of the session, print what it holds and warn about what does not fit.
    Returns the Recording; a file that cannot be used raises gdb.GdbError
    (the message starts with @cmd) and keeps the previous recording.
    @since: warn about the probes of a varperf started then or later only."""
    try:
        rec = varperf.load(path, compensate=not raw, time=time)
    except varperf.Error as e:
        raise gdb.GdbError("%s: %s" % (cmd, e.strerror)) from None
    _session.set(rec, path)
    _warn(rec.warnings)
    t = rec.totals
    if rec.compensated:
        costs = "; probe costs subtracted"
    elif raw and rec.nfuncs and rec.header.get("probe_costs"):
        costs = "; durations as measured, probe costs included (--raw)"
    else:
        costs = ""
    if rec.time != "wall":
        costs += "; %s time only" % varperf.TIME_NAMES[rec.time]
    gdb.write("Loaded '%s': %d calling contexts of %d probed functions, %d calls, "
              "%d pattern%s (%d in the Pattern Set)%s.\n" % (
                  path, rec.nnodes - 1, rec.nfuncs, t["invocations"], rec.npatterns,
                  "" if rec.npatterns == 1 else "s",
                  sum(1 for p in rec.patterns() if p["in_pattern_set"]), costs))
    _warn(_session.check_program(force=True))
    _warn_unprobe(since)
    return rec


class VarperfLoad(gdb.Command):
    """Load a varperf recording of the program being debugged.

Usage: varperf load [--raw] [--time=wall|cpu|offcpu] [FILE]

FILE is a data file written by 'varperf record' (default: the setting
'variance data-file', varperf.data).  The file's calling-context tree is
built and analysed as 'varperf report' does, with the probe costs that
'varperf record' calibrated subtracted from the durations; 'info
variance' then maps stops onto it.  With --raw, durations are taken as
measured, probe costs included, as 'varperf report --raw' does.  With
--time=cpu or --time=offcpu, the durations are on-CPU or off-CPU time
only, as with 'varperf report --time' (a recording with off-CPU times,
made with the BPF backend, is needed); with such a recording 'info
variance' shows each context's on-CPU and off-CPU time anyway.  Warns
when the program GDB debugs is not the recorded one or another build of
it (its build-id differs).  A recording that only sampled has no probed
function: 'info variance' and 'varperf break' need probed calls."""

    def __init__(self):
        super().__init__("varperf load", gdb.COMMAND_FILES, gdb.COMPLETE_FILENAME)

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
                                       "be 'wall', 'cpu' or 'offcpu'" % time)
            elif options and a == "--":
                options = False
            elif options and a.startswith("-") and a != "-":
                raise gdb.GdbError("varperf load: unknown option '%s'" % a)
            else:
                files.append(a)
        if len(files) > 1:
            raise gdb.GdbError("varperf load: usage: varperf load [--raw] "
                               "[--time=wall|cpu|offcpu] [FILE]")
        path = os.path.expanduser(files[0] if files else _params["data-file"].value)
        rec = load_recording("varperf load", path, raw, time=time)
        if not rec.nfuncs:
            gdb.write("'%s' has no probed function, only samples: 'info variance' and "
                      "'varperf break' need the calls of probed functions (record with "
                      "--mode=probe; 'varperf report -i %s' shows the samples).\n"
                      % (path, path))


# ---- varperf break: timing invocations ----
#
# Each call of FUNCTION is timed between two stops: a breakpoint on its
# first instruction and breakpoints on its return instructions (so GDB stops
# with the function's frame still there).  Both stops cost time the
# function does not spend: the trap, GDB's work (stepping over the entry
# breakpoint, reading registers, this Python code) and the kernel's.  Two
# clocks are read at each stop:
#
#  - the kernel's accounting of the stopped thread (/proc/PID/task/TID/
#    schedstat: time on a CPU plus time waiting for one), which leaves out
#    everything GDB does while the thread is stopped, but also any time the
#    function sleeps or blocks;
#  - the host's CLOCK_MONOTONIC, which has all of it.
#
# The thread's voluntary context switches (/proc/.../status) tell the two
# cases apart: one stop-and-resume cycle adds a fixed number of them, and a
# function that blocked adds more.  A call that did not block is timed with
# the thread's runnable time, otherwise with the host clock.  The overhead
# of the stop cycle in either clock is measured on the first calls: a third
# breakpoint two instructions after the entry times a cycle around one
# instruction; the median of those samples is subtracted.


class _Calibration:
    """Overhead samples of one stop-and-resume cycle (shared: it measures
    the debugger and the kernel, not the function)."""

    SAMPLES = 16

    def __init__(self):
        self.wall = collections.deque(maxlen=64)
        self.run = collections.deque(maxlen=64)
        self.vol = collections.deque(maxlen=64)

    @staticmethod
    def _median(d):
        if not d:
            return None
        s = sorted(d)
        return s[len(s) // 2]

    def add(self, wall, run, vol):
        self.wall.append(wall)
        if run is not None:
            self.run.append(run)
            self.vol.append(vol)

    def overhead(self, clock):
        return self._median(self.run if clock == "runnable" else self.wall)

    def vol_baseline(self):
        return self._median(self.vol)


_cal = _Calibration()

# $VARPERF_GDB_TRACE names a file that gets one line per timed call (for
# measuring the method; see varperf-gdb(1)).
_trace = None
if os.environ.get("VARPERF_GDB_TRACE"):
    _trace = open(os.environ["VARPERF_GDB_TRACE"], "a", buffering=1)


class _Reading:
    """The clocks of a thread at one stop."""

    __slots__ = ("wall", "run", "vol")

    def __init__(self, thread, native):
        self.wall = time.monotonic_ns()
        self.run = self.vol = None
        if not native:
            return
        pid, lwp = thread.ptid[0], thread.ptid[1]
        try:
            with open("/proc/%d/task/%d/schedstat" % (pid, lwp), "rb") as f:
                a = f.read().split()
            with open("/proc/%d/task/%d/status" % (pid, lwp), "rb") as f:
                data = f.read()
            i = data.index(b"\nvoluntary_ctxt_switches:") + 25
            self.vol = int(data[i:data.index(b"\n", i)])
            self.run = int(a[0]) + int(a[1])
        except (OSError, ValueError, IndexError):
            self.run = self.vol = None


class _Start:
    __slots__ = ("reading", "number", "sp")

    def __init__(self, reading, number, sp):
        self.reading = reading
        self.number = number
        self.sp = sp


def _sp(thread=None):
    """The stack pointer of the stopped thread.  For a native process from
    /proc/PID/task/TID/syscall ("-1 SP PC" while stopped), which costs a
    tenth of making GDB build the frame at a function's entry."""
    if thread is not None and _native():
        try:
            with open("/proc/%d/task/%d/syscall" % thread.ptid[:2], "rb") as f:
                return int(f.read().split()[1], 16)
        except (OSError, ValueError, IndexError):
            pass
    return int(gdb.selected_frame().read_register("sp"))


_native_pid = [None, False]


def _native():
    """Whether the kernel's per-thread accounting of the inferior is
    readable here (a native process), cached per process."""
    inf = gdb.selected_inferior()
    if _native_pid[0] != inf.pid:
        conn = getattr(inf, "connection", None)
        _native_pid[0] = inf.pid
        _native_pid[1] = conn is not None and getattr(conn, "type", None) == "native" and \
            inf.pid > 0 and os.path.exists("/proc/%d/task" % inf.pid)
    return _native_pid[1]


class _EntryBreakpoint(gdb.Breakpoint):
    def __init__(self, owner, spec):
        super().__init__(spec, gdb.BP_BREAKPOINT)
        self.owner = owner

    def stop(self):
        return self.owner.on_entry()


class _ReturnBreakpoint(gdb.Breakpoint):
    def __init__(self, owner, spec):
        super().__init__(spec, gdb.BP_BREAKPOINT, internal=True)
        self.owner = owner

    def stop(self):
        return self.owner.on_return(None, None)


class _CalibrationBreakpoint(gdb.Breakpoint):
    def __init__(self, owner, spec):
        super().__init__(spec, gdb.BP_BREAKPOINT, internal=True)
        self.owner = owner

    def stop(self):
        return self.owner.on_calibration()


class _TailFinish(gdb.FinishBreakpoint):
    """Times a call that may leave through a tail call (no return
    instruction of its own runs): stops in the caller, after the return."""

    def __init__(self, owner, thread, sp):
        super().__init__(gdb.newest_frame(), internal=True)
        self.owner = owner
        self.key = (thread, sp)

    def stop(self):
        return self.owner.on_return(self.key[1], self.key[0])

    def out_of_scope(self):
        self.owner.drop(*self.key)


_slow_breaks = {}  # entry breakpoint number -> SlowBreak


def _is_control(mnemonic):
    return mnemonic.startswith(("j", "call", "ret", "loop", "b", "cb", "tb", "syscall",
                                "sysenter", "int", "ud", "hlt"))


def _mnemonic(asm):
    words = asm.split()
    while words and words[0] in ("rep", "repz", "repe", "repnz", "repne", "bnd", "notrack",
                                 "lock", "data16", "cs", "ds"):
        words = words[1:]
    return (words[0] if words else ""), words[1:]


class SlowBreak:
    """One 'varperf break': stop at FUNCTION's return when a call has taken
    longer than the threshold."""

    def __init__(self, func, symbol, size, module, thr, context_nodes, context_text):
        self.func = func
        self.symbol = symbol
        self.size = size  # from the recording, when GDB has no debug information
        self.module = module  # recorded module index, or None
        self.modpath = None if module is None else _session.rec.header["modules"][module]["path"]
        self.thr = thr
        self.context_nodes = context_nodes
        self.context_text = context_text
        self.pending = {}    # thread number -> {sp: _Start}
        self.cal_pending = {}
        self.calls = 0
        self.ncal = 0
        self.extra = []
        self.cal_bp = None
        self.cal_done = False  # calibrated: cal_bp goes at the next safe point
        self.deleted = False
        self._place()

    def _place(self):
        q = "'%s'" % self.symbol
        try:
            start = int(gdb.parse_and_eval("(unsigned long)&%s" % q))
        except gdb.error:
            if not gdb.current_progspace().filename:
                why = " (no program is loaded)"
            elif gdb.selected_inferior().pid == 0:
                why = " (if it is in a shared library, start the program first)"
            else:
                why = ""
            raise gdb.GdbError("varperf break: no function '%s' in the program%s"
                               % (self.func, why)) from None
        if self.module is not None:
            # the symbol must be in the recorded file: another program may
            # have its own function of that name, or a library one
            lib = gdb.solib_name(start)
            if (self.module == 0) != (lib is None) or \
                    (lib is not None and os.path.basename(lib) != os.path.basename(self.modpath)):
                raise gdb.GdbError("varperf break: '%s' at 0x%x is in '%s', but the recording "
                                   "has it in '%s' (wrong program?)" % (
                                       self.func, start, lib or gdb.current_progspace().filename,
                                       self.modpath))
        end = None
        blk = gdb.block_for_pc(start)
        while blk is not None and blk.function is None:
            blk = blk.superblock
        if blk is not None and blk.start == start:
            end = blk.end
        elif self.size:
            end = start + self.size
        if end is None:
            raise gdb.GdbError("varperf break: cannot tell where '%s' ends (no debug "
                               "information and no size in the recording)" % self.func)
        try:
            arch = gdb.selected_inferior().architecture()
        except (gdb.error, RuntimeError):
            arch = gdb.selected_frame().architecture()
        insns = arch.disassemble(start, end - 1)
        rets, exits = [], False
        for ins in insns:
            mn, ops = _mnemonic(ins["asm"])
            if mn.startswith("ret"):
                rets.append(ins["addr"] - start)
            elif mn.startswith("j") or mn in ("b", "br") or mn.startswith("b."):
                target = ops[0] if ops else ""
                if target.startswith("*") or target.startswith("x") or target.startswith("%"):
                    exits = True  # indirect: a switch table or a tail call
                else:
                    try:
                        t = int(target.split()[0].rstrip(","), 16)
                        if not start <= t < end:
                            exits = True
                    except ValueError:
                        exits = True
        if not rets and not exits:
            raise gdb.GdbError("varperf break: '%s' has no return instruction (it does not "
                               "return)" % self.func)
        self.tail_exits = exits
        # The helpers come before the entry breakpoint in GDB's list (it
        # appends): a 'delete' walking the list keeps a pointer to the
        # breakpoint after the one it deletes, so _on_breakpoint_deleted may
        # delete the helpers at once only if none of them comes after it.
        try:
            self.extra = [_ReturnBreakpoint(self, "*%s+%d" % (q, off)) for off in rets]
            # the calibration cycle spans instruction 2: it must not branch
            if len(insns) >= 3 and not _is_control(_mnemonic(insns[1]["asm"])[0]) and \
                    len(_cal.wall) < 64:
                self.cal_bp = _CalibrationBreakpoint(self, "*%s+%d"
                                                     % (q, insns[2]["addr"] - start))
            self.entry = _EntryBreakpoint(self, "*%s" % q)
        except BaseException:
            self.delete()
            raise
        _slow_breaks[self.entry.number] = self

    # -- the stops --

    def on_entry(self):
        th = gdb.selected_thread()
        if th is None or self.deleted:
            return False
        sp = _sp(th)
        r = _Reading(th, _native())
        key = th.global_num
        pend = self.pending.setdefault(key, {})
        # calls at or below this stack pointer were left without a return
        # (longjmp, exception): forget them
        for s in [s for s in pend if s <= sp]:
            del pend[s]
        self.calls += 1
        pend[sp] = _Start(r, self.calls, sp)
        if self.cal_bp is not None:
            self.cal_pending[key] = sp
        if self.tail_exits:
            try:
                _TailFinish(self, key, sp)
            except (gdb.error, ValueError, RuntimeError):
                pass
        return False

    def on_calibration(self):
        if self.deleted:
            return False
        th = gdb.selected_thread()
        key = th.global_num
        sp = self.cal_pending.pop(key, None)
        st = self.pending.get(key, {}).get(sp) if sp is not None else None
        if st is None:
            return False
        r = _Reading(th, _native())
        if not self.cal_done:
            a = st.reading
            _cal.add(r.wall - a.wall, None if r.run is None or a.run is None else r.run - a.run,
                     None if r.vol is None or a.vol is None else r.vol - a.vol)
            if _trace is not None:
                _trace.write("calibration %s wall %d run %s vol %s\n" % (
                    self.func, _cal.wall[-1], _cal.run[-1] if _cal.run else None,
                    _cal.vol[-1] if _cal.vol else None))
            self.ncal += 1
            # stop() must not delete breakpoints: _reap_calibration does, at
            # the next stop or prompt; until then this one still times the
            # call from here, so calls are measured alike before and after
            self.cal_done = self.ncal >= _Calibration.SAMPLES
        st.reading = r  # time the call from here: the cycle is in both
        return False

    def drop(self, thread, sp):
        self.pending.get(thread, {}).pop(sp, None)

    def on_return(self, sp, thread):
        """At a return instruction (@thread None: the stopped thread and its
        stack pointer) or after a tail-call exit (the key of the call)."""
        if self.deleted:
            return False
        th = gdb.selected_thread()
        key = th.global_num if thread is None else thread
        if sp is None:
            sp = _sp(th)
        pend = self.pending.get(key)
        if not pend:
            return False
        st = pend.pop(sp, None)
        if thread is None:
            for s in [s for s in pend if s < sp]:
                del pend[s]
        if st is None:
            return False
        r = _Reading(th, _native())
        elapsed, clock, overhead = self.measure(st.reading, r)
        if _trace is not None:
            a = st.reading
            _trace.write("call %s %d wall %d run %s vol %s -> %d %s overhead %s\n" % (
                self.func, st.number, r.wall - a.wall,
                None if r.run is None or a.run is None else r.run - a.run,
                None if r.vol is None or a.vol is None else r.vol - a.vol, elapsed,
                clock.split()[0], overhead))
        if elapsed <= self.thr.ns:
            return False
        if self.context_nodes is not None and not self._in_context():
            return False
        self.report(elapsed, clock, overhead, st.number, thread is not None)
        return True

    def measure(self, a, b):
        """(elapsed ns, clock name, overhead subtracted or None)."""
        if a.run is not None and b.run is not None:
            base = _cal.vol_baseline()
            if b.vol - a.vol <= (2 if base is None else base):
                ov = _cal.overhead("runnable")
                return max(0, b.run - a.run - (ov or 0)), "runnable time", ov
        ov = _cal.overhead("wall")
        return max(0, b.wall - a.wall - (ov or 0)), "wall-clock time", ov

    def _in_context(self):
        chain, _ = _session.live_chain(gdb.newest_frame())
        if not chain:
            return False
        nid = _session.rec.lookup([(lf.funcs, lf.callsites) for lf in chain])
        return nid in self.context_nodes

    def report(self, elapsed, clock, overhead, number, after_return):
        rec = _session.rec
        t = lambda v: varperf.format_time(rec, v)
        thr = self.thr
        out = ["varperf: %s took %s, longer than %s (%s)" % (
            self.func, varperf.format_duration(elapsed), varperf.format_duration(thr.ns),
            thr.how if thr.how != "fixed" else "--slower-than")]
        s = thr.stats
        if s:
            sig = thr.sigmas(elapsed)
            out.append("varperf: %s the recorded mean of %s (sigma %s, %d calls%s); %.2f times "
                       "the recorded max of %s" % (
                           "%.1f sigma above" % sig if sig is not None else "compared with",
                           t(s["mean"]), t(s["stddev"]), s["count"],
                           ", context %s" % self.context_text if self.context_text else "",
                           elapsed / s["max"] if s["max"] else float("inf"), t(s["max"])))
        out.append("varperf: call %d since breakpoint %d was set; %s, %s" % (
            number, self.entry.number, clock,
            "%s of debugger overhead subtracted" % varperf.format_duration(overhead)
            if overhead is not None else "debugger overhead not measured yet"))
        if after_return:
            out.append("varperf: %s left through a tail call: stopped in its caller, after "
                       "the return" % self.func)
        gdb.write("".join(x + "\n" for x in out))

    def delete(self):
        self.deleted = True
        for bp in self.extra + ([self.cal_bp] if self.cal_bp else []):
            if bp.is_valid():
                bp.delete()
        self.extra = []
        self.cal_bp = None
        self.pending.clear()

    def set_enabled(self, on):
        for bp in self.extra + ([self.cal_bp] if self.cal_bp else []):
            if bp.is_valid():
                bp.enabled = on


def _on_breakpoint_deleted(bp):
    """The user deleted a varperf breakpoint: its helpers go too, at once.
    Not through gdb.post_event: an event still queued when GDB exits (as
    after 'delete' in batch mode) is freed after the Python interpreter is,
    and GDB crashes in PyGILState_Ensure.  Deleting now is safe even while
    'delete' walks GDB's list: the helpers come before @bp in it."""
    sb = _slow_breaks.pop(bp.number, None)
    if sb is not None:
        sb.delete()


def _reap_calibration(*_):
    """Delete the calibration breakpoints that stopped being needed during
    a stop() (which must not delete breakpoints): called where GDB is
    outside its breakpoints, at a stop, an exit, a prompt or a varperf
    break."""
    for sb in list(_slow_breaks.values()):
        if sb.cal_done and sb.cal_bp is not None:
            bp, sb.cal_bp = sb.cal_bp, None
            sb.cal_pending.clear()
            if bp.is_valid():
                bp.delete()


def _on_breakpoint_modified(bp):
    sb = _slow_breaks.get(bp.number)
    if sb is not None and sb.extra and sb.extra[0].is_valid() and \
            sb.extra[0].enabled != bp.enabled:
        sb.set_enabled(bp.enabled)


def _on_exited(event):
    for sb in _slow_breaks.values():
        sb.pending.clear()
        sb.cal_pending.clear()
    _reap_calibration()


class VarperfBreak(gdb.Command):
    """Stop when a call of a function takes unusually long.

Usage: varperf break FUNCTION [--sigma K | --percentile P | --slower-than TIME]
                              [--context CHAIN]

Sets a breakpoint that stops at FUNCTION's return, with its frame still
there to inspect, only when that call ran longer than a threshold taken
from the loaded recording's statistics of FUNCTION (merged over all its
calling contexts, or over those matching --context):

  --sigma K          mean + K standard deviations (default: the setting
                     'variance threshold', 3)
  --percentile P     the Chebyshev bound of percentile P (0.99 or 99%):
                     since P(X >= mean + k sigma) <= 1/k^2 for any
                     distribution, k = 1/sqrt(1 - P)
  --slower-than TIME a fixed duration (2ms, 500us, 1.5s); works without
                     a recording
  --context CHAIN    only calls in these calling contexts count: CHAIN is
                     outermost first, '/'-separated, e.g. main/frame/step,
                     and FUNC:LINE also requires the line of the call

On a stop it prints the call's duration and how unusual it is.  Calls
are timed between a stop at FUNCTION's first instruction and one at its
return; the time these stops cost is measured on the first calls and
subtracted (see varperf-gdb(1)).  'delete' and 'disable' the breakpoint
as any other."""

    def __init__(self):
        super().__init__("varperf break", gdb.COMMAND_BREAKPOINTS)

    OPTIONS = ("--sigma", "--percentile", "--slower-than", "--context")

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
                if name not in ("--sigma", "--percentile", "--slower-than", "--context"):
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
                               "--percentile P | --slower-than TIME] [--context CHAIN]")
        given = [o for o in ("--sigma", "--percentile", "--slower-than") if o in opts]
        if len(given) > 1:
            raise gdb.GdbError("varperf break: options '%s' and '%s' cannot be used together"
                               % (given[0], given[1]))
        return func, opts

    def invoke(self, arg, from_tty):
        _reap_calibration()
        self.dont_repeat()
        func, opts = self._parse(gdb.string_to_argv(arg))
        sigma = percentile = slower = None
        try:
            if "--sigma" in opts:
                sigma = float(opts["--sigma"])
                if not math.isfinite(sigma) or sigma <= 0:
                    raise ValueError("invalid value '%s' for '--sigma': must be a number "
                                     "greater than 0" % opts["--sigma"])
            if "--percentile" in opts:
                percentile = varperf.parse_fraction(opts["--percentile"], "percentile")
            if "--slower-than" in opts:
                slower = varperf.parse_duration(opts["--slower-than"])
        except ValueError as e:
            msg = str(e)
            if msg.startswith("could not convert"):
                msg = "invalid value '%s' for '--sigma': must be a number greater than 0" \
                    % opts["--sigma"]
            raise gdb.GdbError("varperf break: %s" % msg) from None
        if sigma is None and percentile is None and slower is None:
            sigma = _params["threshold"].sigma
        rec = _session.rec
        if rec is None and slower is None:
            raise gdb.GdbError("varperf break: no recording loaded (use 'varperf load [FILE]', "
                               "or give --slower-than)")
        symbol, size, module, stats, ctx_nodes = func, 0, None, None, None
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
            thr = varperf.threshold(stats, sigma, percentile, slower)
        except ValueError as e:
            raise gdb.GdbError("varperf break: '%s': %s" % (func, e)) from None
        _warn_unprobe()
        sb = SlowBreak(func, symbol, size, module, thr, set(ctx_nodes) if ctx_nodes else None,
                       opts.get("--context"))
        where = "in context %s" % opts["--context"] if ctx_nodes else "in any context"
        if stats and thr.how != "fixed":
            gdb.write("varperf: breakpoint %d stops at the return of %s when a call (%s) takes "
                      "longer than %s: %s of %d recorded calls (mean %s, sigma %s)\n" % (
                          sb.entry.number, func, where, varperf.format_duration(thr.ns),
                          thr.how, stats["count"], varperf.format_time(rec, stats["mean"]),
                          varperf.format_time(rec, stats["stddev"])))
        else:
            gdb.write("varperf: breakpoint %d stops at the return of %s when a call (%s) takes "
                      "longer than %s\n" % (sb.entry.number, func, where,
                                            varperf.format_duration(thr.ns)))


def register(session):
    """Create the commands and settings (once)."""
    global _session
    if _session is not None:
        return
    # record.py imports this module's helpers: import it once they exist
    from .record import VarperfRecord
    _session = session
    _SetVariance()
    _ShowVariance()
    _params["data-file"] = DataFileParameter()
    _params["threshold"] = ThresholdParameter()
    _params["raw"] = RawParameter()
    _params["contributors"] = ContributorsParameter()
    InfoVariance()
    InfoVarianceFrame()
    InfoVariancePatterns()
    InfoVarianceFunction()
    Varperf()
    VarperfLoad()
    VarperfBreak()
    VarperfRecord()
    gdb.events.breakpoint_deleted.connect(_on_breakpoint_deleted)
    gdb.events.breakpoint_modified.connect(_on_breakpoint_modified)
    gdb.events.exited.connect(_on_exited)
    gdb.events.stop.connect(_reap_calibration)
    gdb.events.before_prompt.connect(_reap_calibration)
