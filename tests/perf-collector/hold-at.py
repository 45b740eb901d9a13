# SPDX-License-Identifier: GPL-3.0-or-later
# hold-at.py - run varperf under GDB and hold it at the function named by
# $HOLD_AT (its first call) until the processes it started have ended:
# what a busy host or a slow step does by chance, every time.  GDB exits
# with varperf's exit code.
#
#	HOLD_AT=select_planned gdb -q -batch -x hold-at.py --args varperf record ...
import os
import time

import gdb


class HoldUntilChildrenEnd(gdb.Breakpoint):
    def stop(self):
        vp = gdb.selected_inferior().pid
        with open("/proc/%d/task/%d/children" % (vp, vp)) as f:
            kids = f.read().split()
        for _ in range(600):
            try:
                if all(open("/proc/%s/stat" % k).read().split()[2] == "Z" for k in kids):
                    break
            except OSError:
                break
            time.sleep(0.05)
        self.enabled = False
        return False


gdb.execute("set pagination off")
HoldUntilChildrenEnd(os.environ["HOLD_AT"], internal=True)
gdb.execute("run")
code = gdb.parse_and_eval("$_exitcode")
gdb.execute("quit %d" % (int(code) if code.type.code != gdb.TYPE_CODE_VOID else 255))
