/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-record.c - "varperf record": probe the entries and exits of a
 * program's functions, run it, and write every event to a data file.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/datafile.h"
#include "builtin.h"
#include "calibrate.h"
#include "launch.h"
#include "probes.h"
#include "symbols.h"
#include "util.h"

static const char *const cmd_record_usage[] = {
	"usage: varperf record [<options>] [--] <program> [<args>...]",
	"",
	"    -o, --output <file>       write the data to <file> (default: varperf.data)",
	"    -f, --function <glob>     probe only the functions matching <glob> (repeatable)",
	"        --exclude <glob>      do not probe the functions matching <glob> (repeatable)",
	"        --lib <name>          also probe the shared library <name> (repeatable)",
	"        --exit-probes <how>   probe exits with auto, uretprobe or ret (default: auto)",
	"    -m, --buffer-size <size>  ring buffer per CPU, with K/M/G suffix (default: 8M)",
	"        --list                list the functions that would be probed and exit",
	"        --no-calibrate        do not measure the cost of a probe first",
	"    -q, --quiet               print errors only",
	"    -h, --help                show this help",
	NULL,
};

enum {
	OPT_EXCLUDE = 256,
	OPT_LIB,
	OPT_EXIT_PROBES,
	OPT_LIST,
	OPT_NO_CALIBRATE,
};

static const struct option cmd_record_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "function", required_argument, NULL, 'f' },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "exit-probes", required_argument, NULL, OPT_EXIT_PROBES },
	{ "buffer-size", required_argument, NULL, 'm' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum { POLL_MS = 50, USAGE_ERROR = 129 };

struct strvec {
	char **v;
	size_t n;
};

/* --exit-probes */
enum exit_mode {
	EXIT_AUTO,
	EXIT_URETPROBE,
	EXIT_RET,
};

struct record_opts {
	const char *output;
	struct strvec funcs, excludes, libs;
	unsigned long long buf_size;
	int list, quiet, no_calibrate;
	enum exit_mode exit_mode;
};

/* Open-addressing map from a 64-bit key to a 32-bit index. */
struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap, n;
};

struct record {
	struct record_opts opts;
	const char *prog;
	char *path;
	struct vp_header hdr;
	struct vp_symfile **symfiles;
	/* Per function how its exits are probed; NULL: return probes. */
	struct vp_exits *exits;
	int can_throw;
	struct vp_launch launch;
	struct vp_probes probes;
	struct vp_writer *w;
	struct vp_addrspace *as;
	pid_t pid;
	/* Records read but not yet written, sorted by time each round. */
	struct vp_raw *pending;
	size_t npending, cap;
	uint64_t seq, max_seen;
	struct idmap threads, callsites;
	uint64_t lost, foreign;
	int write_err;
};

static volatile sig_atomic_t record_signal, record_nsignals;

static void cmd_record_print_usage(FILE *out)
{
	for (const char *const *l = cmd_record_usage; *l; l++)
		fprintf(out, "%s\n", *l);
}

static void strvec_push(struct strvec *v, char *s)
{
	v->v = xrealloc(v->v, (v->n + 1) * sizeof(*v->v));
	v->v[v->n++] = s;
}

static int parse_exit_mode(const char *s, enum exit_mode *ret)
{
	static const char *const names[] = { [EXIT_AUTO] = "auto",
					     [EXIT_URETPROBE] = "uretprobe",
					     [EXIT_RET] = "ret" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*ret = (enum exit_mode)i;
			return 0;
		}
	}
	return -1;
}

/* Returns -1 to continue, or the exit status. */
static int parse_options(struct record_opts *o, int argc, char **argv)
{
	int c;

	o->output = "varperf.data";
	o->buf_size = 8 << 20;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:f:m:qh", cmd_record_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			strvec_push(&o->funcs, optarg);
			break;
		case OPT_EXCLUDE:
			strvec_push(&o->excludes, optarg);
			break;
		case OPT_LIB:
			strvec_push(&o->libs, optarg);
			break;
		case OPT_EXIT_PROBES:
			if (parse_exit_mode(optarg, &o->exit_mode) < 0) {
				error("invalid value '%s' for --exit-probes "
				      "(auto, uretprobe or ret)", optarg);
				return USAGE_ERROR;
			}
			break;
		case 'm':
			if (parse_uint64(optarg, &o->buf_size) < 0 || o->buf_size < 4096 ||
			    o->buf_size > (1ULL << 30)) {
				error("invalid buffer size '%s' (4K to 1G)", optarg);
				return USAGE_ERROR;
			}
			break;
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_NO_CALIBRATE:
			o->no_calibrate = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			cmd_record_print_usage(stdout);
			return 0;
		case ':':
			error("option '%s' requires a value", argv[optind - 1]);
			cmd_record_print_usage(stderr);
			return USAGE_ERROR;
		default:
			if (optopt)
				error("unknown switch '%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			cmd_record_print_usage(stderr);
			return USAGE_ERROR;
		}
	}
	if (optind >= argc) {
		error("no program to record");
		cmd_record_print_usage(stderr);
		return USAGE_ERROR;
	}
	return -1;
}

/* ---- id maps ---- */

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static void idmap_grow(struct idmap *m);

static uint32_t *idmap_slot(struct idmap *m, uint64_t key, int *found)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap)
		idmap_grow(m);
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*found = 1;
			return &m->vals[i];
		}
	}
	*found = 0;
	m->used[i] = 1;
	m->keys[i] = key;
	m->n++;
	return &m->vals[i];
}

static void idmap_grow(struct idmap *m)
{
	struct idmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	m->used = xcalloc(m->cap, 1);
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++) {
		int found;

		if (old.used[i])
			*idmap_slot(m, old.keys[i], &found) = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

static void idmap_release(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* ---- functions and header ---- */

static int load_modules(struct record *rec)
{
	struct vp_symfile *exe;
	size_t nmods = 1 + rec->opts.libs.n;
	int err = vp_symfile_open(rec->path, &exe);

	if (err == -ENOEXEC)
		return error("'%s' is not an ELF file", rec->path);
	if (err)
		return error("cannot open '%s': %s", rec->path, strerror(-err));
	rec->symfiles = xcalloc(nmods, sizeof(*rec->symfiles));
	rec->hdr.modules = xcalloc(nmods, sizeof(*rec->hdr.modules));
	rec->symfiles[0] = exe;
	rec->hdr.nmodules = 1;
	for (size_t i = 0; i < rec->opts.libs.n; i++) {
		const char *name = rec->opts.libs.v[i];
		char *lib;

		err = vp_symfile_find_needed(exe, name, &lib);
		if (err == -ENOENT)
			return error("'%s' does not need a library '%s'", rec->path, name);
		if (err)
			return error("cannot find the library '%s' of '%s'", name, rec->path);
		err = vp_symfile_open(lib, &rec->symfiles[rec->hdr.nmodules]);
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

		m->path = xstrdup(vp_symfile_path(rec->symfiles[i]));
		m->build_id_len = vp_symfile_build_id(rec->symfiles[i], &id);
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
		vp_symfile_functions(rec->symfiles[i], (uint32_t)i, i ? VP_FUNC_FROM_LIB : 0,
				     &rec->hdr.funcs, &rec->hdr.nfuncs);
	if (!rec->hdr.nfuncs)
		return error("no function symbols in '%s' (stripped, and no debug file found?)",
			     rec->path);
	if (vp_funcs_select(rec->hdr.funcs, &rec->hdr.nfuncs, o->funcs.v, o->funcs.n,
			    o->excludes.v, o->excludes.n, &unmatched) < 0)
		return error("no function matches '%s' in '%s'", unmatched, rec->path);
	if (!rec->hdr.nfuncs)
		return error("no function to probe in '%s'", rec->path);
	return 0;
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

	for (size_t m = 0; m < rec->hdr.nmodules && !rec->can_throw; m++) {
		int probed = 0;

		for (size_t i = 0; i < rec->hdr.nfuncs && !probed; i++)
			probed = rec->hdr.funcs[i].module == m;
		/* The program itself always counts: it may throw through
		 * the probed functions of a library (callbacks). */
		if ((probed || !m) && vp_symfile_can_throw(rec->symfiles[m]))
			rec->can_throw = 1;
	}
	if (mode == EXIT_AUTO) {
#ifdef HAVE_CAPSTONE
		mode = rec->can_throw ? EXIT_RET : EXIT_URETPROBE;
#else
		if (rec->can_throw)
			warning("'%s' can throw C++ exceptions, which end the program when they "
				"pass a return probe; probing the ret instructions instead needs "
				"capstone, which this varperf was built without", rec->path);
		mode = EXIT_URETPROBE;
#endif
	} else if (mode == EXIT_URETPROBE && rec->can_throw) {
		warning("'%s' can throw C++ exceptions: one that passes a function with a "
			"return probe ends the program", rec->path);
	}
	if (mode != EXIT_RET)
		return 0;
	rec->exits = xcalloc(rec->hdr.nfuncs, sizeof(*rec->exits));
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];
		int err = vp_symfile_exits(rec->symfiles[f->module], f, &rec->exits[i]);

		if (err == -ENOTSUP)
			return error("--exit-probes=ret needs capstone to find the exits, and "
				     "this varperf was built without it");
		if (err) {
			undecodable++;
			pr_debug("%s at %#llx: code not decodable: return probe", f->display,
				 (unsigned long long)f->addr);
		}
		for (uint32_t k = 0; k < rec->exits[i].n; k++) {
			uint64_t vaddr = 0;

			vp_symfile_off_to_vaddr(rec->symfiles[f->module], rec->exits[i].offs[k],
						&vaddr);
			pr_debug2("%s at %#llx: exit at %#llx", f->display,
				  (unsigned long long)f->addr, (unsigned long long)vaddr);
		}
	}
	pr_debug("exit sites decoded, %zu functions not decodable", undecodable);
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

/* How the exits of function @i are probed, for --list. */
static const char *exits_name(const struct record *rec, size_t i, char *buf, size_t len)
{
	const struct vp_exits *ex = rec->exits ? &rec->exits[i] : NULL;

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

static void list_functions(const struct record *rec)
{
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];
		char buf[32];

		printf("%#10llx %6llu %-8s %-9s %s", (unsigned long long)f->addr,
		       (unsigned long long)f->size, class_name(f->insn_class),
		       exits_name(rec, i, buf, sizeof(buf)), f->display);
		if (f->flags & VP_FUNC_FROM_LIB)
			printf("  [%s]", rec->hdr.modules[f->module].path);
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
	h->pid = (uint32_t)rec->pid;
	n = vp_online_cpus(&cpus);
	if (n > 0) {
		h->ncpu = (uint32_t)n;
		free(cpus);
	}
	h->host = uname(&u) == 0 ? xasprintf("%s %s", u.release, u.machine) : xstrdup("");
	h->argc = argc;
	h->argv = xcalloc((size_t)argc, sizeof(*h->argv));
	for (int i = 0; i < argc; i++)
		h->argv[i] = xstrdup(argv[i]);
}

static int calibrate(struct record *rec)
{
	struct vp_probe_cost *costs = xcalloc(VP_CALIBRATE_NCOSTS, sizeof(*costs));
	char a[32], b[32];
	int n = vp_calibrate(costs, rec->exits != NULL);

	if (n == -EACCES || n == -EPERM) {
		free(costs);
		return -1;
	}
	if (n < 0) {
		warning("cannot measure the probe cost: %s", strerror(-n));
		free(costs);
		return 0;
	}
	rec->hdr.costs = costs;
	rec->hdr.ncosts = (size_t)n;
	if (!rec->opts.quiet)
		info("probe cost per call: %s (emulated first instruction), %s (single-stepped)%s",
		     fmt_duration((double)costs[0].full_ns, a, sizeof(a)),
		     fmt_duration((double)costs[1].full_ns, b, sizeof(b)),
		     rec->exits ? ", exits at ret sites" : "");
	return 0;
}

/* Each probe is one file descriptor per CPU. */
static int raise_nofile(size_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	need += 64; /* stdio, ELF files, pipes */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		rl.rlim_max = need; /* needs CAP_SYS_RESOURCE */
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return error("cannot raise the open file limit to %zu for %zu probe events: %s "
			     "(probe fewer functions or raise 'ulimit -n')", need, need - 64,
			     strerror(errno));
	return 0;
}

/* ---- the event stream ---- */

static void write_failed(struct record *rec, int err)
{
	if (err && !rec->write_err) {
		rec->write_err = err;
		error("cannot write '%s': %s", rec->opts.output, strerror(-err));
	}
}

static uint32_t thread_index(struct record *rec, const struct vp_raw *r)
{
	int found;
	uint32_t *idx = idmap_slot(&rec->threads, r->tid, &found);

	if (!found) {
		*idx = (uint32_t)(rec->threads.n - 1);
		write_failed(rec, vp_writer_thread(rec->w, *idx, r->tid, r->pid));
	}
	return *idx;
}

static uint32_t callsite_id(struct record *rec, uint64_t addr)
{
	int found;
	uint32_t *id = idmap_slot(&rec->callsites, addr, &found);
	struct vp_callsite cs;

	if (!found) {
		*id = (uint32_t)(rec->callsites.n - 1);
		vp_addrspace_callsite(rec->as, addr, &cs);
		pr_debug("call site %u: %#llx -> module %d %#llx %s %s:%u", *id,
			 (unsigned long long)addr, cs.module, (unsigned long long)cs.offset,
			 cs.caller, cs.file, cs.line);
		write_failed(rec, vp_writer_callsite(rec->w, *id, &cs));
		vp_callsite_release(&cs);
	}
	return *id;
}

static void emit(struct record *rec, struct vp_raw *r)
{
	struct vp_event ev;

	switch (r->type) {
	case VP_RAW_MMAP:
		vp_addrspace_mmap(rec->as, r->mmap->start, r->mmap->len, r->mmap->pgoff,
				  r->mmap->path);
		free(r->mmap);
		r->mmap = NULL;
		return;
	case VP_RAW_LOST:
		rec->lost += r->addr;
		write_failed(rec, vp_writer_lost(rec->w, r->cpu, r->addr));
		return;
	default:
		break;
	}
	memset(&ev, 0, sizeof(ev));
	ev.time = r->time;
	ev.sp = r->sp;
	ev.func = r->func;
	ev.kind = r->type == VP_RAW_ENTRY ? VP_EV_ENTRY : VP_EV_EXIT;
	ev.thread = thread_index(rec, r);
	if (ev.kind == VP_EV_ENTRY)
		ev.callsite = callsite_id(rec, r->addr);
	pr_debug2("%s %s tid %u time %llu sp %#llx %s %#llx",
		  ev.kind == VP_EV_ENTRY ? "entry" : "exit ", rec->hdr.funcs[r->func].display,
		  r->tid, (unsigned long long)r->time, (unsigned long long)r->sp,
		  ev.kind == VP_EV_ENTRY ? "ret" : "ip", (unsigned long long)r->addr);
	write_failed(rec, vp_writer_event(rec->w, &ev));
}

static int cmp_raw(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void push_pending(struct record *rec, const struct vp_raw *r)
{
	if (rec->npending == rec->cap) {
		rec->cap = rec->cap ? rec->cap * 2 : 4096;
		rec->pending = xrealloc(rec->pending, rec->cap * sizeof(*rec->pending));
	}
	rec->pending[rec->npending] = *r;
	rec->pending[rec->npending++].seq = rec->seq++;
}

static void drain_ring(struct record *rec, struct vp_ring *ring)
{
	const struct perf_event_header *h;

	vp_ring_begin(ring);
	while ((h = vp_ring_next(ring))) {
		struct vp_raw r;

		if (!vp_probes_decode(&rec->probes, h, ring->cpu, &r))
			continue;
		if (r.type != VP_RAW_LOST && r.pid != (uint32_t)rec->pid) {
			/* Other processes run the probed code too (pid = -1). */
			if (r.type == VP_RAW_MMAP)
				free(r.mmap);
			else
				rec->foreign++;
			continue;
		}
		push_pending(rec, &r);
		if (r.type == VP_RAW_ENTRY && (r.flags & VP_RAW_F_EXITS_TOO)) {
			/* The probed instruction is the function's ret or
			 * tail-call jmp: it leaves as soon as it entered. */
			r.type = VP_RAW_EXIT;
			r.sp = r.sp ? r.sp + 8 : 0;
			r.addr = 0;
			push_pending(rec, &r);
		}
	}
	vp_ring_end(ring);
}

/*
 * One round: read every CPU's buffer, sort what is pending by time, and
 * write out what can no longer be preceded by a record still unread: a
 * record read in a later round was written after this round started, so
 * its time exceeds every time seen before this round (perf's "finished
 * round" rule).  @all writes everything (the target is gone).
 */
static void round_trip(struct record *rec, int all)
{
	uint64_t limit = rec->max_seen;
	size_t i;

	for (int c = 0; c < rec->probes.ncpus; c++)
		drain_ring(rec, &rec->probes.rings[c]);
	qsort(rec->pending, rec->npending, sizeof(*rec->pending), cmp_raw);
	if (rec->npending && rec->pending[rec->npending - 1].time > rec->max_seen)
		rec->max_seen = rec->pending[rec->npending - 1].time;
	for (i = 0; i < rec->npending && (all || rec->pending[i].time <= limit); i++)
		emit(rec, &rec->pending[i]);
	memmove(rec->pending, rec->pending + i, (rec->npending - i) * sizeof(*rec->pending));
	rec->npending -= i;
}

static void on_signal(int sig)
{
	record_signal = sig;
	record_nsignals++;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() returns at once with EINTR. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Forward the first SIGINT/SIGTERM; kill the target on the next one. */
static void forward_signals(struct record *rec, int *forwarded)
{
	if (record_nsignals > *forwarded) {
		kill(rec->pid, *forwarded ? SIGKILL : record_signal);
		pr_debug("sent signal %d to %d", *forwarded ? SIGKILL : (int)record_signal,
			 (int)rec->pid);
		*forwarded = (int)record_nsignals;
	}
}

static int wait_and_read(struct record *rec, int *status)
{
	struct pollfd *pfd = xcalloc((size_t)rec->probes.ncpus, sizeof(*pfd));
	int forwarded = 0;
	pid_t r;

	for (int c = 0; c < rec->probes.ncpus; c++) {
		pfd[c].fd = rec->probes.rings[c].fd;
		pfd[c].events = POLLIN;
	}
	for (;;) {
		/* A hung-up buffer (its task gone) would make poll() spin. */
		for (int c = 0; c < rec->probes.ncpus; c++)
			if (pfd[c].revents & (POLLHUP | POLLERR))
				pfd[c].fd = -1;
		if (poll(pfd, (nfds_t)rec->probes.ncpus, POLL_MS) < 0 && errno != EINTR)
			warning("poll failed: %s", strerror(errno));
		forward_signals(rec, &forwarded);
		r = waitpid(rec->pid, status, WNOHANG);
		if (r == rec->pid || (r < 0 && errno == ECHILD))
			break;
		round_trip(rec, 0);
	}
	/* The target and all its threads are gone: every record is in. */
	vp_addrspace_target_gone(rec->as);
	round_trip(rec, 1);
	free(pfd);
	return forwarded ? VP_END_INTERRUPTED : 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void print_summary(struct record *rec, const struct vp_trailer *tr)
{
	struct stat st;
	long long bytes = stat(rec->opts.output, &st) == 0 ? (long long)st.st_size : -1;

	if (rec->write_err) {
		error("'%s' is incomplete: only %lld bytes were written", rec->opts.output, bytes);
		return;
	}
	if (rec->opts.quiet)
		return;
	info("recorded %llu events in '%s' (%lld bytes, %.1f bytes/event), %llu lost, %zu "
	     "thread%s",
	     (unsigned long long)tr->events, rec->opts.output, bytes,
	     tr->events ? (double)bytes / (double)tr->events : 0.0,
	     (unsigned long long)rec->lost, rec->threads.n, rec->threads.n == 1 ? "" : "s");
	if (rec->lost)
		warning("%llu records were lost: the ring buffers overflowed (try a larger "
			"--buffer-size)", (unsigned long long)rec->lost);
	if (rec->foreign)
		info("%llu events from other processes were not recorded (children are not "
		     "followed)", (unsigned long long)rec->foreign);
}

/* Run the target under the probes and write the file; returns the exit code. */
static int run(struct record *rec)
{
	struct vp_trailer tr;
	int status = 0, err, code;

	err = vp_launch_release(&rec->launch);
	if (err) {
		error("cannot run '%s': %s", rec->prog, strerror(-err));
		vp_writer_free(rec->w);
		rec->w = NULL;
		unlink(rec->opts.output);
		return 1;
	}
	memset(&tr, 0, sizeof(tr));
	tr.flags = wait_and_read(rec, &status);
	tr.flags |= VP_END_EXITED;
	tr.wait_status = (uint64_t)status;
	tr.lost = rec->lost;
	tr.foreign = rec->foreign;
	tr.end_time = monotonic_ns();
	if (rec->write_err)
		tr.flags |= VP_END_WRITE_ERROR;
	err = vp_writer_finish(rec->w, &tr);
	rec->w = NULL;
	write_failed(rec, err);
	print_summary(rec, &tr);
	code = exit_code(status);
	return rec->write_err ? 1 : code;
}

static void record_release(struct record *rec)
{
	/* The kernel removes one uprobe event in 60-80 ms (RCU grace periods
	 * under a global mutex, measured on 6.18): a detached child waits
	 * for that, not the user.  Not for the return probes of a program
	 * that can throw: until removed they would still end it (or another
	 * run of it) at the first exception through a probed function. */
	if (rec->probes.nfds)
		vp_probes_close_detached(&rec->probes,
					 rec->can_throw ? VP_CLOSE_RETURNS_NOW : 0);
	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_free(rec->symfiles ? rec->symfiles[i] : NULL);
	free(rec->symfiles);
	vp_addrspace_free(rec->as);
	for (size_t i = 0; rec->exits && i < rec->hdr.nfuncs; i++)
		vp_exits_release(&rec->exits[i]);
	free(rec->exits);
	for (size_t i = 0; i < rec->npending; i++)
		if (rec->pending[i].type == VP_RAW_MMAP)
			free(rec->pending[i].mmap);
	free(rec->pending);
	idmap_release(&rec->threads);
	idmap_release(&rec->callsites);
	vp_header_release(&rec->hdr);
	free(rec->path);
	free(rec->opts.funcs.v);
	free(rec->opts.excludes.v);
	free(rec->opts.libs.v);
}

static void count_emulated(const struct record *rec, size_t *ret)
{
	*ret = 0;
	for (size_t i = 0; i < rec->hdr.nfuncs; i++)
		if (rec->hdr.funcs[i].insn_class == VP_INSN_EMULATED)
			(*ret)++;
}

/* What the "probing N functions" line says about exits. */
static void print_probing(const struct record *rec)
{
	size_t emulated, rets = 0, jmps = 0, ret_probes = 0, none = 0, at_entry = 0, unseen = 0;
	const char *what;

	count_emulated(rec, &emulated);
	if (!rec->exits) {
		info("probing %zu functions in '%s' (%zu on emulated instructions)",
		     rec->hdr.nfuncs, rec->path, emulated);
		return;
	}
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_exits *ex = &rec->exits[i];

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
	info("probing %zu functions in '%s' (%zu on emulated instructions; exits at %zu ret "
	     "and %zu tail-call jmp instructions%s)", rec->hdr.nfuncs, rec->path, emulated, rets,
	     jmps, what);
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

/*
 * Fail before the costly part when the data file cannot be created.  The
 * file itself is only created (truncated) once everything else worked.
 */
static int check_output(const char *path)
{
	struct stat st;
	char *dir, *slash;
	int ok;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return error("cannot create '%s': %s", path, strerror(EISDIR));
		if (access(path, W_OK) < 0)
			return error("cannot create '%s': %s", path, strerror(errno));
		return 0;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	ok = access(slash ? dir : ".", W_OK | X_OK) == 0;
	free(dir);
	if (!ok)
		return error("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

/* Everything before the target runs; returns 0, -1 (done) or an exit code. */
static int prepare(struct record *rec)
{
	int type, retbit, err;

	err = vp_resolve_program(rec->prog, &rec->path);
	if (err)
		return error("cannot run '%s': %s", rec->prog, strerror(-err)), 1;
	if (load_modules(rec) < 0 || load_functions(rec) < 0 || plan_exits(rec) < 0)
		return 1;
	if (rec->opts.list) {
		list_functions(rec);
		return -1;
	}
	if (check_output(rec->opts.output) < 0)
		return 1;
	err = vp_uprobe_pmu(&type, &retbit);
	if (err == -ENOENT)
		return error("the uprobe PMU is not available "
			     "(no /sys/bus/event_source/devices/uprobe)"), 1;
	if (vp_probes_remove_stale() > 0)
		warning("removed stale 'varperf' uprobes from tracefs");
	if (!rec->opts.no_calibrate && calibrate(rec) < 0)
		return 1;
	if (!rec->opts.quiet)
		print_probing(rec);
	return 0;
}

/* Fork the target, create the file, open the probes; 0 or an exit code. */
static int start(struct record *rec, int argc, char **argv)
{
	size_t need;
	int err;

	err = vp_launch_fork(&rec->launch, rec->path, argv);
	if (err)
		return error("cannot fork: %s", strerror(-err)), 1;
	rec->pid = rec->launch.pid;
	fill_header(rec, argc, argv);
	rec->w = vp_writer_new(rec->opts.output, &rec->hdr);
	if (!rec->w) {
		error("cannot create '%s': %s", rec->opts.output, strerror(errno));
		goto out_abort;
	}
	rec->as = vp_addrspace_new(rec->pid, rec->hdr.modules, rec->hdr.nmodules);
	need = vp_probes_fds_needed(rec->exits, rec->hdr.nfuncs,
				    (int)(rec->hdr.ncpu ? rec->hdr.ncpu : 1));
	if (raise_nofile(need) < 0 ||
	    vp_probes_open(&rec->probes, rec->hdr.funcs, rec->hdr.nfuncs, rec->exits,
			   rec->hdr.modules, rec->pid, (size_t)rec->opts.buf_size, 0) < 0)
		goto out_unlink;
	return 0;
out_unlink:
	vp_writer_free(rec->w);
	rec->w = NULL;
	unlink(rec->opts.output);
out_abort:
	vp_launch_abort(&rec->launch);
	return 1;
}

int cmd_record(int argc, char **argv)
{
	struct record rec;
	int code;

	memset(&rec, 0, sizeof(rec));
	code = parse_options(&rec.opts, argc, argv);
	if (code >= 0)
		goto out;
	rec.prog = argv[optind];
	code = prepare(&rec);
	if (code) {
		code = code < 0 ? 0 : code;
		goto out;
	}
	/* Signals now mean "stop the target and finish the file". */
	install_signals();
	code = start(&rec, argc - optind, argv + optind);
	if (!code)
		code = run(&rec);
out:
	record_release(&rec);
	return code;
}
