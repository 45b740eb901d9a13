# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb - the GDB side of the varperf plugin: the loaded recording
and the mapping of GDB's frames onto its calling-context tree.

A frame is mapped by address: its pc (a caller frame's pc is a return
address, so pc - 1 lies in the call) is turned into a file and a link-time
address with the process's memory map and the file's program headers,
which is what the recorder stored for functions and call sites.  For a
rebuilt program (other build-id), names and source lines stand in.
load_recording() makes a data file the session's recording, for the
commands that load one.  The commands are in the modules of this package
(commands.py adds them all); this one imports none of them.
"""

import bisect
import functools
import os
import struct

import gdb

import varperf

# Frames walked at most from the selected frame outwards.
MAX_FRAMES = 8192


class ElfFile:
    """Program headers and build-id of an ELF file, read once per file."""

    _cache = {}

    def __init__(self, path):
        self.loads = []       # (file offset, vaddr, file size) of PT_LOAD
        self.build_id = None  # hex string
        with open(path, "rb") as f:
            ident = f.read(64)
            if len(ident) < 52 or ident[:4] != b"\x7fELF":
                raise ValueError("not an ELF file")
            bits, order = ident[4], "<" if ident[5] == 1 else ">"
            if bits == 2:
                phoff, = struct.unpack_from(order + "Q", ident, 0x20)
                phentsize, phnum = struct.unpack_from(order + "HH", ident, 0x36)
                fmt = order + "IIQQQQQQ"
            else:
                phoff, = struct.unpack_from(order + "I", ident, 0x1c)
                phentsize, phnum = struct.unpack_from(order + "HH", ident, 0x2a)
                fmt = order + "IIIIIIII"
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            notes = []
            for i in range(phnum):
                ph = struct.unpack_from(fmt, table, i * phentsize)
                if bits == 2:
                    ptype, _, off, vaddr, _, filesz, _, _ = ph
                else:
                    ptype, off, vaddr, _, filesz, _, _, _ = ph
                if ptype == 1:  # PT_LOAD
                    self.loads.append((off, vaddr, filesz))
                elif ptype == 4:  # PT_NOTE
                    notes.append((off, filesz))
            for off, size in notes:
                f.seek(off)
                self._scan_notes(f.read(min(size, 1 << 16)), order)

    def _scan_notes(self, data, order):
        pos = 0
        while pos + 12 <= len(data) and self.build_id is None:
            namesz, descsz, ntype = struct.unpack_from(order + "III", data, pos)
            name_at = pos + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if ntype == 3 and data[name_at:name_at + namesz] == b"GNU\0":  # NT_GNU_BUILD_ID
                self.build_id = data[desc_at:desc_at + descsz].hex()
            pos = desc_at + ((descsz + 3) & ~3)

    @classmethod
    def get(cls, path):
        """The ElfFile of @path, or None when it cannot be read."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_dev, st.st_ino, st.st_mtime_ns)
        if key not in cls._cache:
            try:
                cls._cache[key] = ElfFile(path)
            except (OSError, ValueError, struct.error):
                cls._cache[key] = None
        return cls._cache[key]

    def vaddr_of_offset(self, off):
        """Link-time address of file offset @off, or None."""
        for o, v, size in self.loads:
            if o <= off < o + size:
                return off - o + v
        return None


class AddressMap:
    """Runtime address -> (file, link-time address) of a live native
    process, from /proc/PID/maps and each file's program headers: the
    recorder's own computation, so the numbers compare exactly."""

    def __init__(self, pid):
        self.ranges = []
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6 or not parts[5].startswith("/"):
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                path = parts[5].rstrip("\n")
                if path.endswith(" (deleted)"):
                    path = path[:-len(" (deleted)")]
                self.ranges.append((lo, hi, int(parts[2], 16), path))
        self.ranges.sort()
        self.starts = [r[0] for r in self.ranges]

    def resolve(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0 or addr >= self.ranges[i][1]:
            return None, None
        lo, _, off, path = self.ranges[i]
        elf = ElfFile.get(path)
        return path, elf.vaddr_of_offset(addr - lo + off) if elf else None


class SymbolMap:
    """The fallback for core files and remote targets: the file from GDB,
    and for recorded modules the load bias from a recorded function's
    symbol.  Files that are not recorded modules get no address."""

    def __init__(self, session):
        self.session = session
        self.bias = {}

    def resolve(self, addr):
        path = gdb.solib_name(addr) or gdb.current_progspace().filename
        if path is None:
            return None, None
        m, _ = self.session.module_index(path)
        if m is None:
            return path, None
        if m not in self.bias:
            self.bias[m] = self._bias(m)
        b = self.bias[m]
        return path, None if b is None else addr - b

    def _bias(self, m):
        rec = self.session.rec
        for f in range(rec.nfuncs):
            fn = rec.func(f)
            if fn["module"] != m or not fn["ncontexts"]:
                continue
            try:
                addr = int(gdb.parse_and_eval("(unsigned long)&'%s'" % fn["name"]))
            except gdb.error:
                continue
            return addr - fn["addr"]
        return None


def frame_level(frame):
    """GDB's number of @frame (Frame.level() is GDB 11's)."""
    try:
        return frame.level()
    except AttributeError:
        n = 0
        while frame.newer() is not None:
            frame = frame.newer()
            n += 1
        return n


class LiveFrame:
    """A frame of the live stack that runs a function of the recording."""

    __slots__ = ("frame", "level", "pc", "name", "funcs", "callsites", "ra")

    def __init__(self, frame, level, pc, name, funcs, callsites, ra):
        self.frame = frame
        self.level = level          # GDB's frame number
        self.pc = pc
        self.name = name
        self.funcs = funcs          # recorded function ids it may be
        self.callsites = callsites  # recorded call-site ids of its return address
        self.ra = ra                # its return address, or None

    def where(self):
        """ "file:line" of the call that made this frame, for messages."""
        if self.ra is None:
            return "a frame GDB does not show"
        return describe_pc(self.ra - 1)


def describe_pc(pc):
    """ "file.c:42", or "sym+0x1f" without line information."""
    sal = gdb.find_pc_line(pc)
    if sal.symtab is not None and sal.line:
        return "%s:%d" % (os.path.basename(sal.symtab.filename), sal.line)
    try:
        sym = gdb.execute("info symbol 0x%x" % pc, to_string=True).split(" in section")[0]
        return sym.replace(" + ", "+0x") if "+" not in sym else \
            "%s+0x%x" % (sym.split(" + ")[0], int(sym.split(" + ")[1]))
    except (gdb.error, ValueError, IndexError):
        return "0x%x" % pc


class Session:
    """The recording loaded with `varperf load` and what maps onto it."""

    def __init__(self):
        self.rec = None
        self.path = None
        self._vcg = None
        self.mods = []        # recorded modules: (path, realpath, build-id)
        self._modcache = {}
        self._map = None      # AddressMap or SymbolMap of the current process
        self._map_pid = None
        self.checked_program = None
        gdb.events.new_objfile.connect(self._invalidate)
        gdb.events.clear_objfiles.connect(self._invalidate)
        gdb.events.exited.connect(self._invalidate)

    def _invalidate(self, event=None):
        self._map = None
        self._modcache = {}

    def set(self, rec, path):
        self.rec = rec
        self.path = path
        self._vcg = None
        self.mods = []
        for m in rec.header["modules"]:
            real = os.path.realpath(m["path"]) if m["path"] else ""
            self.mods.append((m["path"], real, m["build_id"] or None))
        self._invalidate()
        self.checked_program = None

    def vcg(self):
        """The recording's Variance Characterization Graph, computed once;
        None when it cannot be built (with a warning)."""
        if self.rec is None:
            return None
        if self._vcg is None:
            try:
                self._vcg = self.rec.vcg()
            except varperf.Error as e:
                warn([e.strerror])
                self._vcg = False
        return self._vcg or None

    def require(self, cmd):
        """The recording, or a GdbError saying that none is loaded."""
        if self.rec is None:
            raise gdb.GdbError("%s: no recording loaded (use 'varperf load [FILE]')" % cmd)
        return self.rec

    # -- files and addresses --

    def module_index(self, path):
        """(recorded module index or None, same build?) of a live file."""
        if path in self._modcache:
            return self._modcache[path]
        real = os.path.realpath(path)
        elf = ElfFile.get(path)
        bid = elf.build_id if elf else None
        ret = (None, True)
        for i, (mpath, mreal, mbid) in enumerate(self.mods):
            if mreal == real:
                ret = (i, mbid is None or bid is None or mbid == bid)
                break
        else:
            for i, (mpath, mreal, mbid) in enumerate(self.mods):
                if bid is not None and mbid == bid:
                    ret = (i, True)
                    break
            else:
                for i, (mpath, mreal, mbid) in enumerate(self.mods):
                    if os.path.basename(mpath) == os.path.basename(path):
                        ret = (i, False)
                        break
        self._modcache[path] = ret
        return ret

    def addrmap(self):
        inf = gdb.selected_inferior()
        if self._map is not None and self._map_pid == inf.pid:
            return self._map
        self._map = None
        conn = getattr(inf, "connection", None)
        native = conn is not None and getattr(conn, "type", None) == "native"
        if native and inf.pid > 0:
            try:
                self._map = AddressMap(inf.pid)
            except OSError:
                self._map = None
        if self._map is None:
            self._map = SymbolMap(self)
        self._map_pid = inf.pid
        return self._map

    def resolve(self, addr):
        amap = self.addrmap()
        path, vaddr = amap.resolve(addr)
        if path is None and isinstance(amap, AddressMap):
            # mapped since we read the map (dlopen): read it again once
            self._map = None
            path, vaddr = self.addrmap().resolve(addr)
        return path, vaddr

    def funcs_at(self, pc, frame):
        """Recorded functions that frame @frame (looked up at @pc) may run."""
        path, vaddr = self.resolve(pc)
        if path is None:
            return []
        m, exact = self.module_index(path)
        if m is None:
            return []
        if exact and vaddr is not None:
            f = self.rec.func_at(m, vaddr)
            return [] if f is None else [f]
        name = frame.name()
        if not name:
            return []
        return [f for f in self.rec.funcs_named(name) if self.rec.func(f)["module"] == m]

    def callsites_at(self, ra):
        """Recorded call sites that return address @ra may be; None (any)
        without a return address: GDB hides the frames past main."""
        rec = self.rec
        if ra is None:
            return None
        path, vaddr = self.resolve(ra)
        m, exact = (None, True) if path is None else self.module_index(path)
        ids = []
        if vaddr is not None and exact:
            ids = rec.callsites_at(m, vaddr)
        if not ids:
            # another build, or no address: the source line of the call
            sal = gdb.find_pc_line(ra - 1)
            if sal.symtab is not None and sal.line:
                ids = rec.callsites_where(file=os.path.basename(sal.symtab.filename),
                                          line=sal.line, module=-1 if m is None else m)
        return ids

    # -- the live stack --

    def live_chain(self, start):
        """The frames from @start outwards that run recorded functions,
        outermost first, and the number of frames walked."""
        chain = []
        newest = gdb.newest_frame()
        # is start's pc exact (innermost, or interrupted by a signal) or a return address?
        newer = start.newer()
        while newer is not None and newer.type() == gdb.INLINE_FRAME:
            newer = newer.newer()
        exact = start == newest or (newer is not None and newer.type() == gdb.SIGTRAMP_FRAME)
        f = start
        walked = 0
        while f is not None and walked < MAX_FRAMES:
            ftype = f.type()
            walked += 1
            if ftype == gdb.NORMAL_FRAME:
                pc = f.pc()
                funcs = self.funcs_at(pc if exact else pc - 1, f)
                if funcs:
                    older = f.older()
                    ra = older.pc() if older is not None else None
                    chain.append(LiveFrame(f, frame_level(f), pc, f.name() or "??", funcs,
                                           self.callsites_at(ra), ra))
                exact = False
            elif ftype == gdb.SIGTRAMP_FRAME:
                exact = True
            elif ftype != gdb.INLINE_FRAME:
                exact = False
            f = f.older()
        chain.reverse()
        return chain, walked

    # -- the program --

    def check_program(self, force=False):
        """Warnings when the program GDB debugs is not the one recorded, or
        another build of it; each program is checked once unless @force."""
        if self.rec is None:
            return []
        prog = gdb.current_progspace().filename
        if not force and prog == self.checked_program:
            return []
        self.checked_program = prog
        if not self.mods:
            return []
        rpath, rreal, rbid = self.mods[0]
        if prog is None:
            return ["no program is loaded: cannot check that '%s' was recorded from it "
                    "(use 'file PROGRAM')" % self.path]
        elf = ElfFile.get(prog)
        bid = elf.build_id if elf else None
        same_file = os.path.realpath(prog) == rreal
        if rbid and bid and rbid == bid:
            return []
        if rbid and bid:
            if same_file or os.path.basename(prog) == os.path.basename(rpath):
                return ["'%s' is not the build that '%s' recorded (build-id %s, recorded %s): "
                        "frames are matched by name and source line"
                        % (prog, self.path, bid, rbid)]
            return ["'%s' was recorded from '%s', not from '%s' (build-ids differ)"
                    % (self.path, rpath, prog)]
        if not same_file and os.path.basename(prog) != os.path.basename(rpath):
            return ["'%s' was recorded from '%s', not from '%s'" % (self.path, rpath, prog)]
        return []


def _stat(pid):
    """(name, state, start time in clock ticks since boot) of process @pid."""
    with open("/proc/%s/stat" % pid, "rb") as f:
        stat = f.read()
    name_end = stat.rfind(b")")
    rest = stat[name_end + 2:].split()
    return stat[stat.find(b"(") + 1:name_end], rest[0], int(rest[19])


def start_time(pid):
    """When process @pid started (for unprobe_running()), or None."""
    try:
        return _stat(pid)[2]
    except (OSError, ValueError, IndexError):
        return None


def unprobe_running(since=None):
    """Whether an earlier `varperf record` is still removing its uprobes (a
    live process named varperf-unprobe; with @since, one started then or
    later, see start_time()): until it is done, a probe at a function's
    entry takes the trap of a GDB breakpoint there."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return False
    for p in pids:
        try:
            name, state, started = _stat(p)
        except (OSError, ValueError, IndexError):
            continue
        if name == b"varperf-unprobe" and state != b"Z" and (since is None or started >= since):
            return True
    return False


session = None


def get_session():
    """The plugin's one Session (created on first use)."""
    global session
    if session is None:
        session = Session()
    return session


def write(lines, stream=None):
    """Print @lines, one a line, under the terminal rule (varperf.term_text):
    names from the recording cannot split a line or drive the terminal."""
    text = "".join(varperf.term_text(line) + "\n" for line in lines)
    if stream is None:
        gdb.write(text)
    else:
        gdb.write(text, stream)


def term_errors(invoke):
    """A command's invoke() whose gdb.GdbError messages follow the terminal
    rule too (they quote names from the recording)."""
    @functools.wraps(invoke)
    def checked(self, arg, from_tty):
        try:
            return invoke(self, arg, from_tty)
        except gdb.GdbError as e:
            raise gdb.GdbError(varperf.term_text(str(e))) from None
    return checked


def warn(msgs):
    """Print each of @msgs as GDB prints a warning."""
    write(["warning: %s" % m for m in msgs], gdb.STDERR)


def warn_unprobe(since=None):
    """Warn while an earlier `varperf record` removes its probes (see
    unprobe_running())."""
    if unprobe_running(since):
        warn(["an earlier 'varperf record' is still removing its probes: breakpoints at the "
              "entry of probed functions do not stop until it is done (a few seconds)"])


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
    s = get_session()
    s.set(rec, path)
    warn(rec.warnings)
    t = rec.totals
    if rec.compensated:
        costs = "; probe costs subtracted"
    elif raw and rec.nfuncs and rec.header.get("probe_costs"):
        costs = "; durations as measured, probe costs included (--raw)"
    else:
        costs = ""
    if rec.time != "wall":
        costs += "; %s time only" % varperf.TIME_NAMES[rec.time]
    write(["Loaded '%s': %d calling contexts of %d probed functions, %d calls, "
           "%d pattern%s (%d in the Pattern Set)%s." % (
               path, rec.nnodes - 1, rec.nfuncs, t["invocations"], rec.npatterns,
               "" if rec.npatterns == 1 else "s",
               sum(1 for p in rec.patterns() if p["in_pattern_set"]), costs)])
    warn(s.check_program(force=True))
    warn_unprobe(since)
    return rec
