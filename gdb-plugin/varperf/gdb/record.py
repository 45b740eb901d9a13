# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb.record - the `varperf record` command of the GDB plugin: run
`varperf record -p PID` on the process being debugged while GDB continues
it, end the recording at the next stop and load it as `varperf load` does.

GDB keeps the process stopped while `varperf record -p PID` attaches (it
needs no ptrace, so both can be attached), then continues it; the first
stop ends the recording.  Breakpoints are not in the process's memory
while it is stopped (GDB inserts them when it resumes), so varperf's
uprobes go in first; a GDB breakpoint on an instruction that is probed
then stops nowhere (the kernel takes the trap as the probe's) until the
probes are removed.  Their removal restores the original instruction, so
it must end before GDB inserts its breakpoints again: `varperf record`
waits for varperf's "varperf-unprobe" process before it returns.

The command is created by commands.register_varperf_commands(), with the
others.
"""

import math
import os
import signal
import threading
import time

import gdb

import varperf
import varperf.gdb

from varperf.gdb import settings


# Longest wait for varperf to attach, and for it to finish after the stop.
ATTACH_TIMEOUT_S = 60
FINISH_TIMEOUT_S = 120
# Longest wait for the probes to be removed.
UNPROBE_WAIT_S = 60

# The options of `varperf record` that take a value (varperf-record(1)), so
# that a value is never taken for an option or an argument.
_RECORD_VALUE_LONG = frozenset((
    "--output", "--mode", "--freq", "--stack-size", "--event", "--precision",
    "--confidence", "--cutoff", "--overhead", "--phase1", "--pid", "--duration",
    "--function", "--exclude", "--lib", "--exit-probes", "--buffer-size"))
_RECORD_VALUE_SHORT = "oFepfm"
_RECORD_FLAGS = frozenset(("--list", "--no-calibrate", "--quiet", "--help"))


class _RecordOptions:
    """What `varperf record` in GDB was given."""

    def __init__(self):
        self.duration = None   # seconds
        self.output = None
        self.quiet = False
        self.listing = False
        self.mode = None
        self.exit_probes = False
        self.args = []         # for varperf record


class _Stopper:
    """Stops the program being debugged from another thread (the --duration
    timer, the end of varperf's output) with a SIGINT, which GDB
    intercepts and does not pass on.  Only while armed, that is while
    `varperf record` continues the program: a late timer cannot stop a
    later 'continue'.  At most once; the reason is kept."""

    def __init__(self, pid):
        self.pid = pid
        self.lock = threading.Lock()
        self.armed = False
        self.reason = None
        self.pidfd = None
        try:
            # a pidfd cannot signal another process that got the pid
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pass

    def arm(self):
        with self.lock:
            self.armed = True

    def fire(self, reason):
        with self.lock:
            if not self.armed or self.reason is not None:
                return
            self.reason = reason
            try:
                if self.pidfd is not None:
                    signal.pidfd_send_signal(self.pidfd, signal.SIGINT)
                else:
                    os.kill(self.pid, signal.SIGINT)
            except OSError:
                pass

    def disarm(self):
        """No more stops; returns the reason of the one made, or None."""
        with self.lock:
            self.armed = False
            reason = self.reason
            fd, self.pidfd = self.pidfd, None
        if fd is not None:
            os.close(fd)
        return reason


class _StopEvents:
    """The last stop or exit event while connected."""

    def __init__(self):
        self.event = None
        gdb.events.stop.connect(self._on)
        gdb.events.exited.connect(self._on)

    def _on(self, event):
        self.event = event

    def close(self):
        gdb.events.stop.disconnect(self._on)
        gdb.events.exited.disconnect(self._on)


def _relay(lines, quiet):
    """Print varperf's @lines (with @quiet, its errors and warnings only)."""
    for line in lines:
        bad = line.startswith(("varperf: error: ", "varperf: warning: "))
        if bad or not quiet:
            varperf.gdb.write([line], gdb.STDERR if bad else gdb.STDOUT)
    return lines


def _status_text(status):
    if status is not None and status < 0:
        try:
            return "was killed by %s" % signal.Signals(-status).name
        except ValueError:
            return "was killed by signal %d" % -status
    return "exited with status %s" % status


def _sigint_handled():
    """Whether GDB stops on SIGINT and keeps it from the program ('handle
    SIGINT stop nopass', its default), as --duration needs."""
    try:
        out = gdb.execute("info signals SIGINT", to_string=True)
    except gdb.error:
        return True
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "SIGINT":
            return f[1] == "Yes" and f[3] == "No"
    return True


def _wait_unprobe(since):
    """Wait until varperf has removed its probes (see the module
    docstring): a process varperf-unprobe started @since (varperf's start
    time) or later."""
    start = time.monotonic()
    said = False
    try:
        while varperf.gdb.unprobe_running(since):
            waited = time.monotonic() - start
            if waited > UNPROBE_WAIT_S:
                return  # varperf load warns
            if not said and waited > 1:
                gdb.write("Waiting for varperf to remove its probes...\n")
                said = True
            time.sleep(0.05)
    except KeyboardInterrupt:
        pass


class VarperfRecord(gdb.Command):
    """Record the program as it continues, then load the recording.

Usage: varperf record [--duration SECONDS] [-o FILE] [RECORD-OPTIONS...]

Attaches 'varperf record -p PID' to the process being debugged (which must
be running, stopped in GDB), continues it and, when it stops again (at a
breakpoint, on a signal, on Ctrl-C, at its exit, or after SECONDS), ends
the recording, prints varperf's summary and loads FILE as 'varperf load'
does.  The process keeps running under GDB, stopped where it stopped.

  --duration SECONDS  stop the program after SECONDS (with a SIGINT that
                      GDB intercepts: the program does not receive it)
  -o, --output FILE   the data file (default: the setting 'variance
                      data-file', varperf.data)
  -q, --quiet         show only varperf's errors and warnings
  --list              list the functions varperf would probe, and return
                      without continuing the program (with --mode=probe
                      unless another mode is given: auto mode chooses only
                      after sampling the running program)

Other options go to 'varperf record' as they are (see varperf-record(1)):
--mode=probe times every call of the probed functions, which is what
'info variance' and 'varperf break' need; --mode=sample only samples
call stacks; -f GLOB probes only the functions matching GLOB.  Unless
--exit-probes is given, exits are probed on the functions' return
instructions (--exit-probes=ret, when this varperf has capstone), so that
GDB sees the program's stack as it is.  While recording, a breakpoint on
an instruction that varperf probes (the first instruction of a probed
function, its return instructions) does not stop.  The varperf run is
$VARPERF, else the one installed with the plugin, else varperf from PATH."""

    def __init__(self):
        super().__init__("varperf record", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE)

    @staticmethod
    def _duration(v):
        try:
            d = float(v)
            if not math.isfinite(d) or d <= 0:
                raise ValueError
        except ValueError:
            raise gdb.GdbError("varperf record: invalid value '%s' for '--duration': "
                               "must be a number of seconds greater than 0" % v) from None
        return d

    def _parse(self, argv):
        o = _RecordOptions()
        i = 0

        def value(name):
            nonlocal i
            if i >= len(argv):
                raise gdb.GdbError("varperf record: option '%s' needs a value" % name)
            i += 1
            return argv[i - 1]

        while i < len(argv):
            a = argv[i]
            i += 1
            if a.startswith("--") and len(a) > 2:
                name, eq, val = a.partition("=")
                if name in _RECORD_VALUE_LONG and not eq:
                    val = value(name)
                if name == "--duration":
                    o.duration = self._duration(val)
                elif name == "--output":
                    o.output = val
                elif name == "--quiet":
                    o.quiet = True
                elif name in ("--pid", "--help"):
                    raise gdb.GdbError("varperf record: option '%s' is not for GDB: it records "
                                       "the process being debugged (see 'help varperf "
                                       "record')" % name)
                elif name in _RECORD_VALUE_LONG:
                    o.mode = val if name == "--mode" else o.mode
                    o.exit_probes = o.exit_probes or name == "--exit-probes"
                    o.args.append("%s=%s" % (name, val))
                else:
                    o.listing = o.listing or a == "--list"
                    o.args.append(a)
                    # an option varperf has and this list does not: the next
                    # word, when not an option, is its value
                    if not eq and name not in _RECORD_FLAGS and i < len(argv) and \
                            not argv[i].startswith("-"):
                        o.args.append(value(name))
            elif a.startswith("-") and len(a) > 1 and a != "--":
                c = a[1]
                if c in _RECORD_VALUE_SHORT:
                    val = a[2:] or value(a)
                    if c == "o":
                        o.output = val
                    elif c == "p":
                        raise gdb.GdbError("varperf record: option '-p' is not for GDB: it "
                                           "records the process being debugged")
                    else:
                        o.args += [a[:2], val]
                elif a == "-q":
                    o.quiet = True
                elif a == "-h":
                    raise gdb.GdbError("varperf record: see 'help varperf record'")
                else:
                    o.args.append(a)
            else:
                raise gdb.GdbError("varperf record: unexpected argument '%s' (it records the "
                                   "process being debugged)" % a)
        return o

    @staticmethod
    def _live_pid():
        inf = gdb.selected_inferior()
        conn = getattr(inf, "connection", None)
        ctype = getattr(conn, "type", None) if conn is not None else None
        if inf.pid <= 0 or not inf.threads() or ctype == "core":
            raise gdb.GdbError("varperf record: the program is not being run")
        if ctype not in (None, "native"):
            raise gdb.GdbError("varperf record: process %d is not a process of this machine "
                               "(a %s target): varperf attaches to local processes"
                               % (inf.pid, ctype))
        th = gdb.selected_thread()
        if th is not None and th.is_running():
            raise gdb.GdbError("varperf record: the program is running (interrupt it first)")
        return inf.pid

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        o = self._parse(gdb.string_to_argv(arg))
        pid = self._live_pid()
        if o.duration is not None and not _sigint_handled():
            raise gdb.GdbError("varperf record: --duration stops the program with a SIGINT, "
                               "which GDB must stop on and not pass on ('handle SIGINT stop "
                               "nopass')")
        program = varperf.find_program()
        if program is None:
            raise gdb.GdbError("varperf record: cannot find the varperf program (set VARPERF "
                               "to its path, or put it in PATH)")
        path = os.path.expanduser(o.output or settings.data_file())
        args = ["-o", path] + o.args
        if o.listing and o.mode in (None, "auto"):
            # auto mode lists what it chose after sampling the program,
            # which stays stopped here: list what probe mode would probe
            args.append("--mode=probe")
        if not o.exit_probes and o.mode != "sample" and \
                varperf.has_build_option(program, "capstone"):
            args.insert(2, "--exit-probes=ret")
        stopper = _Stopper(pid)
        try:
            rp = varperf.RecordProcess(program, pid, args,
                                       on_end=lambda: stopper.fire("varperf"))
        except OSError as e:
            stopper.disarm()
            raise gdb.GdbError("varperf record: cannot run '%s': %s"
                               % (program, e.strerror)) from None
        since = varperf.gdb.start_time(rp.proc.pid)
        try:
            if self._attach(rp, o, program):
                self._record(rp, o, stopper, path, since, from_tty)
        finally:
            stopper.disarm()
            if rp.poll() is None:
                # interrupted, or an error on the way: end it, or kill it
                rp.interrupt()
                if rp.wait(5) is None:
                    rp.kill()
                    rp.wait(5)

    def _attach(self, rp, o, program):
        """Wait until varperf records; False when it had nothing to record
        (--list), a GdbError when it failed."""
        deadline = time.monotonic() + ATTACH_TIMEOUT_S
        seen = []
        failed = False

        def relay(lines):
            # its error (and the usage after it) make the GdbError below
            nonlocal failed
            for line in lines:
                failed = failed or line.startswith("varperf: error: ")
                if not failed:
                    _relay([line], o.quiet and not o.listing)
                seen.append(line)

        try:
            while not rp.attached.is_set():
                relay(rp.take_lines())
                if rp.ended.is_set():
                    break
                if time.monotonic() > deadline:
                    raise gdb.GdbError("varperf record: varperf did not attach to process %d "
                                       "within %d s" % (rp.pid, ATTACH_TIMEOUT_S))
                rp.attached.wait(0.05)
        except KeyboardInterrupt:
            raise gdb.GdbError("varperf record: interrupted before the recording began") \
                from None
        if rp.attached.is_set():
            relay(rp.take_lines())
            return True
        status = rp.wait(10)
        relay(rp.take_lines())
        if status == 0 and o.listing:
            return False
        err = varperf.RecordProcess.error_of(seen)
        if err:
            raise gdb.GdbError("varperf record: %s" % err)
        raise gdb.GdbError("varperf record: '%s' %s before recording" % (
            program, _status_text(status)))

    def _record(self, rp, o, stopper, path, since, from_tty):
        varperf.gdb.write(["Recording process %d into '%s' until the program stops%s." % (
            rp.pid, path, ", at most %g s" % o.duration if o.duration else
            " (Ctrl-C stops it)")])
        timer = None
        if o.duration:
            timer = threading.Timer(o.duration, stopper.fire, ("duration",))
            timer.daemon = True
        watch = _StopEvents()
        failed = None
        stopper.arm()
        try:
            if timer is not None:
                timer.start()
            gdb.execute("continue", from_tty)
        except gdb.error as e:
            failed = e
        finally:
            if timer is not None:
                timer.cancel()
            reason = stopper.disarm()
            watch.close()
        ev = watch.event
        exited = isinstance(ev, gdb.ExitedEvent)
        sigint = isinstance(ev, gdb.SignalEvent) and ev.stop_signal == "SIGINT"
        if reason == "duration" and sigint:
            gdb.write("Stopped after %g s (--duration); the program does not receive this "
                      "SIGINT.\n" % o.duration)
        elif reason == "duration" and not exited:
            varperf.gdb.warn(["varperf record: the --duration timer ran out as the program "
                              "stopped: the next 'continue' may stop at once with SIGINT"])
        status, seen = self._finish(rp, o, exited)
        _wait_unprobe(since)
        err = varperf.RecordProcess.error_of(seen)
        # (GDB reaps any child that exits while the program runs, its
        # status then reads 0: what varperf said, or that it ended, tells)
        if reason == "varperf" and not exited:
            raise gdb.GdbError("varperf record: varperf ended before the program stopped%s; "
                               "GDB stopped it, and '%s' may be incomplete"
                               % (": " + err if err else "", path))
        if err is not None or status != 0:
            raise gdb.GdbError("varperf record: %s" % (
                err or "varperf %s" % _status_text(status)))
        rec = varperf.gdb.load_recording("varperf record", path, since=since)
        if not rec.nfuncs:
            varperf.gdb.write(["'%s' has samples only, no probed function: 'info variance' and "
                               "'varperf break' need the calls of probed functions.  Record "
                               "them with 'varperf record --mode=probe' (with -f GLOB to probe "
                               "only some); 'varperf report -i %s' shows the samples."
                               % (path, path)])
        if failed is not None:
            raise gdb.GdbError("varperf record: %s" % failed)

    def _finish(self, rp, o, exited):
        """End the recording (SIGINT to varperf, unless it has ended: after
        the program's exit it ends by itself), wait for it and relay what
        it says; its exit status and lines."""
        seen = []
        try:
            if exited:
                rp.ended.wait(2.0)
            rp.interrupt()
            deadline = time.monotonic() + FINISH_TIMEOUT_S
            status = None
            while status is None:
                seen += _relay(rp.take_lines(), o.quiet)
                if time.monotonic() > deadline:
                    rp.kill()
                    raise gdb.GdbError("varperf record: varperf did not finish within %d s "
                                       "(killed it)" % FINISH_TIMEOUT_S)
                status = rp.wait(0.05)
        except KeyboardInterrupt:
            rp.kill()
            raise gdb.GdbError("varperf record: interrupted: varperf was killed") from None
        seen += _relay(rp.take_lines(), o.quiet)
        return status, seen
