# SPDX-License-Identifier: GPL-3.0-or-later
# pty-run.py - run a command on a pseudo-terminal, as a user at a terminal
# would, and keep every byte it wrote there:
#
#	python3 pty-run.py [--cols N] [--ctrl-c-after REGEX [--times K] [--delay S]] \
#		OUT -- command...
#
# Its output goes to OUT, raw (carriage returns and escape sequences
# included).  With --ctrl-c-after, once REGEX has matched the output K
# times (1 unless said), and S seconds later, it types Ctrl-C (the
# terminal sends SIGINT to the command and the program it runs, as the
# foreground process group).  Exits with the command's exit status
# (128 + N for a signal); 124 when nothing matched within 60 s (the
# command is then killed).
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

args = sys.argv[1:]
cols, pattern, times, delay = 80, None, 1, 0.0
while args and args[0] != "--" and args[0].startswith("--"):
    opt = args.pop(0)
    if opt == "--cols":
        cols = int(args.pop(0))
    elif opt == "--ctrl-c-after":
        pattern = re.compile(args.pop(0).encode())
    elif opt == "--times":
        times = int(args.pop(0))
    elif opt == "--delay":
        delay = float(args.pop(0))
    else:
        sys.exit("pty-run.py: unknown option " + opt)
out_path = args.pop(0)
if not args or args.pop(0) != "--":
    sys.exit("pty-run.py: usage: [options] OUT -- command...")

pid, fd = pty.fork()
if pid == 0:
    try:
        os.execvp(args[0], args)
    finally:
        os._exit(127)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
out = b""
matched_at = None
sent = False
start = time.monotonic()
while True:
    if pattern is not None and not sent:
        if matched_at is None and len(pattern.findall(out)) >= times:
            matched_at = time.monotonic()
        if matched_at is not None and time.monotonic() - matched_at >= delay:
            os.write(fd, b"\x03")
            sent = True
        elif matched_at is None and time.monotonic() - start > 60:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            open(out_path, "wb").write(out)
            sys.exit(124)
    ready, _, _ = select.select([fd], [], [], 0.02)
    if ready:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        out += data
_, status = os.waitpid(pid, 0)
open(out_path, "wb").write(out)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status)
         else 128 + os.WTERMSIG(status))
