/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * calibrate.c - measure the cost of a probed call.  A helper process times
 * two functions whose first instruction we fix in assembly (one the kernel
 * emulates, one it must single-step), first unprobed, then with the same
 * entry and exit probes a recording uses; varperf then keeps timing them
 * while it records.  They run from a private copy of their code.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/calibrate.h"
#include "perf-collector/probes/probes-bpf.h"
#include "perf-collector/probes/probes.h"
#include "util/util.h"

/*
 * The two functions, in assembly so that no compiler option can change the
 * first instruction: push %rbp is emulated by the kernel's uprobe code, mov
 * is single-stepped.  Both then run the same short loop and return; the
 * labels on their ret instructions are where exit-site probes go (the
 * kernel single-steps a ret).  The code is only data here (.rodata): it
 * runs from a private copy, see calib_code_map().
 */
__asm__(".section .rodata\n"
	".p2align 4\n"
	".globl vp_calib_code\n"
	".hidden vp_calib_code\n"
	"vp_calib_code:\n"
	".globl vp_calib_emulated\n"
	".hidden vp_calib_emulated\n"
	"vp_calib_emulated:\n"
	"	push %rbp\n"
	"	mov $64, %ecx\n"
	"1:	dec %ecx\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	".globl vp_calib_emulated_ret\n"
	".hidden vp_calib_emulated_ret\n"
	"vp_calib_emulated_ret:\n"
	"	ret\n"
	".p2align 4\n"
	".globl vp_calib_stepped\n"
	".hidden vp_calib_stepped\n"
	"vp_calib_stepped:\n"
	"	mov $64, %ecx\n"
	"	push %rbp\n"
	"1:	dec %ecx\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	".globl vp_calib_stepped_ret\n"
	".hidden vp_calib_stepped_ret\n"
	"vp_calib_stepped_ret:\n"
	"	ret\n"
	".globl vp_calib_code_end\n"
	".hidden vp_calib_code_end\n"
	"vp_calib_code_end:\n"
	".previous\n");

extern const char vp_calib_code[], vp_calib_code_end[];
extern const char vp_calib_emulated[], vp_calib_stepped[];
extern const char vp_calib_emulated_ret[], vp_calib_stepped_ret[];

enum {
	NCLASSES = VP_CALIBRATE_NCOSTS,
	WARMUP = 20, /* the first hits in a process cost more: not counted */
	/* then blocks of calls, each on one CPU in turn, after a few calls
	 * not counted (the first after a move cost more) */
	NBLOCKS = 10,
	BLOCK_WARMUP = 2,
	BLOCK = 50,
	CALLS = NBLOCKS * BLOCK,
	/* a pause after every few blocks spreads them over some 10 ms */
	PAUSE_EVERY = 3,
	PAUSE_NS = 2000000,
	/* a pass whose classes' costs are implausible is timed again */
	MAXPASS = 3,
	PASS_HITS = NBLOCKS * (BLOCK_WARMUP + BLOCK),
	NHITS = WARMUP + MAXPASS * PASS_HITS, /* hits per class, at most */
	/* vp_calibrate_track(): calls per class each time, after calls not
	 * timed (the first hits after 50 ms of other work cost up to 20 us),
	 * and how many samples it pools (a uniform sample beyond that) */
	TRACK_WARMUP = 2,
	TRACK_CALLS = 8,
	TRACK_POOL = 8192,
	/* pooled samples it takes to replace the calibration: no fewer
	 * than the calibration itself had */
	TRACK_MIN = CALLS,
};

static const uint32_t classes[NCLASSES] = { VP_INSN_EMULATED, VP_INSN_STEPPED };

/* What the helper measured with its own clock_gettime() brackets. */
struct calib_result {
	double unprobed[NCLASSES];
	double probed[MAXPASS][NCLASSES];
	double spread[MAXPASS][NCLASSES]; /* half the blocks' interquartile range */
	int npass;
};

/*
 * The private copy of the code: a memfd (a temporary file if that fails)
 * mapped executable.  Its inode is this run's alone: probes of other
 * varperf runs, calibrating or tracking at the same time, are on inodes of
 * their own and never fire here, and ours never fire there.  The helper
 * inherits the mapping.  The probes name the file "/proc/self/fd/N",
 * which the kernel resolves in varperf when it opens them.
 */
struct calib_code {
	int fd;
	void *base;
	size_t len;
	char path[32];
	void (*fn[NCLASSES])(void);
	uint64_t off[NCLASSES];	    /* file offsets of the functions */
	uint64_t ret_off[NCLASSES]; /* ... and of their ret instructions */
};

static int code_file(void)
{
	/* MFD_EXEC (Linux 6.3): executable, as kernels since then want to be
	 * told; older ones refuse the flag. */
	enum { VP_MFD_EXEC = 0x10 };
	const char *dir = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	int fd;

	fd = memfd_create("varperf-calibrate", MFD_CLOEXEC | VP_MFD_EXEC);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("varperf-calibrate", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	pr_debug("calibration: memfd_create failed (%s), using a temporary file",
		 strerror(errno));
	snprintf(tmpl, sizeof(tmpl), "%s/varperf-calibrate.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	return fd;
}

/*
 * Map a private copy of the calibration code.  Private and not writable:
 * the kernel places uprobes only in such mappings of a file (valid_vma()).
 */
static int calib_code_map(struct calib_code *cc)
{
	const char *funcs[NCLASSES] = { vp_calib_emulated, vp_calib_stepped };
	const char *rets[NCLASSES] = { vp_calib_emulated_ret, vp_calib_stepped_ret };
	size_t size = (size_t)(vp_calib_code_end - vp_calib_code);
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	int err;

	memset(cc, 0, sizeof(*cc));
	cc->len = (size + (size_t)page - 1) & ~((size_t)page - 1);
	cc->fd = code_file();
	if (cc->fd < 0) {
		err = cc->fd;
		goto out;
	}
	n = pwrite(cc->fd, vp_calib_code, size, 0);
	if (n != (ssize_t)size) {
		err = n < 0 ? -errno : -EIO;
		goto out_close;
	}
	if (ftruncate(cc->fd, (off_t)cc->len) < 0) {
		err = -errno;
		goto out_close;
	}
	cc->base = mmap(NULL, cc->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, cc->fd, 0);
	if (cc->base == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	snprintf(cc->path, sizeof(cc->path), "/proc/self/fd/%d", cc->fd);
	for (int c = 0; c < NCLASSES; c++) {
		cc->off[c] = (uint64_t)(funcs[c] - vp_calib_code);
		cc->ret_off[c] = (uint64_t)(rets[c] - vp_calib_code);
		cc->fn[c] = (void (*)(void))((char *)cc->base + cc->off[c]);
	}
	return 0;
out_close:
	close(cc->fd);
out:
	cc->fd = -1;
	pr_debug("calibration: cannot map a copy of its code: %s", strerror(-err));
	/* Not cmd-record's "no permission for probes": a plain failure. */
	return err == -EACCES || err == -EPERM ? -ENOEXEC : err;
}

static void calib_code_unmap(struct calib_code *cc)
{
	if (cc->base && cc->base != MAP_FAILED)
		munmap(cc->base, cc->len);
	if (cc->fd >= 0)
		close(cc->fd);
	memset(cc, 0, sizeof(*cc));
	cc->fd = -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Centre of @n samples: the mean without the lowest and highest 5%.  A
 * 2-CPU VM preempts the helper now and then for milliseconds, which would
 * swamp a plain mean of a few hundred microsecond-sized samples; but a
 * trap's cost has a tail of its own (VM exits), and compensation must
 * subtract what a probed call costs on average, tail included: trimming
 * the middle half only made compensated means read 3-5% high.
 */
static double central_mean(double *v, size_t n)
{
	size_t lo = n / 20, hi = n - n / 20;
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = lo; i < hi; i++)
		sum += v[i];
	return hi > lo ? sum / (double)(hi - lo) : 0;
}

/*
 * Robust centre of @nb blocks of @bl samples each, at @v + @stride * b:
 * each block's central_mean(), then the median of the blocks.  A
 * preemption is one sample, trimmed in its block; a stretch of slow traps
 * (a busy host, a vCPU moved) spoils whole blocks, and the median leaves
 * them out while keeping the tail that every block has.
 */
static double block_median_spread(double *v, size_t stride, int nb, size_t bl, double *spread)
{
	double m[NBLOCKS];

	for (int b = 0; b < nb; b++)
		m[b] = central_mean(v + (size_t)b * stride, bl);
	qsort(m, (size_t)nb, sizeof(*m), cmp_double);
	/* half the interquartile range: how far a block is off, as a rule */
	if (spread)
		*spread = (m[(3 * nb) / 4] - m[nb / 4]) / 2;
	return nb % 2 ? m[nb / 2] : (m[nb / 2 - 1] + m[nb / 2]) / 2;
}

static double block_median(double *v, size_t stride, int nb, size_t bl)
{
	return block_median_spread(v, stride, nb, bl, NULL);
}

/* The CPUs the helper may run on, to spread its blocks over. */
struct cpu_list {
	int n;
	int cpu[CPU_SETSIZE];
};

static void cpu_list_init(struct cpu_list *l)
{
	cpu_set_t set;

	l->n = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				l->cpu[l->n++] = c;
}

static void pin(const struct cpu_list *l, int b)
{
	cpu_set_t set;

	if (l->n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(l->cpu[b % l->n], &set);
	sched_setaffinity(0, sizeof(set), &set); /* unpinned still works */
}

/*
 * One pass: NBLOCKS blocks, each pinned to the next CPU of @l (the vCPUs
 * of a VM can differ, and a call that moves between them costs more), the
 * classes interleaved in each, with pauses so that the blocks span some
 * 10 ms: the robust centre of each class's timed calls into @out.
 */
static void time_pass(const struct calib_code *cc, const struct cpu_list *l,
		      double out[NCLASSES], double spread[NCLASSES])
{
	static double v[NCLASSES][CALLS];
	const struct timespec pause = { 0, PAUSE_NS };

	for (int b = 0; b < NBLOCKS; b++) {
		pin(l, b);
		for (int c = 0; c < NCLASSES; c++) {
			for (int i = 0; i < BLOCK_WARMUP; i++)
				cc->fn[c]();
			for (int i = 0; i < BLOCK; i++) {
				uint64_t t0 = monotonic_ns();

				cc->fn[c]();
				v[c][b * BLOCK + i] = (double)(monotonic_ns() - t0);
			}
		}
		if (b % PAUSE_EVERY == PAUSE_EVERY - 1)
			nanosleep(&pause, NULL);
	}
	for (int c = 0; c < NCLASSES; c++) {
		for (int b = 0; verbose >= 2 && b < NBLOCKS; b++)
			pr_debug2("calibration %s block %d on CPU %d: %.0f ns",
				  c ? "stepped" : "emulated", b, l->n ? l->cpu[b % l->n] : -1,
				  central_mean(v[c] + b * BLOCK, BLOCK));
		out[c] = block_median_spread(v[c], BLOCK, NBLOCKS, BLOCK, &spread[c]);
	}
}

/*
 * Whether the costs (probed less unprobed) of a pass can be: a
 * single-stepped probe does all an emulated one does and takes a second
 * trap, 1.8 to 5 times the cost on every machine measured (the least
 * with exit probes on ret, single-stepped in both); a pass where they come
 * out alike (once 11.3 and 11.2 us, five times the usual emulated cost)
 * was timed while something else, the host or another task's probes, set
 * the pace.
 */
static int plausible(const double unprobed[NCLASSES], const double probed[NCLASSES])
{
	return probed[1] - unprobed[1] >= 1.2 * (probed[0] - unprobed[0]);
}

static void helper(const struct calib_code *cc, int to_parent, int from_parent)
{
	struct calib_result res;
	double scratch[NCLASSES];
	struct cpu_list l;
	char go;

	memset(&res, 0, sizeof(res));
	cpu_list_init(&l);
	for (int c = 0; c < NCLASSES; c++)
		for (int i = 0; i < WARMUP; i++)
			cc->fn[c]();
	time_pass(cc, &l, res.unprobed, scratch);
	if (write(to_parent, "r", 1) != 1 || read(from_parent, &go, 1) != 1)
		_exit(1);
	/* the first hits in the process, not counted */
	for (int c = 0; c < NCLASSES; c++)
		for (int i = 0; i < WARMUP; i++)
			cc->fn[c]();
	do {
		time_pass(cc, &l, res.probed[res.npass], res.spread[res.npass]);
		res.npass++;
	} while (res.npass < MAXPASS && !plausible(res.unprobed, res.probed[res.npass - 1]));
	if (write(to_parent, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(1);
	_exit(0);
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The calibration's probes, on the recording's backend. */
struct calib_probes {
	int bpf;
	struct vp_probes p;
	struct vp_bpf_probes b;
};

/* Records of the helper kept for probe_windows(). */
enum { MAXRAW = 2 * NCLASSES * NHITS + 64 };
struct raw_set {
	struct vp_raw *raws;
	size_t n;
	pid_t pid;
};

static void keep_raw(void *ctx, struct vp_raw *raw)
{
	struct raw_set *set = ctx;

	if ((raw->type == VP_RAW_ENTRY || raw->type == VP_RAW_EXIT) &&
	    raw->pid == (uint32_t)set->pid && raw->func < NCLASSES && set->n < MAXRAW)
		set->raws[set->n++] = *raw;
}

static void drop_raw(void *ctx, struct vp_raw *raw)
{
	(void)ctx;
	(void)raw;
}

static void calib_probes_close(struct calib_probes *cp)
{
	if (cp->bpf)
		vp_bpf_probes_close(&cp->b);
	else if (cp->p.nfds)
		vp_probes_close_detached(&cp->p, 0);
	memset(cp, 0, sizeof(*cp));
}

static int cmp_raw_time(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * The probe windows (exit - entry) per pass and class from the events of
 * the helper @pid, merged by time from every CPU's buffer (it may
 * migrate): the same centre of the same calls as time_pass().
 */
static int probe_windows(struct calib_probes *cp, pid_t pid, int npass,
			 double window[MAXPASS][NCLASSES])
{
	static double d[NCLASSES][NHITS];
	static struct vp_raw raws[MAXRAW];
	struct raw_set set = { raws, 0, pid };
	uint64_t entry[NCLASSES] = { 0 };
	size_t n[NCLASSES] = { 0 };
	const struct perf_event_header *h;

	if (cp->bpf) {
		vp_bpf_probes_read(&cp->b, keep_raw, &set);
		if (vp_bpf_probes_lost(&cp->b))
			return -ENOSPC;
	}
	for (int c = 0; !cp->bpf && c < cp->p.ncpus; c++) {
		struct vp_ring *r = &cp->p.rings[c];

		vp_ring_begin(r);
		while ((h = vp_ring_next(r))) {
			struct vp_raw raw;

			if (!vp_probes_decode(&cp->p, h, r->cpu, &raw))
				continue;
			if (raw.type == VP_RAW_MMAP)
				free(raw.mmap);
			if (raw.type == VP_RAW_LOST)
				return -ENOSPC;
			keep_raw(&set, &raw);
		}
		vp_ring_end(r);
	}
	qsort(raws, set.n, sizeof(*raws), cmp_raw_time);
	for (size_t i = 0; i < set.n; i++) {
		const struct vp_raw *raw = &raws[i];

		if (raw->type == VP_RAW_ENTRY)
			entry[raw->func] = raw->time;
		else if (entry[raw->func] && n[raw->func] < NHITS)
			d[raw->func][n[raw->func]++] = (double)(raw->time - entry[raw->func]);
	}
	for (int c = 0; c < NCLASSES; c++) {
		if (n[c] != WARMUP + (size_t)npass * PASS_HITS)
			return -EIO;
		for (int k = 0; k < npass; k++)
			window[k][c] = block_median(d[c] + WARMUP + k * PASS_HITS + BLOCK_WARMUP,
						    BLOCK_WARMUP + BLOCK, NBLOCKS, BLOCK);
	}
	return 0;
}

static uint64_t clamp_ns(double v)
{
	return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

/*
 * What vp_calibrate_track() needs: the code and its probes, the
 * calibration, and the pooled samples of probed calls per class.
 */
static struct {
	int open;
	struct calib_code code;
	struct calib_probes p;
	double unprobed[NCLASSES];
	struct vp_probe_cost costs[NCLASSES];
	double *pool[NCLASSES];
	size_t npool[NCLASSES];
	uint64_t seen[NCLASSES]; /* samples offered to the pool */
	uint64_t rand;
} track;

/*
 * Probe the copy of the code as a recording probes: perf events on every
 * CPU for any process (only varperf and the helper map this file) and an
 * mmap tracker on the helper, or BPF links without a pid filter; the cost
 * per hit depends on that layout.  Then let the helper time its probed
 * calls.  The probes are left open in @cp.
 */
static int attach_and_run(const struct calib_code *cc, pid_t pid, int to_child, int from_child,
			  int exit_sites, struct calib_probes *cp, struct calib_result *res,
			  double window[MAXPASS][NCLASSES])
{
	struct vp_module mod = { .path = (char *)cc->path };
	struct vp_func funcs[NCLASSES];
	struct vp_exits exits[NCLASSES];
	uint64_t ret_off[NCLASSES];
	int err;

	memset(funcs, 0, sizeof(funcs));
	memset(exits, 0, sizeof(exits));
	funcs[0].display = "vp_calib_emulated";
	funcs[1].display = "vp_calib_stepped";
	for (int c = 0; c < NCLASSES; c++) {
		funcs[c].probe_off = cc->off[c];
		ret_off[c] = cc->ret_off[c];
		exits[c].how = exit_sites ? VP_EXITS_SITES : VP_EXITS_URETPROBE;
		exits[c].n = 1;
		exits[c].offs = &ret_off[c];
	}
	errno = 0;
	/* its errors would name our code's copy: the caller says what failed */
	mute_errors(1);
	err = cp->bpf ? vp_bpf_probes_open(&cp->b, funcs, NCLASSES, exits, &mod, 0, 1 << 20, 0)
		      : vp_probes_open(&cp->p, funcs, NCLASSES, exits, &mod, pid, 1 << 20, 0);
	mute_errors(0);
	if (err) {
		/* errno is still the failed call's */
		return errno ? -errno : -EIO;
	}
	err = write(to_child, "g", 1) == 1 ? 0 : -EIO;
	if (!err)
		err = read_full(from_child, res, sizeof(*res));
	if (!err)
		err = res->npass >= 1 && res->npass <= MAXPASS ? probe_windows(cp, pid, res->npass, window)
							       : -EIO;
	return err;
}

/* Offer @v to the pool of class @c: all of the first TRACK_POOL, then a
 * uniform sample of everything offered (reservoir sampling). */
static void track_pool(int c, double v)
{
	uint64_t k = track.seen[c]++;

	if (track.npool[c] < TRACK_POOL) {
		track.pool[c][track.npool[c]++] = v;
		return;
	}
	track.rand ^= track.rand << 13; /* xorshift64 */
	track.rand ^= track.rand >> 7;
	track.rand ^= track.rand << 17;
	k = track.rand % (k + 1);
	if (k < TRACK_POOL)
		track.pool[c][k] = v;
}

void vp_calibrate_track(void)
{
	if (!track.open)
		return;
	for (int c = 0; c < NCLASSES; c++) {
		for (int i = 0; i < TRACK_WARMUP; i++)
			track.code.fn[c]();
		for (int i = 0; i < TRACK_CALLS; i++) {
			uint64_t t0 = monotonic_ns();

			track.code.fn[c]();
			track_pool(c, (double)(monotonic_ns() - t0));
		}
	}
	/* What the probes recorded is of no use: give the space back. */
	if (track.p.bpf)
		vp_bpf_probes_read(&track.p.b, drop_raw, NULL);
	for (int ci = 0; !track.p.bpf && ci < track.p.p.ncpus; ci++) {
		struct vp_ring *r = &track.p.p.rings[ci];

		vp_ring_begin(r);
		r->tail = r->head;
		vp_ring_end(r);
	}
}

/*
 * The tracked samples, once there are as many as the calibration had,
 * replace the calibration's probed time; the same 5 % trimmed mean (a
 * harder trim reads the mean of a tailed distribution low).
 */
int vp_calibrate_tracked(struct vp_probe_cost *costs)
{
	if (!track.open)
		return 0;
	if (track.npool[0] < TRACK_MIN || track.npool[1] < TRACK_MIN) {
		pr_debug("calibration tracked over %llu calls: too few, kept",
			 (unsigned long long)track.seen[0]);
		return 0;
	}
	for (int c = 0; c < NCLASSES; c++) {
		const struct vp_probe_cost *c0 = &track.costs[c];
		double full = central_mean(track.pool[c], track.npool[c]) - track.unprobed[c];
		double scale = c0->full_ns ? full / (double)c0->full_ns : 1;

		costs[c].insn_class = c0->insn_class;
		costs[c].full_ns = clamp_ns(full);
		costs[c].in_window_ns = clamp_ns((double)c0->in_window_ns * scale);
		pr_debug("calibration %s tracked over %llu calls: full %.0f ns (%.0f before), "
			 "in-window %llu ns", c ? "stepped" : "emulated",
			 (unsigned long long)track.seen[c], full, (double)c0->full_ns,
			 (unsigned long long)costs[c].in_window_ns);
	}
	return NCLASSES;
}

void vp_calibrate_done(void)
{
	if (!track.open)
		return;
	/* varperf's own calls of the code have returned: none is pending */
	if (track.p.bpf)
		vp_bpf_probes_target_gone(&track.p.b);
	calib_probes_close(&track.p);
	calib_code_unmap(&track.code);
	for (int c = 0; c < NCLASSES; c++) {
		free(track.pool[c]);
		track.pool[c] = NULL;
		track.npool[c] = 0;
		track.seen[c] = 0;
	}
	track.open = 0;
}

/* Keep the code and its probes for vp_calibrate_track(). */
static void track_start(const struct calib_code *cc, const struct calib_probes *p,
			const struct calib_result *res, const struct vp_probe_cost *costs)
{
	track.code = *cc;
	track.p = *p;
	for (int c = 0; c < NCLASSES; c++) {
		track.costs[c] = costs[c];
		track.unprobed[c] = res->unprobed[c];
		track.pool[c] = xcalloc(TRACK_POOL, sizeof(*track.pool[c]));
		track.npool[c] = 0;
		track.seen[c] = 0;
	}
	track.rand = monotonic_ns() | 1;
	track.open = 1;
}

_Static_assert(MAXPASS == 3, "choose() takes the median of three passes");

static double median3(double a, double b, double c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/*
 * The last pass, if plausible(); else (every pass was not) the median of
 * the passes, class by class, and as its spread the larger of their
 * blocks' and of how far the passes are apart.
 */
static void choose(const struct calib_result *res, double window[MAXPASS][NCLASSES],
		   double probed[NCLASSES], double win[NCLASSES], double spread[NCLASSES])
{
	int k = res->npass - 1;

	for (int c = 0; c < NCLASSES; c++) {
		probed[c] = res->probed[k][c];
		win[c] = window[k][c];
		spread[c] = res->spread[k][c];
	}
	if (plausible(res->unprobed, res->probed[k]))
		return;
	pr_debug("calibration: no pass of %d gave plausible costs: their median", res->npass);
	for (int c = 0; res->npass == MAXPASS && c < NCLASSES; c++) {
		double lo = fmin(fmin(res->probed[0][c], res->probed[1][c]), res->probed[2][c]);
		double hi = fmax(fmax(res->probed[0][c], res->probed[1][c]), res->probed[2][c]);

		probed[c] = median3(res->probed[0][c], res->probed[1][c], res->probed[2][c]);
		win[c] = median3(window[0][c], window[1][c], window[2][c]);
		spread[c] = fmax(median3(res->spread[0][c], res->spread[1][c], res->spread[2][c]),
				 (hi - lo) / 2);
	}
}

int vp_calibrate(struct vp_probe_cost *costs, int exit_sites, int bpf)
{
	struct calib_result res;
	struct calib_code cc;
	struct calib_probes p;
	double window[MAXPASS][NCLASSES], probed[NCLASSES], win[NCLASSES], spread[NCLASSES];
	int up[2], down[2], err, status;
	char ready;
	pid_t pid;

	vp_calibrate_done(); /* a second calibration replaces the first */
	memset(&p, 0, sizeof(p));
	p.bpf = bpf;
	err = calib_code_map(&cc);
	if (err)
		return err;
	if (pipe2(up, O_CLOEXEC) < 0) {
		err = -errno;
		goto out_code;
	}
	if (pipe2(down, O_CLOEXEC) < 0) {
		err = -errno;
		goto out_up;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_down;
	}
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		helper(&cc, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	err = read_full(up[0], &ready, 1);
	if (!err)
		err = attach_and_run(&cc, pid, down[1], up[0], exit_sites, &p, &res, window);
	if (err)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -EIO;
	if (err)
		goto out_down;
	choose(&res, window, probed, win, spread);
	for (int c = 0; c < NCLASSES; c++) {
		costs[c].insn_class = classes[c];
		costs[c].in_window_ns = clamp_ns(win[c] - res.unprobed[c]);
		costs[c].full_ns = clamp_ns(probed[c] - res.unprobed[c]);
		costs[c].spread_ns = clamp_ns(spread[c]);
		pr_debug("calibration %s: unprobed %.0f ns, probed %.0f ns, window %.0f ns "
			 "(%d pass%s, spread %.0f ns)", c ? "stepped" : "emulated", res.unprobed[c],
			 probed[c], win[c], res.npass, res.npass > 1 ? "es" : "", spread[c]);
	}
	track_start(&cc, &p, &res, costs);
out_down:
	if (down[0] >= 0)
		close(down[0]);
	close(down[1]);
out_up:
	close(up[0]);
	if (up[1] >= 0)
		close(up[1]);
out_code:
	if (err) {
		calib_probes_close(&p);
		calib_code_unmap(&cc);
	}
	return err ? err : NCLASSES;
}
