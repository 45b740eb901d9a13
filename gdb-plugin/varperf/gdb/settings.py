# SPDX-License-Identifier: GPL-3.0-or-later
"""varperf.gdb.settings - the settings of the varperf GDB plugin: `set/show
variance data-file|threshold|raw|contributors` as gdb.Parameter objects,
and the functions through which the commands read them.
"""

import math

import gdb


class _SetVariance(gdb.Command):
    """Settings of the varperf plugin (info variance, varperf break)."""

    def __init__(self):
        super().__init__("set variance", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


class _ShowVariance(gdb.Command):
    """Show the settings of the varperf plugin."""

    def __init__(self):
        super().__init__("show variance", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("show variance: unknown setting '%s'" % arg.strip())
        for name in ("data-file", "threshold", "raw", "contributors"):
            gdb.execute("show variance " + name, from_tty)


class DataFileParameter(gdb.Parameter):
    """The data file that 'varperf load' reads when given no file name.
The default is varperf.data, the file 'varperf record' writes."""

    set_doc = "Set the data file that 'varperf load' reads by default."
    show_doc = "Show the data file that 'varperf load' reads by default."

    def __init__(self):
        super().__init__("variance data-file", gdb.COMMAND_DATA, gdb.PARAM_FILENAME)
        self.value = "varperf.data"

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "The data file of 'varperf load' is \"%s\"." % svalue


class ThresholdParameter(gdb.Parameter):
    """How many standard deviations above the recorded mean an invocation
must take for 'varperf break' to stop, when no --sigma, --percentile,
--chebyshev or --slower-than is given.  The default is 3."""

    set_doc = "Set the default threshold of 'varperf break', in standard deviations."
    show_doc = "Show the default threshold of 'varperf break', in standard deviations."

    def __init__(self):
        super().__init__("variance threshold", gdb.COMMAND_DATA, gdb.PARAM_STRING)
        self.value = "3"
        self.sigma = 3.0

    def get_set_string(self):
        try:
            v = float(self.value)
            if not math.isfinite(v) or v <= 0:
                raise ValueError
        except (TypeError, ValueError):
            bad, self.value = self.value, "%g" % self.sigma
            raise gdb.GdbError("set variance threshold: invalid value '%s': must be a number "
                               "of standard deviations greater than 0" % bad)
        self.sigma = v
        return ""

    def get_show_string(self, svalue):
        return "'varperf break' stops %s standard deviations above the mean by default." % svalue


class RawParameter(gdb.Parameter):
    """Whether 'info variance' prints exact numbers: times in the
recording's unit (ns) and every number with all its digits, exactly as
'varperf report --format json' writes them, instead of human units."""

    set_doc = "Set whether 'info variance' prints exact numbers."
    show_doc = "Show whether 'info variance' prints exact numbers."

    def __init__(self):
        super().__init__("variance raw", gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = False

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "Exact numbers in 'info variance' are %s." % svalue


class ContributorsParameter(gdb.Parameter):
    """How many variance contributors (children of a calling context, by
their share of its variance) 'info variance' lists; unlimited lists all."""

    set_doc = "Set how many variance contributors 'info variance' lists."
    show_doc = "Show how many variance contributors 'info variance' lists."

    def __init__(self):
        super().__init__("variance contributors", gdb.COMMAND_DATA,
                         gdb.PARAM_ZUINTEGER_UNLIMITED)
        self.value = 5

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return "'info variance' lists %s variance contributors." % svalue



_params = {}


def register():
    """Create `set/show variance` and the settings (once)."""
    if _params:
        return
    _SetVariance()
    _ShowVariance()
    _params["data-file"] = DataFileParameter()
    _params["threshold"] = ThresholdParameter()
    _params["raw"] = RawParameter()
    _params["contributors"] = ContributorsParameter()


def data_file():
    """The file 'varperf load' and 'varperf record' use without a name."""
    return _params["data-file"].value


def threshold():
    """The default threshold of 'varperf break', in standard deviations."""
    return _params["threshold"].sigma


def raw():
    """Whether 'info variance' prints exact numbers."""
    return bool(_params["raw"].value)


def contributors():
    """How many contributors 'info variance' lists (None: all)."""
    v = _params["contributors"].value
    return None if v is None or v < 0 else v
