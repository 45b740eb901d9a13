# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb.slowbreak - the breakpoint of `varperf break`: SlowBreak
times every call of a function between a stop at its entry and one at its
return, and stops there when the call took longer than a threshold.
register() connects the GDB events it needs; the command that parses the
arguments and makes a SlowBreak is in commands.py.
"""

import collections
import os
import time

import gdb

import varperf
import varperf.gdb

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
# the thread's runnable time, otherwise with the host clock.  With a
# recording loaded with --time=cpu, whose durations are on-CPU time, calls
# are timed with the thread's on-CPU time alone (the first schedstat
# field): the same kind of time as the threshold, and the waits for a CPU
# after each resume, which a busy machine makes long, are not in it.  The overhead
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
        self.cpu = collections.deque(maxlen=64)
        self.vol = collections.deque(maxlen=64)

    @staticmethod
    def _median(d):
        if not d:
            return None
        s = sorted(d)
        return s[len(s) // 2]

    def add(self, wall, run, vol, cpu=None):
        self.wall.append(wall)
        if run is not None:
            self.run.append(run)
            self.vol.append(vol)
            self.cpu.append(cpu)

    def overhead(self, clock):
        return self._median({"runnable": self.run, "on-CPU": self.cpu}.get(clock, self.wall))

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

    __slots__ = ("wall", "run", "vol", "cpu")

    def __init__(self, thread, native):
        self.wall = time.monotonic_ns()
        self.run = self.vol = self.cpu = None
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
            self.cpu = int(a[0])
            self.run = self.cpu + int(a[1])
        except (OSError, ValueError, IndexError):
            self.run = self.vol = self.cpu = None


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

    def __init__(self, session, func, symbol, size, module, thr, context_nodes,
                 context_text):
        self.session = session  # the plugin's Session: the recording
        self.func = func
        self.symbol = symbol
        self.size = size  # from the recording, when GDB has no debug information
        self.module = module  # recorded module index, or None
        self.modpath = None if module is None else \
            session.rec.header["modules"][module]["path"]
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
                     None if r.vol is None or a.vol is None else r.vol - a.vol,
                     None if r.cpu is None or a.cpu is None else r.cpu - a.cpu)
            if _trace is not None:
                _trace.write("calibration %s wall %d run %s vol %s\n" % (
                    self.func, _cal.wall[-1], _cal.run[-1] if _cal.run else None,
                    _cal.vol[-1] if _cal.vol else None))
            self.ncal += 1
            # stop() must not delete breakpoints: reap_calibration does, at
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
        rec = self.session.rec
        if rec is not None and rec.time == "cpu" and a.cpu is not None and b.cpu is not None:
            ov = _cal.overhead("on-CPU")
            return max(0, b.cpu - a.cpu - (ov or 0)), "on-CPU time", ov
        if a.run is not None and b.run is not None:
            base = _cal.vol_baseline()
            if b.vol - a.vol <= (2 if base is None else base):
                ov = _cal.overhead("runnable")
                return max(0, b.run - a.run - (ov or 0)), "runnable time", ov
        ov = _cal.overhead("wall")
        return max(0, b.wall - a.wall - (ov or 0)), "wall-clock time", ov

    def _in_context(self):
        chain, _ = self.session.live_chain(gdb.newest_frame())
        if not chain:
            return False
        nid = self.session.rec.lookup([(lf.funcs, lf.callsites) for lf in chain])
        return nid in self.context_nodes

    def report(self, elapsed, clock, overhead, number, after_return):
        rec = self.session.rec
        t = lambda v: varperf.format_time(rec, v)
        thr = self.thr
        out = ["varperf: %s took %s, longer than %s (%s)" % (
            self.func, varperf.format_duration(elapsed), varperf.format_duration(thr.ns),
            thr.how if thr.how != "fixed" else "--slower-than")]
        s = thr.stats
        if s and thr.percentile is not None:
            faster = thr.faster(elapsed)
            out.append("varperf: %s of the %d recorded calls%s were faster; %.2f times the "
                       "recorded max of %s" % (
                           "%.1f%%" % (100.0 * faster) if faster is not None else "?",
                           s["count"],
                           " (context %s)" % self.context_text if self.context_text else "",
                           elapsed / s["max"] if s["max"] else float("inf"), t(s["max"])))
        elif s:
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
        varperf.gdb.write(out)

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


def reap_calibration(*_):
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
    reap_calibration()



_registered = []


def register():
    """Connect the events that keep the breakpoints' helpers in step (once)."""
    if _registered:
        return
    _registered.append(True)
    gdb.events.breakpoint_deleted.connect(_on_breakpoint_deleted)
    gdb.events.breakpoint_modified.connect(_on_breakpoint_modified)
    gdb.events.exited.connect(_on_exited)
    gdb.events.stop.connect(reap_calibration)
    gdb.events.before_prompt.connect(reap_calibration)
