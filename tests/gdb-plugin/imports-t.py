#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# imports-t.py - the GDB plugin's files depend on each other in one
# direction only.  From the source, without importing anything (no GDB
# needed): the modules of the varperf package import (or use through an
# imported package, as varperf.gdb.commands.X) each other without a
# cycle, never inside a function (an import put off to dodge a cycle), and
# never a name that starts with '_' from another of them; and no two files
# of the _varperf extension include each other's header.  Speaks TAP on
# standard output.
#
# Environment: top_srcdir (the plugin is in $top_srcdir/gdb-plugin).

import ast
import os
import re
import sys

_count = 0


def ok(cond, desc, diag=()):
    global _count
    _count += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _count, desc))
    if not cond:
        for line in diag:
            print("# " + line)


top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))
plugin = os.path.join(top_srcdir, "gdb-plugin")
if not os.path.isfile(os.path.join(plugin, "varperf", "__init__.py")):
    print("Bail out! no varperf package in %s" % plugin)
    sys.exit(255)

# ---- the modules of the package: name -> (path, is a package) ----

modules = {}
for dirpath, dirnames, filenames in os.walk(os.path.join(plugin, "varperf")):
    dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
    rel = os.path.relpath(dirpath, plugin).split(os.sep)
    for f in sorted(filenames):
        if f.endswith(".py"):
            name = ".".join(rel if f == "__init__.py" else rel + [f[:-3]])
            modules[name] = (os.path.join(dirpath, f), f == "__init__.py")


def resolve(mod, level, target):
    """The absolute name of `from <level dots><target> import ...` in @mod."""
    if not level:
        return target
    parts = mod.split(".")
    if not modules[mod][1]:
        parts = parts[:-1]  # a module's dots start at its package
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def dotted(node):
    """'a.b.c' for the expression a.b.c, else None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + names[::-1])


def private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def in_package(name):
    return name == "varperf" or name.startswith("varperf.")


graph = {}          # module -> {module it imports}
deferred = []       # "mod:line: import X" inside a function or class
private_uses = []   # "mod:line: name"
for mod, (path, _) in sorted(modules.items()):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    deps = graph.setdefault(mod, set())
    top = set(id(n) for n in tree.body)
    bound = {}  # local name -> package module it names
    for node in ast.walk(tree):
        found = []
        if isinstance(node, ast.Import):
            for a in node.names:
                if in_package(a.name):
                    found.append(a.name)
                    bound[a.asname or a.name.split(".")[0]] = \
                        a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(mod, node.level, node.module or "")
            if not in_package(base):
                continue
            for a in node.names:
                sub = base + "." + a.name
                if sub in modules:
                    found.append(sub)
                    bound[a.asname or a.name] = sub
                else:
                    found.append(base)
                    if private(a.name):
                        private_uses.append("%s:%d: from %s import %s"
                                            % (mod, node.lineno, base, a.name))
        else:
            continue
        deps.update(d for d in found if d != mod)
        if found and id(node) not in top:
            deferred.append("%s:%d: import of %s" % (mod, node.lineno, ", ".join(found)))
    # pkg.mod.name through the names imports bound: a use of pkg.mod
    # (imported with pkg), and a private one if name starts with '_'
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        d = dotted(node.value)
        if d is None or d.split(".")[0] not in bound:
            continue
        owner = bound[d.split(".")[0]] + d[len(d.split(".")[0]):]
        if owner not in modules or owner == mod:
            continue
        deps.add(owner)
        if private(node.attr):
            private_uses.append("%s:%d: %s.%s" % (mod, node.lineno, owner, node.attr))

# ---- the checks ----

ok(len(modules) >= 2 and "varperf.gdb.commands" in modules,
   "the package's modules are found (%d)" % len(modules), sorted(modules))


def find_cycle():
    """A list of modules that import each other in a circle, or None."""
    state = {}

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d in graph and not state.get(d):
                c = visit(d, stack)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if not state.get(m):
            c = visit(m, [])
            if c:
                return c
    return None


pairs = sorted("%s <-> %s" % (a, b) for a in graph for b in graph[a]
               if a < b and a in graph.get(b, ()))
ok(not pairs, "no two modules of the package import each other", pairs)
cycle = find_cycle()
ok(cycle is None, "the package's imports have no cycle",
   [" -> ".join(cycle)] if cycle else ())
ok(not deferred, "no module imports another of the package inside a function", deferred)
ok(not private_uses, "no module uses a name starting with '_' of another", private_uses)

# ---- the C files of the _varperf extension ----
#
# Each file belongs to the unit of its stem (pyutil.c and pyutil.h are
# "pyutil"); a unit depends on another when one of its files includes the
# other's header.  Two units that depend on each other are one concept in
# two places, or a layering mistake.

include_re = re.compile(r'^\s*#\s*include\s+"(?:gdb-plugin/)?([^"/]+)\.h"', re.M)
units = {}
for f in sorted(os.listdir(plugin)):
    if f.endswith((".c", ".h")):
        with open(os.path.join(plugin, f), encoding="utf-8") as fh:
            units.setdefault(f[:-2], set()).update(include_re.findall(fh.read()))
headers = set(f[:-2] for f in os.listdir(plugin) if f.endswith(".h"))
ok(len(units) >= 3 and "pyutil" in units and "_varperf" in units,
   "the extension's C files are found (%d units)" % len(units), sorted(units))
cpairs = sorted("%s <-> %s" % (a, b) for a in units for b in units[a]
                if a < b and b in headers and a in units.get(b, ()))
ok(not cpairs, "no two files of the extension include each other's header", cpairs)
ok(units.get("pyutil", set()) <= {"pyutil"},
   "pyutil.c and pyutil.h include nothing else of the extension",
   sorted(units.get("pyutil", set()) - {"pyutil"}))

print("1..%d" % _count)
