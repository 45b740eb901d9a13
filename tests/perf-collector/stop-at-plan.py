# SPDX-License-Identifier: GPL-3.0-or-later
# stop-at-plan.py - run varperf under GDB and hold it where auto mode plans
# phase 2 (select_planned()) until the program phase 1 left running has
# ended: what a busy host or a long plan does by chance, every time.
# GDB exits with varperf's exit code.
#
#	gdb -q -batch -x stop-at-plan.py --args varperf record ...
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
        return False


gdb.execute("set pagination off")
HoldUntilChildrenEnd("select_planned", internal=True)
gdb.execute("run")
code = gdb.parse_and_eval("$_exitcode")
gdb.execute("quit %d" % (int(code) if code.type.code != gdb.TYPE_CODE_VOID else 255))
