# SPDX-License-Identifier: GPL-3.0-or-later
# term-screen.py - what a terminal shows after the bytes of FILE: carriage
# return, newline and ECMA-48's "erase to the end of the line" (ESC [ K)
# as a terminal applies them; any other escape sequence is an error.
#
#	python3 term-screen.py FILE          the final lines
#	python3 term-screen.py --drawn FILE  every line a "\r ESC [K" redrew
#	                                     in place, as it was written
import re
import sys

drawn = sys.argv[1] == "--drawn"
data = open(sys.argv[-1], "rb").read().decode("utf-8", "replace")
lines, line, col = [], [], 0
i = 0
while i < len(data):
    c = data[i]
    if data.startswith("\r\x1b[K", i):
        line, col = [], 0
        i += 4
        continue
    if c == "\x1b":
        m = re.match(r"\x1b\[[0-9;]*[A-Za-z]", data[i:])
        sys.exit("term-screen.py: unexpected escape sequence %r at %d" %
                 (m.group(0) if m else data[i:i + 4], i))
    if c == "\r":
        col = 0
    elif c == "\n":
        lines.append("".join(line))
        line, col = [], 0
    else:
        if col < len(line):
            line[col] = c
        else:
            line.append(c)
        col += 1
    i += 1
if line:
    lines.append("".join(line))
if drawn:
    # the text after each erasure, up to the next control character (and
    # without the "^C" the terminal echoed after it)
    for m in re.finditer(r"\r\x1b\[K([^\r\n\x1b]*)", data):
        print(re.sub(r"\^C$", "", m.group(1)))
else:
    for l in lines:
        print(l)
