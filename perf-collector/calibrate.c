/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * calibrate.c - measure the cost of a probed call.  A helper process times
 * two functions whose first instruction we fix in assembly (one the kernel
 * emulates, one it must single-step), first unprobed, then with the same
 * entry and exit probes a recording uses.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "probes.h"
#include "util.h"

/*
 * Written in assembly so that no compiler option can change the first
 * instruction: push %rbp is emulated by the kernel's uprobe code, mov is
 * single-stepped.  Both then run the same short loop and return; the
 * labels on their ret instructions are where exit-site probes go (the
 * kernel single-steps a ret).
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl vp_calib_emulated\n"
	".hidden vp_calib_emulated\n"
	".type vp_calib_emulated, @function\n"
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
	".size vp_calib_emulated, .-vp_calib_emulated\n"
	".p2align 4\n"
	".globl vp_calib_stepped\n"
	".hidden vp_calib_stepped\n"
	".type vp_calib_stepped, @function\n"
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
	".size vp_calib_stepped, .-vp_calib_stepped\n");

void vp_calib_emulated(void);
void vp_calib_stepped(void);
extern const char vp_calib_emulated_ret[], vp_calib_stepped_ret[];

enum {
	NCLASSES = VP_CALIBRATE_NCOSTS,
	WARMUP = 20, /* the first hits in a process cost more: not counted */
	CALLS = 500,
};

static const uint32_t classes[NCLASSES] = { VP_INSN_EMULATED, VP_INSN_STEPPED };

/* What the helper measured with its own clock_gettime() brackets. */
struct calib_result {
	double unprobed[NCLASSES];
	double probed[NCLASSES];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Direct calls only: an indirect call would need an endbr64 under IBT. */
static void call_class(int c)
{
	if (c == 0)
		vp_calib_emulated();
	else
		vp_calib_stepped();
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

static double time_calls(int c, int n)
{
	double v[CALLS];

	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		call_class(c);
		v[i] = (double)(now_ns() - t0);
	}
	return central_mean(v, (size_t)n);
}

static void helper(int to_parent, int from_parent)
{
	struct calib_result res;
	char go;

	for (int c = 0; c < NCLASSES; c++) {
		for (int i = 0; i < WARMUP; i++)
			call_class(c);
		res.unprobed[c] = time_calls(c, CALLS);
	}
	if (write(to_parent, "r", 1) != 1 || read(from_parent, &go, 1) != 1)
		_exit(1);
	for (int c = 0; c < NCLASSES; c++) {
		for (int i = 0; i < WARMUP; i++)
			call_class(c);
		res.probed[c] = time_calls(c, CALLS);
	}
	if (write(to_parent, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(1);
	_exit(0);
}

struct find_off {
	uintptr_t addr;
	uint64_t off;
	int found;
};

static int find_off_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_off *fo = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && fo->addr >= lo && fo->addr < lo + ph->p_filesz) {
			fo->off = fo->addr - lo + ph->p_offset;
			fo->found = 1;
			return 1;
		}
	}
	return 0;
}

/*
 * File offset of our own code at @addr.  From the loaded program headers
 * rather than the symbol table, so it works for a stripped varperf too.
 */
static int self_offset(uintptr_t addr, uint64_t *ret)
{
	struct find_off fo = { addr, 0, 0 };

	dl_iterate_phdr(find_off_cb, &fo);
	*ret = fo.off;
	return fo.found ? 0 : -ENOENT;
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

/* Mean probe window (exit - entry) per class from the recorded events. */
static int cmp_raw_time(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * Mean probe window (exit - entry) per class from the recorded events,
 * merged by time from every CPU's buffer (the helper may migrate).
 */
static int probe_windows(struct vp_probes *p, double window[NCLASSES])
{
	static double d[NCLASSES][WARMUP + CALLS];
	enum { MAXRAW = 4 * NCLASSES * (WARMUP + CALLS) };
	static struct vp_raw raws[MAXRAW];
	uint64_t entry[NCLASSES] = { 0 };
	size_t n[NCLASSES] = { 0 }, nraw = 0;
	const struct perf_event_header *h;

	for (int c = 0; c < p->ncpus; c++) {
		struct vp_ring *r = &p->rings[c];

		vp_ring_begin(r);
		while ((h = vp_ring_next(r))) {
			struct vp_raw raw;

			if (!vp_probes_decode(p, h, r->cpu, &raw))
				continue;
			if (raw.type == VP_RAW_MMAP)
				free(raw.mmap);
			if (raw.type == VP_RAW_LOST)
				return -ENOSPC;
			if ((raw.type == VP_RAW_ENTRY || raw.type == VP_RAW_EXIT) &&
			    raw.func < NCLASSES && nraw < MAXRAW)
				raws[nraw++] = raw;
		}
		vp_ring_end(r);
	}
	qsort(raws, nraw, sizeof(*raws), cmp_raw_time);
	for (size_t i = 0; i < nraw; i++) {
		const struct vp_raw *raw = &raws[i];

		if (raw->type == VP_RAW_ENTRY)
			entry[raw->func] = raw->time;
		else if (entry[raw->func] && n[raw->func] < WARMUP + CALLS)
			d[raw->func][n[raw->func]++] = (double)(raw->time - entry[raw->func]);
	}
	for (int c = 0; c < NCLASSES; c++) {
		if (n[c] != WARMUP + CALLS)
			return -EIO;
		window[c] = central_mean(d[c] + WARMUP, CALLS);
	}
	return 0;
}

static uint64_t clamp_ns(double v)
{
	return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

/* What vp_calibrate_track() needs: the probes, and the calibration. */
static struct {
	int open;
	struct vp_probes p;
	double unprobed[NCLASSES];
	struct vp_probe_cost costs[NCLASSES];
	double sum[NCLASSES];
	uint64_t n[NCLASSES];
} track;

static int attach_and_run(pid_t pid, int to_child, int from_child, int exit_sites,
			  struct calib_result *res, double window[NCLASSES])
{
	struct vp_module mod = { .path = "/proc/self/exe" };
	struct vp_func funcs[NCLASSES];
	struct vp_exits exits[NCLASSES];
	uint64_t ret_off[NCLASSES];
	struct vp_probes p;
	int err;

	memset(funcs, 0, sizeof(funcs));
	memset(exits, 0, sizeof(exits));
	funcs[0].display = "vp_calib_emulated";
	funcs[1].display = "vp_calib_stepped";
	if (self_offset((uintptr_t)vp_calib_emulated, &funcs[0].probe_off) < 0 ||
	    self_offset((uintptr_t)vp_calib_stepped, &funcs[1].probe_off) < 0 ||
	    self_offset((uintptr_t)vp_calib_emulated_ret, &ret_off[0]) < 0 ||
	    self_offset((uintptr_t)vp_calib_stepped_ret, &ret_off[1]) < 0)
		return -ENOENT;
	for (int c = 0; c < NCLASSES; c++) {
		exits[c].how = exit_sites ? VP_EXITS_SITES : VP_EXITS_URETPROBE;
		exits[c].n = 1;
		exits[c].offs = &ret_off[c];
	}
	/* The kernel resolves the magic link to our own executable's inode. */
	/* The layout of a recording (events on every CPU for any process,
	 * an mmap tracker on the helper): the cost per hit depends on it. */
	if (vp_probes_open(&p, funcs, NCLASSES, exits, &mod, pid, 256 << 10, 0) < 0)
		return -EACCES;
	err = write(to_child, "g", 1) == 1 ? 0 : -EIO;
	if (!err)
		err = read_full(from_child, res, sizeof(*res));
	if (!err)
		err = probe_windows(&p, window);
	if (err || track.open) {
		vp_probes_close_detached(&p, 0);
		return err;
	}
	/* kept for vp_calibrate_track() */
	track.p = p;
	track.open = 1;
	return 0;
}

void vp_calibrate_track(void)
{
	enum { TRACK_CALLS = 8 };

	if (!track.open)
		return;
	for (int c = 0; c < NCLASSES; c++) {
		double v[TRACK_CALLS];

		for (int i = 0; i < TRACK_CALLS; i++) {
			uint64_t t0 = now_ns();

			call_class(c);
			v[i] = (double)(now_ns() - t0);
		}
		/* a preempted call says nothing about probes: the middle half */
		qsort(v, TRACK_CALLS, sizeof(*v), cmp_double);
		for (int i = TRACK_CALLS / 4; i < TRACK_CALLS - TRACK_CALLS / 4; i++) {
			track.sum[c] += v[i];
			track.n[c]++;
		}
	}
	/* What the probes recorded is of no use: give the space back. */
	for (int ci = 0; ci < track.p.ncpus; ci++) {
		struct vp_ring *r = &track.p.rings[ci];

		vp_ring_begin(r);
		r->tail = r->head;
		vp_ring_end(r);
	}
}

int vp_calibrate_tracked(struct vp_probe_cost *costs)
{
	if (!track.open || !track.n[0] || !track.n[1])
		return 0;
	for (int c = 0; c < NCLASSES; c++) {
		const struct vp_probe_cost *c0 = &track.costs[c];
		double full = track.sum[c] / (double)track.n[c] - track.unprobed[c];
		double scale = c0->full_ns ? full / (double)c0->full_ns : 1;

		costs[c].insn_class = c0->insn_class;
		costs[c].full_ns = clamp_ns(full);
		costs[c].in_window_ns = clamp_ns((double)c0->in_window_ns * scale);
		pr_debug("calibration %s tracked over %llu calls: full %.0f ns (%.0f before), "
			 "in-window %llu ns", c ? "stepped" : "emulated",
			 (unsigned long long)track.n[c], full, (double)c0->full_ns,
			 (unsigned long long)costs[c].in_window_ns);
	}
	return NCLASSES;
}

void vp_calibrate_done(void)
{
	if (!track.open)
		return;
	vp_probes_close_detached(&track.p, 0);
	track.open = 0;
}

/*
 * The probes of an earlier varperf on these same functions (of this same
 * executable) may still be on their way out: the kernel removes them
 * slowly, in a background process, and until then they fire in every
 * process that runs the code, ours included - a calibration would then
 * time probed calls as unprobed ones.  Wait, up to @max_ms, until calling
 * both functions here takes what an unprobed call takes.  Returns 0, or
 * -EBUSY if they are still probed.
 */
static int wait_unprobed(int max_ms)
{
	enum { STALE_NS = 2000, STEP_MS = 50 };

	for (int waited = 0; waited <= max_ms; waited += STEP_MS) {
		uint64_t slowest = 0;

		/* the fastest of five calls of each, and the slower of those */
		for (int c = 0; c < NCLASSES; c++) {
			uint64_t best = UINT64_MAX;

			for (int i = 0; i < 5; i++) {
				uint64_t t0 = now_ns(), d;

				call_class(c);
				d = now_ns() - t0;
				if (d < best)
					best = d;
			}
			if (best > slowest)
				slowest = best;
		}
		if (slowest < STALE_NS)
			return 0;
		if (waited == 0)
			pr_debug("calibration: stale probes on varperf's own code, waiting");
		usleep(STEP_MS * 1000);
	}
	return -EBUSY;
}

int vp_calibrate(struct vp_probe_cost *costs, int exit_sites)
{
	struct calib_result res;
	double window[NCLASSES];
	int up[2], down[2], err, status;
	char ready;
	pid_t pid;

	if (wait_unprobed(5000) < 0)
		return -EBUSY;
	if (pipe2(up, O_CLOEXEC) < 0)
		return -errno;
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
		helper(up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	err = read_full(up[0], &ready, 1);
	if (!err)
		err = attach_and_run(pid, down[1], up[0], exit_sites, &res, window);
	if (err) {
		kill(pid, SIGKILL);
		vp_calibrate_done();
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -EIO;
	for (int c = 0; !err && c < NCLASSES; c++) {
		costs[c].insn_class = classes[c];
		costs[c].in_window_ns = clamp_ns(window[c] - res.unprobed[c]);
		costs[c].full_ns = clamp_ns(res.probed[c] - res.unprobed[c]);
		track.costs[c] = costs[c];
		track.unprobed[c] = res.unprobed[c];
		track.sum[c] = 0;
		track.n[c] = 0;
		pr_debug("calibration %s: unprobed %.0f ns, probed %.0f ns, window %.0f ns",
			 c ? "stepped" : "emulated", res.unprobed[c], res.probed[c], window[c]);
	}
out_down:
	if (down[0] >= 0)
		close(down[0]);
	close(down[1]);
out_up:
	close(up[0]);
	if (up[1] >= 0)
		close(up[1]);
	return err ? err : NCLASSES;
}
