# SPDX-License-Identifier: GPL-3.0-or-later
# varperf-gdb.py - load the varperf GDB plugin.  In GDB (or ~/.gdbinit):
#
#	source PKGLIBDIR/gdb/varperf-gdb.py
#
# It adds `info variance`, `varperf load|break|record` and `set/show
# variance`; `varperf gdb PROGRAM` starts GDB with it loaded.  The Python
# package sits next to this file; the _varperf module too once installed,
# or in the directories of $VARPERF_GDB_PLUGIN (a build tree's gdb-plugin
# directory: the module is found in its .libs).

import os
import sys


def _varperf_gdb_setup():
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        import varperf.gdb.commands
    except ImportError as e:
        # a sourced script has no command to fail: one line, no traceback
        import gdb
        gdb.write("varperf: cannot load the plugin (%s); set VARPERF_GDB_PLUGIN to the "
                  "directory of _varperf.so\n" % e, gdb.STDERR)
        return
    varperf.gdb.commands.register_varperf_commands()


_varperf_gdb_setup()
del _varperf_gdb_setup
