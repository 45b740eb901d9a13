# SPDX-License-Identifier: GPL-3.0-or-later
"""`info variance bound`: the regression-based maximal execution time
(Poplavko et al. 2016) of the calling context at the stop, as `varperf
bound` prints it for a task: its duration modelled on its calls through
each child call site, b+ per term, eps+, the pragmatic MET and its
probability 1 - (p+2)alpha/2."""

import gdb

import varperf
import varperf.gdb


def _context_node(cmd, s, rec):
    """The recorded context of the innermost probed frame at the stop."""
    try:
        start = gdb.selected_frame()
    except gdb.error:
        raise gdb.GdbError("%s: no stack (the program is not being run)" % cmd) from None
    chain, _ = s.live_chain(start)
    k = len(chain) - 1
    while k >= 0 and not any(rec.func(f)["ncontexts"] for f in chain[k].funcs):
        k -= 1
    if k < 0:
        raise gdb.GdbError("%s: no function on this stack was called while '%s' was recorded"
                           % (cmd, s.path))
    elems = [(lf.funcs, lf.callsites) for lf in chain[:k + 1]]
    nid = rec.lookup(elems)
    exact = nid is not None
    if not exact:
        nid = rec.nearest(elems)["node"]
    return nid, exact


def unclaimed_lines(m):
    """A MET whose model fails its own checks, as varperf bound says it."""
    fd = varperf.format_duration
    why = {"r2": "R\u00b2 %.2f, below 0.5" % m["r2"],
           "residuals": "residuals not normal",
           "coverage": "%d of %d test invocations above the MET, more than %.3g %% allows"
                       % (m["above_met"], m["test"], 100 * (1 - m["probability"])),
           "untested": "no test set to check it on (--train 1)"}
    return ["MET %s, no probability stated: the model fails its checks (%s)"
            % (fd(m["met"]), "; ".join(why[c] for c in m["checks_failed"])),
            "measured instead: %.4g %% of the %d invocations took at most %s (no model)"
            % (100 * m["probability"], m["invocations"], fd(m["empirical"]))]


def bound_lines(rec, nid, alpha):
    """The model table of node @nid, as lines."""
    try:
        m = rec.bound(nid, alpha=alpha)
    except varperf.Error as e:
        raise gdb.GdbError("info variance bound: %s" % e.strerror) from None
    fd = varperf.format_duration
    lines = ["  %-34s %10s %10s %8s %8s %10s" % ("term", "b-", "b+", "X-", "X+", "(bX)+")]
    for t in m["terms"]:
        if t["child"] is None:
            name = "(constant)"
        else:
            c = rec.node(t["child"])
            site = rec.callsite(c["callsite"])["label"] if c["callsite"] is not None else ""
            name = "calls(%s) %s" % (c["function"], site)
        lines.append("  %-34s %10s %10s %8g %8g %10s" % (name, fd(t["lo"]), fd(t["hi"]),
                                                        t["xmin"], t["xmax"], fd(t["bx"])))
    lines.append("  %-34s %10s %10s %8s %8s %10s" % ("eps+", "", "", "", "", fd(m["eps_plus"])))
    if m["probability_claimed"]:
        lines.append("MET %s with probability >= %.4g (1 - (p+2)alpha/2, p = %d, alpha = %g)"
                     % (fd(m["met"]), m["probability"], len(m["terms"]), m["alpha"]))
    else:
        lines += unclaimed_lines(m)
    lines.append("R\u00b2 %.4f; %d invocations, %d trained; test: %d over-, %d "
                 "under-estimated, %d above the MET; %d bad samples set aside"
                 % (m["r2"], m["invocations"], m["train"], m["test_over"], m["test_under"],
                    m["above_met"], m["bad"]))
    return lines


class InfoVarianceBound(gdb.Command):
    """Regression-based maximal execution time of the calling context at the stop.

Usage: info variance bound [ALPHA]

The innermost frame's recorded calling context (or the nearest recorded
one), its durations modelled on its calls through each child call site
(stepwise regression, Cook's distance), trained on half of its
invocations: b- and b+ per term, X- and X+, eps+, the pragmatic MET and
its probability 1 - (p+2)ALPHA/2 (ALPHA default 0.05) where the model
passes its checks (else what failed and the measured quantile), as
'varperf bound' prints them (Poplavko et al. 2016)."""

    def __init__(self):
        super().__init__("info variance bound", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE)

    @varperf.gdb.term_errors
    def invoke(self, arg, from_tty):
        self.dont_repeat()
        cmd = "info variance bound"
        argv = gdb.string_to_argv(arg)
        alpha = 0.05
        if len(argv) > 1:
            raise gdb.GdbError("%s: usage: info variance bound [ALPHA]" % cmd)
        if argv:
            try:
                alpha = float(argv[0])
                if not 0 < alpha < 1:
                    raise ValueError
            except ValueError:
                raise gdb.GdbError("%s: invalid alpha '%s': must be in (0, 1)"
                                   % (cmd, argv[0])) from None
        s = varperf.gdb.get_session()
        rec = s.require(cmd)
        nid, exact = _context_node(cmd, s, rec)
        head = "%s context (node %d):" % ("recorded" if exact else "nearest recorded", nid)
        lines = [head, "  " + varperf.chain_label(rec, rec.node_path(nid), collapse=True)]
        lines.extend(bound_lines(rec, nid, alpha))
        varperf.gdb.write(lines)


def register():
    InfoVarianceBound()
