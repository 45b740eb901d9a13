#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# structure-t.py - the C sources keep HACKING's layering rule: no include
# circle anywhere, no arrow against the rule.  From the source alone (no
# build needed).  Speaks TAP on standard output; its diagnostics give the
# counts of the structure (rooms, floors, circles, arrows against the rule).
#
# File A depends on file B when A includes B, or when A is a .c file that
# uses a function or variable that B, another .c file, defines.  For the
# floors, a unit is a .c file with the .h of the same name beside it and
# its private X-internal.h (another header is a unit of its own, and so is
# one that declares the functions of several .c files, as
# gdb-plugin/_varperf.h does).
#
#   rooms    folders holding C sources
#   floors   the longest chain of units of perf-collector/ that depend on
#            each other, a circle counted as one unit
#   circles  sets of two files or more that depend on each other, round
#   arrows   dependencies against HACKING's rule: cli/ -> report/,
#            perf-collector/ -> core/, gdb-plugin/ -> core/, util/ for
#            all but core/ (and gdb-plugin/); in perf-collector/,
#            record/ -> probes/, sampling/ -> unwind/ -> symbols/ -> kernel/,
#            each folder only on those below it
#
# Environment: top_srcdir.  Outside make check:
#   structure-t.py --counts [--rev REV] [--place-as REV2]
# prints the counts of the work tree, or of commit REV of the git
# repository at top_srcdir (--place-as: a perf-collector/ file without a
# folder is placed where commit REV2 has it, to judge an older flat tree
# by the rule of the folders).

import os
import re
import subprocess
import sys

TOPS = ["cli", "core", "gdb-plugin", "perf-collector", "report", "util"]
# may depend on (besides itself)
ALLOWED = {
    "cli": {"report", "perf-collector", "core", "util"},
    "report": {"core", "util"},
    "perf-collector": {"core", "util"},
    "gdb-plugin": {"core"},
    "util": set(),
    "core": set(),
}
# perf-collector/'s folders, a higher one on those below it only
FLOOR = {"record": 4, "probes": 3, "sampling": 3, "unwind": 2, "symbols": 1, "kernel": 0}

top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))


def git(*args):
    return subprocess.run(["git", "-C", top_srcdir] + list(args), check=True,
                          stdout=subprocess.PIPE, universal_newlines=True).stdout


def sources(rev):
    """path -> text of the C sources of the product folders."""
    out = {}
    if rev:
        for p in git("ls-tree", "-r", "--name-only", rev, "--", *TOPS).split("\n"):
            if p.endswith((".c", ".h")) and not p.endswith(".bpf.c"):
                out[p] = git("show", "%s:%s" % (rev, p))
        return out
    try:
        # in a git work tree, what it tracks (no generated sources)
        tracked = subprocess.run(["git", "-C", top_srcdir, "ls-files", "--", *TOPS],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True).stdout.split("\n")
    except OSError:
        tracked = []
    tracked = [p for p in tracked if p.endswith((".c", ".h")) and not p.endswith(".bpf.c")]
    if tracked:
        for p in tracked:
            with open(os.path.join(top_srcdir, p), encoding="utf-8", errors="replace") as fh:
                out[p] = fh.read()
        return out
    for top in TOPS:
        for d, dirs, files in os.walk(os.path.join(top_srcdir, top)):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            for f in files:
                if f.endswith((".c", ".h")) and not f.endswith(".bpf.c"):
                    full = os.path.join(d, f)
                    with open(full, encoding="utf-8", errors="replace") as fh:
                        out[os.path.relpath(full, top_srcdir)] = fh.read()
    return out


comment_re = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
include_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a definition at file scope: not static, not a prototype
func_re = re.compile(r'^(?!static\b|extern\b|typedef\b|return\b|else\b)[A-Za-z_][\w \t\*]*?'
                     r'\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{', re.M)
var_re = re.compile(r'^(?!static\b|extern\b|typedef\b|return\b|struct\s+\w+\s*\{|enum\b|union\b)'
                    r'(?:const\s+)?(?:struct\s+)?[A-Za-z_]\w*[\s\*]+(?:const\s+)?([A-Za-z_]\w*)'
                    r'\s*(?:\[[^\]]*\])?\s*(?:=[^;]*)?;', re.M)
ident_re = re.compile(r'\b[A-Za-z_]\w*\b')


proto_re = re.compile(r'^(?!static\b|typedef\b|#)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)'
                      r'[^;{]*;', re.M)
shared = set()  # headers that declare the functions of several .c files


def unit_of(path):
    if path in shared:
        return path
    if path.endswith("-internal.h"):
        return path[:-len("-internal.h")]
    return path[:-2]


def resolve(path, inc, files):
    """The repository path of "inc" included from path, or None."""
    for cand in (os.path.normpath(os.path.join(os.path.dirname(path), inc)), inc):
        if cand in files:
            return cand
    return None


def graph(files):
    defs = {}
    code = {p: comment_re.sub(" ", t) for p, t in files.items()}
    for p, t in code.items():
        if p.endswith(".c"):
            for name in func_re.findall(t) + var_re.findall(t):
                defs.setdefault(name, set()).add(p)
    shared.clear()
    for p, t in code.items():
        if p.endswith(".h"):
            where = set()
            for name in proto_re.findall(t):
                where |= defs.get(name, set())
            if len(where) > 1:
                shared.add(p)
    deps = {p: set() for p in files}
    for p, t in files.items():
        for inc in include_re.findall(t):
            q = resolve(p, inc, files)
            if q and q != p:
                deps[p].add(q)
        if p.endswith(".c"):
            for name in set(ident_re.findall(code[p])):
                owners = defs.get(name, ())
                if p not in owners:
                    deps[p].update(owners)
    return deps


def units(deps):
    """The dependencies of files as those of their units."""
    out = {}
    for p, ds in deps.items():
        u = unit_of(p)
        out.setdefault(u, set()).update(unit_of(q) for q in ds if unit_of(q) != u)
    return out


def sccs(deps):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in deps.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def floors(deps, units):
    """The longest chain of @units, circles condensed."""
    comp_of = {}
    for i, c in enumerate(sccs({u: deps[u] & units for u in units})):
        for u in c:
            comp_of[u] = i
    cdeps = {}
    for u in units:
        cdeps.setdefault(comp_of[u], set()).update(
            comp_of[w] for w in deps[u] & units if comp_of[w] != comp_of[u])
    memo = {}

    def height(c):
        if c not in memo:
            memo[c] = 1 + max((height(d) for d in cdeps[c]), default=0)
        return memo[c]

    return max((height(c) for c in cdeps), default=0)


def place(path, placed):
    """(top folder, perf-collector/ folder or None)."""
    parts = placed.get(path, path).split("/")
    return parts[0], parts[1] if parts[0] == "perf-collector" and len(parts) > 2 else None


def against_rule(deps, placed):
    bad = []
    for u in sorted(deps):
        for w in sorted(deps[u]):
            (tu, fu), (tw, fw) = place(u, placed), place(w, placed)
            if tu != tw:
                ok_ = tw in ALLOWED[tu]
            elif tu == "perf-collector" and fu != fw:
                ok_ = fu in FLOOR and fw in FLOOR and FLOOR[fw] < FLOOR[fu]
            else:
                ok_ = True
            if not ok_:
                bad.append("%s -> %s" % (u, w))
    return bad


def counts(files, placed):
    deps = graph(files)
    udeps = units(deps)
    rooms = sorted(set(os.path.dirname(p) for p in files))
    pc = set(u for u in udeps if u.startswith("perf-collector/"))
    circles = [c for c in sccs(deps) if len(c) > 1]
    return udeps, rooms, floors(udeps, pc), circles, against_rule(deps, placed)


def placement(rev_from, rev_to):
    """perf-collector/ files of rev_from -> their path in rev_to (renames)."""
    out = {}
    for line in git("diff", "-M", "--name-status", rev_from, rev_to).split("\n"):
        f = line.split("\t")
        if (len(f) == 3 and f[0].startswith("R") and f[1].startswith("perf-collector/") and
                f[1].endswith((".c", ".h"))):
            out[f[1]] = f[2]
    return out


def chain_problems():
    """What breaks the one chain of the tests that record (their .log
    targets in Makefile.am), which make -j must not run side by side: a
    test out of it, or two after one."""
    text = open(os.path.join(top_srcdir, "Makefile.am")).read().replace("\\\n", " ")
    tests = sorted(set(re.findall(r"tests/(?:perf-collector|gdb-plugin)/[\w-]+-t\.sh", text)))
    # what records or runs GDB on a program times it; report-crafted-t's
    # one record (--phase1 of a FIFO) fails before it runs anything
    recording = [t for t in tests
                 if os.path.exists(os.path.join(top_srcdir, t)) and
                 not t.endswith("/report-crafted-t.sh") and
                 re.search(r'"\$VARPERF"( -[\w-]+)* record |gdb -batch',
                           open(os.path.join(top_srcdir, t)).read())]
    after = {}
    for target, rest in re.findall(r"^(tests/[\w/-]+-t)\.log:(.*)$", text, re.M):
        for d in rest.split():
            if d.endswith("-t.log"):
                after.setdefault(d[:-len(".log")], []).append(target)
    logs = set(t for t, _ in re.findall(r"^(tests/[\w/-]+-t)\.log:(.*)$", text, re.M))
    problems = ["%s is in no chain" % t for t in recording
                if t[:-len(".sh")] not in logs]
    problems += ["%s runs before %s at once" % (d, " and ".join(n))
                 for d, n in sorted(after.items())
                 if len([x for x in n if x + ".sh" in recording]) > 1]
    return problems


def main():
    args = sys.argv[1:]
    if args and args[0] == "--counts":
        rev = args[args.index("--rev") + 1] if "--rev" in args else None
        placed = {}
        if "--place-as" in args:
            placed = placement(rev or "HEAD", args[args.index("--place-as") + 1])
        files = sources(rev)
        deps, rooms, fl, circles, bad = counts(files, placed)
        print("rooms %d (%s)" % (len(rooms), " ".join(rooms)))
        print("floors of perf-collector/ %d (%d units)"
              % (fl, len([u for u in deps if u.startswith("perf-collector/")])))
        print("circles %d%s" % (len(circles), "".join("\n  " + " <-> ".join(c) for c in circles)))
        print("arrows against the rule %d%s" % (len(bad), "".join("\n  " + b for b in bad)))
        return 0
    files = sources(None)
    if not any(p.startswith("core/") for p in files):
        print("Bail out! no sources in %s" % top_srcdir)
        return 255
    deps, rooms, fl, circles, bad = counts(files, {})
    print("1..3")
    print("%s 1 - no circle among the C sources"
          % ("ok" if not circles else "not ok"))
    for c in circles:
        print("# circle: " + " <-> ".join(c))
    print("%s 2 - no dependency against HACKING's layering rule" % ("ok" if not bad else "not ok"))
    for b in bad:
        print("# against the rule: " + b)
    print("# %d rooms, %d floors in perf-collector/, %d circles, %d arrows against the rule"
          % (len(rooms), fl, len(circles), len(bad)))
    broken = chain_problems()
    print("%s 3 - the tests that record run one at a time: one chain of Makefile.am"
          % ("ok" if not broken else "not ok"))
    for b in broken:
        print("# " + b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
