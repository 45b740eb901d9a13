/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-setup.c - what "varperf record" records, decided before the
 * target runs: the program's modules and functions, how their exits are
 * probed, what a probe costs on this machine, and the checks that make it
 * fail early (see record.h).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/calibrate.h"
#include "perf-collector/record/record.h"
#include "util/escape.h"
#include "util/util.h"

static int load_modules(struct record *rec)
{
	struct vp_symfile *exe;
	size_t nmods = 1 + rec->opts.libs.n;
	int err = vp_symfile_open(rec->target.path, &exe);

	if (err == -ENOEXEC)
		return error("'%s' is not an ELF file", rec->target.path);
	if (err)
		return error("cannot open '%s': %s", rec->target.path, strerror(-err));
	rec->probing.symfiles = xcalloc(nmods, sizeof(*rec->probing.symfiles));
	rec->hdr.modules = xcalloc(nmods, sizeof(*rec->hdr.modules));
	rec->probing.symfiles[0] = exe;
	rec->hdr.nmodules = 1;
	for (size_t i = 0; i < rec->opts.libs.n; i++) {
		const char *name = rec->opts.libs.v[i];
		char *lib;

		err = vp_symfile_find_needed(exe, name, &lib);
		if (err == -ENOENT)
			return error("'%s' does not need a library '%s'", rec->target.path, name);
		if (err)
			return error("cannot find the library '%s' of '%s'", name,
				     rec->target.path);
		err = vp_symfile_open(lib, &rec->probing.symfiles[rec->hdr.nmodules]);
		if (err == -ENOEXEC)
			err = error("'%s' is not an ELF file", lib);
		else if (err)
			err = error("cannot open '%s': %s", lib, strerror(-err));
		free(lib);
		if (err)
			return -1;
		rec->hdr.nmodules++;
	}
	for (size_t i = 0; i < rec->hdr.nmodules; i++) {
		struct vp_module *m = &rec->hdr.modules[i];
		const unsigned char *id;
		struct stat st;

		m->path = xstrdup(vp_symfile_path(rec->probing.symfiles[i]));
		/* with the build-id, what tells two programs apart (compare) */
		if (!stat(m->path, &st))
			m->size = (uint64_t)st.st_size;
		m->build_id_len = vp_symfile_build_id(rec->probing.symfiles[i], &id);
		if (m->build_id_len) {
			m->build_id = xmalloc(m->build_id_len);
			memcpy(m->build_id, id, m->build_id_len);
		}
	}
	return 0;
}

static int load_functions(struct record *rec)
{
	struct record_opts *o = &rec->opts;
	const char *unmatched;

	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_functions(rec->probing.symfiles[i], (uint32_t)i,
				     i ? VP_FUNC_FROM_LIB : 0, &rec->hdr.funcs, &rec->hdr.nfuncs);
	/* where each probe goes: moved past a prologue unless --no-move-probes */
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		struct vp_symfile *sf = rec->probing.symfiles[rec->hdr.funcs[i].module];

		if (o->no_move)
			vp_symfile_probe_first(sf, &rec->hdr.funcs[i]);
		else
			vp_symfile_place_probe(sf, &rec->hdr.funcs[i], 1);
	}
	if (!rec->hdr.nfuncs) {
		rec->probing.unprobeable = xasprintf("no function symbols in '%s' (stripped, and "
						     "no debug file found?)", rec->target.path);
		return rec->probing.can_sample_only ? -1 : error("%s", rec->probing.unprobeable);
	}
	if (vp_funcs_select(rec->hdr.funcs, &rec->hdr.nfuncs, o->funcs.v, o->funcs.n,
			    o->excludes.v, o->excludes.n, &unmatched) < 0)
		return error("no function matches '%s' in '%s'", unmatched, rec->target.path);
	if (!rec->hdr.nfuncs)
		return error("no function to probe in '%s'", rec->target.path);
	return 0;
}

/*
 * Auto: return probes, but on the ret instructions of the functions that
 * call themselves.  The kernel keeps at most 64 return probes pending per
 * thread (MAX_URETPROBE_DEPTH, for perf events and BPF links alike) and
 * silently drops the returns of calls nested deeper: recursion would lose
 * nearly all its exits.  Probes on exit sites have no such limit.
 */
static void keep_recursive_sites(struct record_probing *p, const struct vp_header *h)
{
	for (size_t i = 0; i < h->nfuncs; i++) {
		struct vp_exits *ex = &p->exits[i];

		if (ex->self_calls && ex->how != VP_EXITS_URETPROBE) {
			p->nrecursive++;
			pr_debug("%s calls itself: exits probed at their sites", h->funcs[i].display);
			continue;
		}
		vp_exits_release(ex);
		memset(ex, 0, sizeof(*ex));
		ex->how = VP_EXITS_URETPROBE;
	}
	if (!p->nrecursive) {
		free(p->exits);
		p->exits = NULL;
	}
}

/*
 * Decide how exits are probed.  A return probe puts the kernel's trampoline
 * in place of the return address, and the C++ unwinder, finding no unwind
 * information for it, calls std::terminate(): a program that throws
 * through a probed function dies.  Probes on the instructions that leave
 * a function do not touch the stack, but cost a single-step per call.
 */
static int plan_exits(struct record *rec)
{
	enum exit_mode mode = rec->opts.exit_mode;
	size_t undecodable = 0;
	int recursive_only = 0;

	for (size_t m = 0; m < rec->hdr.nmodules && !rec->probing.can_throw; m++) {
		int probed = 0;

		for (size_t i = 0; i < rec->hdr.nfuncs && !probed; i++)
			probed = rec->hdr.funcs[i].module == m;
		/* The program itself always counts: it may throw through
		 * the probed functions of a library (callbacks). */
		if ((probed || !m) && vp_symfile_can_throw(rec->probing.symfiles[m]))
			rec->probing.can_throw = 1;
	}
	if (mode == EXIT_AUTO) {
#ifdef HAVE_CAPSTONE
		recursive_only = !rec->probing.can_throw;
		mode = EXIT_RET;
#else
		if (rec->probing.can_throw)
			warning("'%s' can throw C++ exceptions, which end the program when they "
				"pass a return probe; probing the ret instructions instead needs "
				"capstone, which this varperf was built without", rec->target.path);
		mode = EXIT_URETPROBE;
#endif
	} else if (mode == EXIT_URETPROBE && rec->probing.can_throw) {
		warning("'%s' can throw C++ exceptions: one that passes a function with a "
			"return probe ends the program", rec->target.path);
	}
	if (mode != EXIT_RET)
		return 0;
	rec->probing.exits = xcalloc(rec->hdr.nfuncs, sizeof(*rec->probing.exits));
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];
		int err = vp_symfile_exits(rec->probing.symfiles[f->module], f,
					   &rec->probing.exits[i]);

		if (err == -ENOTSUP)
			return error("--exit-probes=ret needs capstone to find the exits, and "
				     "this varperf was built without it");
		if (err) {
			undecodable++;
			pr_debug("%s at %#llx: code not decodable: return probe", f->display,
				 (unsigned long long)f->addr);
		}
		for (uint32_t k = 0; k < rec->probing.exits[i].n; k++) {
			uint64_t vaddr = 0;

			vp_symfile_off_to_vaddr(rec->probing.symfiles[f->module],
						rec->probing.exits[i].offs[k], &vaddr);
			pr_debug2("%s at %#llx: exit at %#llx", f->display,
				  (unsigned long long)f->addr, (unsigned long long)vaddr);
		}
	}
	pr_debug("exit sites decoded, %zu functions not decodable", undecodable);
	if (recursive_only)
		keep_recursive_sites(&rec->probing, &rec->hdr);
	return 0;
}

static const char *class_name(uint32_t cls)
{
	switch (cls) {
	case VP_INSN_EMULATED:
		return "emulated";
	case VP_INSN_STEPPED:
		return "stepped";
	default:
		return "unknown";
	}
}

/* How the exits of function @i are probed (@exits: NULL for return
 * probes), for --list. */
static const char *exits_name(const struct vp_exits *exits, size_t i, char *buf, size_t len)
{
	const struct vp_exits *ex = exits ? &exits[i] : NULL;

	switch (ex ? ex->how : VP_EXITS_URETPROBE) {
	case VP_EXITS_SITES:
		snprintf(buf, len, "sites:%u", ex->n);
		return buf;
	case VP_EXITS_NONE:
		return "none";
	case VP_EXITS_AT_ENTRY:
		return "at-entry";
	default:
		return "uretprobe";
	}
}

static void list_functions(const struct vp_header *h, const struct vp_exits *exits)
{
	for (size_t i = 0; i < h->nfuncs; i++) {
		const struct vp_func *f = &h->funcs[i];
		char buf[32];

		printf("%#10llx %6llu %-8s %-9s ", (unsigned long long)f->addr,
		       (unsigned long long)f->size, class_name(f->insn_class),
		       exits_name(exits, i, buf, sizeof(buf)));
		vp_term_put(stdout, f->display); /* from the binary: util/escape.h */
		if (f->flags & VP_FUNC_FROM_LIB) {
			fputs("  [", stdout);
			vp_term_put(stdout, h->modules[f->module].path);
			fputc(']', stdout);
		}
		printf("\n");
	}
}

static void fill_header(struct record *rec, int argc, char **argv)
{
	struct vp_header *h = &rec->hdr;
	struct utsname u;
	int *cpus;
	int n;

	h->version = VP_DATA_VERSION;
	h->unit = VP_UNIT_NS;
	h->clock = CLOCK_MONOTONIC;
	h->start_time = (uint64_t)time(NULL);
	h->pid = (uint32_t)rec->target.pid;
	n = vp_online_cpus(&cpus);
	if (n > 0) {
		h->ncpu = (uint32_t)n;
		free(cpus);
	}
	h->host = uname(&u) == 0 ? xasprintf("%s %s", u.release, u.machine) : xstrdup("");
	h->argc = argc;
	h->argv = xcalloc((size_t)argc + 1, sizeof(*h->argv));
	for (int i = 0; i < argc; i++)
		h->argv[i] = xstrdup(argv[i]);
	h->mode = rec->phase.plan_from ? VP_MODE_AUTO : (uint32_t)rec->mode;
	h->has_input_size = rec->opts.has_input_size;
	h->input_size = rec->opts.input_size;
	if (rec->mode != MODE_SAMPLE) {
		h->backend = rec->probing.user	 ? VP_BACKEND_USER
			     : rec->probing.bpf_on ? VP_BACKEND_BPF
						   : VP_BACKEND_PERF;
		/* the BPF programs follow the scheduler: off-CPU time per call */
		h->offcpu = rec->probing.bpf_on;
		/* and its switches: which part of it the threads slept */
		h->blocked = rec->probing.bpf_on;
	}
	if (rec->phase.plan_from) {
		/* the sampling of phase 1, which the file holds too (and
		 * the stack copy it ended with: its file says the first) */
		h->sampling = vp_plan_header(&rec->phase.plan)->sampling;
		if (rec->phase.phase1_stack_size)
			h->sampling.stack_size = rec->phase.phase1_stack_size;
	} else if (rec->mode != MODE_PROBE) {
		h->sampling.event = rec->opts.sampling.event;
		h->sampling.freq = rec->opts.sampling.freq;
		h->sampling.period = 0;
		if (rec->opts.sampling.event != VP_SEV_CYCLES)
			h->sampling.period = 1000000000ULL / rec->opts.sampling.freq;
		h->sampling.stack_size = rec->opts.sampling.stack_size;
	}
}

static int calibrate(struct vp_header *h, const struct record_probing *p, int quiet)
{
	struct vp_probe_cost *costs = xcalloc(VP_CALIBRATE_NCOSTS, sizeof(*costs));
	char a[32], b[32];
	int n = vp_calibrate(costs, p->exits && !p->nrecursive, p->bpf_on);

	if (n == -EACCES || n == -EPERM) {
		error("cannot measure the probe cost: %s: %s", strerror(-n),
		      p->bpf_on ? "BPF links need CAP_BPF and CAP_PERFMON (or root)"
				  : "perf_event uprobes need CAP_SYS_ADMIN (run varperf as root)");
		free(costs);
		return -1;
	}
	if (n < 0) {
		warning("cannot measure the probe cost: %s", strerror(-n));
		free(costs);
		return 0;
	}
	h->costs = costs;
	h->ncosts = (size_t)n;
	if (!quiet)
		info("probe cost per call: %s (emulated first instruction), %s (single-stepped)%s",
		     fmt_duration((double)costs[0].full_ns, a, sizeof(a)),
		     fmt_duration((double)costs[1].full_ns, b, sizeof(b)),
		     p->exits && !p->nrecursive ? ", exits at ret sites" : "");
	return 0;
}

static const char *backend_name(const struct record_probing *p)
{
	if (p->user)
		return "patches in the process (user backend)";
	return p->bpf_on ? "BPF uprobe_multi links" : "perf_event uprobes";
}

/* What the "probing N functions" line says about exits. */
static void print_probing(const struct record *rec)
{
	size_t emulated, moved, rets = 0, jmps = 0, ret_probes = 0, none = 0, at_entry = 0;
	size_t unseen = 0;
	const char *what;
	char past[64] = "";

	if (rec->probing.user) {
		/* no trap: the first instruction's class does not matter */
		info("probing %zu function%s in '%s' with %s (exits through a return "
		     "trampoline)", rec->hdr.nfuncs, rec->hdr.nfuncs == 1 ? "" : "s",
		     rec->target.path, backend_name(&rec->probing));
		return;
	}
	vp_header_count_probes(&rec->hdr, &emulated, &moved);
	if (moved)
		snprintf(past, sizeof(past), ", %zu of them past the first instruction", moved);
	if (!rec->probing.exits || rec->probing.nrecursive) {
		info("probing %zu functions in '%s' (%zu on emulated instructions%s) with %s",
		     rec->hdr.nfuncs, rec->target.path, emulated, past, backend_name(&rec->probing));
		if (rec->probing.nrecursive)
			info("%zu recursive function%s (calling %s) with exit probes on %s ret "
			     "instructions: the kernel drops the return probes of calls nested "
			     "more than 64 deep",
			     rec->probing.nrecursive, rec->probing.nrecursive == 1 ? "" : "s",
			     rec->probing.nrecursive == 1 ? "itself" : "themselves",
			     rec->probing.nrecursive == 1 ? "its" : "their");
		return;
	}
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_exits *ex = &rec->probing.exits[i];

		switch (ex->how) {
		case VP_EXITS_SITES:
			rets += ex->n - ex->tail;
			jmps += ex->tail;
			unseen += ex->indirect || ex->cond_tail || ex->unknown;
			break;
		case VP_EXITS_NONE:
			none++;
			break;
		case VP_EXITS_AT_ENTRY:
			at_entry++;
			break;
		default:
			ret_probes++;
			break;
		}
	}
	what = rec->opts.exit_mode == EXIT_AUTO ? ": the program can throw C++ exceptions" : "";
	info("probing %zu functions in '%s' (%zu on emulated instructions%s; exits at %zu "
	     "ret and %zu tail-call jmp instructions%s) with %s", rec->hdr.nfuncs, rec->target.path,
	     emulated, past, rets, jmps, what, backend_name(&rec->probing));
	if (ret_probes)
		info("%zu function%s with a return probe instead: code not decodable, or no "
		     "way out that can be probed", ret_probes, ret_probes == 1 ? "" : "s");
	if (none)
		info("%zu function%s without an exit instruction (never return%s): no exit probe",
		     none, none == 1 ? "" : "s", none == 1 ? "s" : "");
	if (at_entry)
		pr_debug("%zu functions leave by their first instruction: entry and exit in "
			 "one probe", at_entry);
	if (unseen)
		info("%zu function%s may also leave by jumps that are not probed (indirect, "
		     "conditional, or to unnamed code): such calls count as unpaired", unseen,
		     unseen == 1 ? "" : "s");
}

/* -p: the program of the running process, and whether we may record it. */
static int attach_program(struct record_target *t, pid_t pid)
{
	int err = vp_attach_check(pid, &t->path);

	switch (err) {
	case 0:
		t->prog = t->path;
		return 0;
	case -ESRCH:
		return error("cannot attach to process %d: no such process", (int)pid);
	case -EPERM:
		return error("cannot attach to process %d: not ours (another user's process; "
			     "run varperf as that user or as root)", (int)pid);
	case -ENOEXEC:
		return error("cannot attach to process %d: a kernel thread (no program to "
			     "record)", (int)pid);
	case -EINVAL:
		return error("cannot attach to process %d: that is varperf itself", (int)pid);
	case -ECHILD:
		return error("cannot attach to process %d: it has exited (a zombie, waiting for "
			     "its parent)", (int)pid);
	default:
		return error("cannot attach to process %d: %s", (int)pid, strerror(-err));
	}
}

/* What a mode that probes is called on the command line. */
static const char *mode_name(enum record_mode mode)
{
	if (mode == MODE_AUTO)
		return "--mode=auto";
	return mode == MODE_COMBINED ? "--mode=combined" : "--mode=probe";
}

/*
 * The kernel's uprobe PMU wants CAP_SYS_ADMIN (CAP_PERFMON before the
 * mid-instruction revert, so that one is left to try): say so before
 * anything runs, with @bpf_why when the BPF backend could not be had
 * either.  0 or -1 after the error.
 */
static int perf_uprobes_allowed(enum record_mode mode, const char *bpf_why)
{
	if (vp_capable(VP_CAP_SYS_ADMIN) || vp_capable(VP_CAP_PERFMON))
		return 0;
	if (!bpf_why)
		return error("cannot probe with --backend=perf: perf_event uprobes need "
			     "CAP_SYS_ADMIN (run varperf as root); --mode=sample needs no "
			     "privilege");
	return error("cannot probe functions (%s): perf_event uprobes need CAP_SYS_ADMIN, and %s; "
		     "run varperf as root, or record with --mode=sample, which needs no privilege",
		     mode_name(mode), bpf_why);
}

/*
 * An unprivileged user may lock kernel.perf_event_mlock_kb per CPU, plus
 * RLIMIT_MEMLOCK, in ring buffers: the default size shrinks to that, a
 * --buffer-size beyond it is an error now, not an mmap failure later
 * (@bpf_probe_only: probe mode on BPF, which needs no large perf buffer).
 */
static int fit_buffers(struct record_opts *o, int bpf_probe_only)
{
	struct vp_mlock_limit l;
	size_t max = vp_ring_size_limit(0, &l);
	char a[32];

	/* probe mode on BPF: a BPF ring, and buffers of mappings only */
	if (!max || o->buf_size <= max || bpf_probe_only)
		return 0;
	snprintf(a, sizeof(a), "%zuK", max >> 10);
	if (o->buf_size_given)
		return error("--buffer-size %lluK is more than this user may lock: %d CPUs x %llu "
			     "KiB (kernel.perf_event_mlock_kb) + %llu KiB (RLIMIT_MEMLOCK) allow "
			     "at most %s per CPU (or run varperf as root)",
			     o->buf_size >> 10, l.ncpus, l.per_cpu_kb, l.rlimit_kb, a);
	pr_debug("ring buffers of %s per CPU: kernel.perf_event_mlock_kb %llu, RLIMIT_MEMLOCK "
		 "%llu KiB", a, l.per_cpu_kb, l.rlimit_kb);
	o->buf_size = max;
	return 0;
}

/* perf_event uprobes cannot be restricted to the target (probes.h): say
 * what they do to every other process before they do it (not with -q, a
 * run's only output then being errors and what goes wrong). */
static void warn_perf_backend(const struct record_opts *o)
{
	if (o->quiet)
		return;
	warning("perf_event uprobes trap every process that runs the probed code%s, not only "
		"the program: each probed call there is slowed until they are removed after "
		"the recording (varperf-unprobe); the BPF backend probes the program only",
		o->libs.n ? " (with --lib, every process using the library)" : "");
}

/*
 * --backend: BPF uprobe_multi links where the kernel and varperf's rights
 * allow (attach and detach in milliseconds, breakpoints in the target
 * only, off-CPU time per call), else perf_event uprobes.  0, or -1 after
 * printing why the backend asked for cannot be had.
 */
static int choose_backend(struct record *rec)
{
	char why[256] = "";

	rec->probing.bpf_on = 0;
	if (rec->opts.backend == BACKEND_USER && record_user_choose(rec, 1) == 0)
		return 0;
	/* auto mode, on a program varperf runs: the user backend first, whose
	 * probes cost tens of nanoseconds, not a trap's microseconds - the
	 * short functions that carry a program's variance fit the budget */
	if (rec->opts.backend == BACKEND_AUTO && rec->opts.mode == MODE_AUTO &&
	    !rec->opts.attach && record_user_choose(rec, 0) == 0)
		return 0;
	if (rec->opts.backend == BACKEND_PERF) {
		if (perf_uprobes_allowed(rec->opts.mode, NULL) < 0)
			return -1;
		warn_perf_backend(&rec->opts);
		return 0;
	}
	if (vp_bpf_probes_check(why, sizeof(why)) == 0) {
		rec->probing.bpf_on = 1;
		return 0;
	}
	if (rec->opts.backend == BACKEND_BPF)
		return error("cannot probe with --backend=bpf: %s", why);
	if (perf_uprobes_allowed(rec->opts.mode, why) < 0)
		return -1;
	if (!rec->opts.quiet || verbose)
		info("probing with perf_event uprobes: %s", why);
	warn_perf_backend(&rec->opts);
	return 0;
}

/* Refuse an output that is no regular file, or is one of the recording's
 * inputs (the program, a --lib, --phase1: a wrong command line); 0 or -1
 * after the error. */
static int check_output(struct record *rec)
{
	const char *o = rec->opts.output;

	for (size_t i = 0; i < rec->hdr.nmodules; i++) {
		if (vp_output_same(o, rec->hdr.modules[i].path)) {
			rec->outcome.usage = 1;
			return error("cannot write '%s': it is %s '%s'", o,
				     i ? "the library" : "the program", rec->hdr.modules[i].path);
		}
	}
	if (rec->opts.phase1 && vp_output_same(o, rec->opts.phase1)) {
		rec->outcome.usage = 1;
		return error("--phase1 '%s' is also the output: give another -o",
			     rec->opts.phase1);
	}
	return vp_output_check(o) < 0 ? -1 : 0;
}

int record_prepare_static(struct record *rec)
{
	int probing = rec->mode != MODE_SAMPLE;
	int type, retbit, err;

	if (rec->opts.attach) {
		if (attach_program(&rec->target, rec->opts.attach) < 0)
			return -1;
	} else {
		err = vp_resolve_program(rec->target.prog, &rec->target.path);
		if (err)
			return error("cannot run '%s': %s", rec->target.prog, strerror(-err));
	}
	if (load_modules(rec) < 0)
		return -1;
	if (probing && (load_functions(rec) < 0 || plan_exits(rec) < 0))
		return -1;
	/* auto mode lists what phase 1 chose, in record_prepare_probes() */
	if (rec->opts.list && rec->opts.mode != MODE_AUTO) {
		list_functions(&rec->hdr, rec->probing.exits);
		rec->outcome.listed = 1;
		return 0;
	}
	if (check_output(rec) < 0)
		return -1;
	if (rec->mode != MODE_PROBE &&
	    vp_sampling_resolve(&rec->opts.sampling, rec->opts.quiet || rec->phase.plan_from) < 0)
		return -1;
	if (!probing)
		return fit_buffers(&rec->opts, 0);
	if (choose_backend(rec) < 0 ||
	    fit_buffers(&rec->opts, rec->mode == MODE_PROBE &&
					(rec->probing.bpf_on || rec->probing.user)) < 0)
		return -1;
	if (rec->probing.bpf_on || rec->probing.user)
		return 0;
	err = vp_uprobe_pmu(&type, &retbit);
	if (err == -ENOENT) {
		rec->probing.unprobeable = xstrdup("the uprobe PMU is not available (no "
					   "/sys/bus/event_source/devices/uprobe)");
		if (!rec->probing.can_sample_only)
			error("%s", rec->probing.unprobeable);
		return err;
	}
	return 0;
}

int record_calibrate(struct record *rec)
{
	if (rec->mode == MODE_SAMPLE || rec->probing.calibrated)
		return 0;
	rec->probing.calibrated = 1;
	if (!rec->probing.bpf_on && vp_probes_remove_stale() > 0)
		warning("removed stale 'varperf' uprobes from tracefs");
	if (rec->probing.user)
		return record_user_calibrate(rec);
	if (!rec->opts.no_calibrate && calibrate(&rec->hdr, &rec->probing, rec->opts.quiet) < 0)
		return -1;
	return 0;
}

int record_prepare_probes(struct record *rec)
{
	if (rec->mode == MODE_SAMPLE)
		return 0;
	if (record_calibrate(rec) < 0)
		return -1;
	if (rec->opts.list) {
		list_functions(&rec->hdr, rec->probing.exits);
		rec->outcome.listed = 1;
		return 0;
	}
	if (!rec->opts.quiet)
		print_probing(rec);
	return 0;
}

/* The header's command line: ours for a program, /proc's for -p. */
void record_header_cmdline(struct record *rec, int argc, char **argv)
{
	char **pargv;
	int pargc;

	if (!rec->opts.attach || rec->target.child) {
		fill_header(rec, argc, argv);
		return;
	}
	pargc = vp_proc_cmdline(rec->target.pid, &pargv);
	if (pargc <= 0) {
		char *one[] = { rec->target.path, NULL };

		fill_header(rec, 1, one);
		return;
	}
	fill_header(rec, pargc, pargv);
	for (int i = 0; i < pargc; i++)
		free(pargv[i]);
	free(pargv);
}
