// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * user-probes.c - the user backend: the regions mapped into the target,
 * the runtime and the stubs written there, the entries patched, and the
 * rings read back into the records every backend produces.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/user-inject.h"
#include "perf-collector/probes/user-probes.h"
#include "perf-collector/probes/user-runtime.h"
#include "util/util.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

enum {
	/* a jmp rel32 reaches +-2 GiB; keep a page of margin each way */
	REACH = (1U << 31) - 4096 * 2,
	/* how long the clock's calibration spans, at least (ns) */
	CALIB_NS = 20000000,
	/* tracking the cost: how often, and how many runs make a measure */
	TRACK_NS = 50000000,
	TRACK_MIN = 5,
};

#define PAGE_UP(x) (((x) + 4095) & ~(size_t)4095)

static int say(char *buf, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (buf && len) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

int vp_user_probes_check(char *why, size_t len)
{
#if !defined(__x86_64__)
	return say(why, len, -ENOSYS, "the user backend patches x86-64 code only");
#elif !defined(HAVE_CAPSTONE)
	return say(why, len, -ENOSYS, "varperf was built without capstone, which the user "
		   "backend decodes the code it patches with");
#else
	if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE))
		return say(why, len, -ENOSYS, "this CPU or kernel does not let user code read "
			   "its thread pointer (rdfsbase, HWCAP2_FSGSBASE)");
	return 0;
#endif
}

uint64_t vp_user_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

uint64_t vp_user_tsc_ns(const struct vp_user_probes *u, uint64_t tsc)
{
	double d = ((double)(int64_t)(tsc - u->tsc0)) * u->ns_per_tick;

	return u->mono0 + (uint64_t)(int64_t)d;
}

/* A (tsc, monotonic ns) pair read as close together as can be. */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 20; i++) {
		uint64_t a = vp_user_tsc(), m = monotonic_ns(), b = vp_user_tsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = m;
		}
	}
}

/*
 * Where the code region goes: a free gap of @size bytes whose every byte
 * is within a jmp's reach of [@lo, @hi), the nearest below @lo first (above
 * a program lies its heap).  0 or -ENOSPC.
 */
static int place(pid_t pid, uint64_t lo, uint64_t hi, size_t size, uint64_t *ret)
{
	char path[64], line[512];
	uint64_t prev = 0x10000, best = 0, above = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (;;) {
		unsigned long long s = UINT64_MAX >> 17, e = 0;
		int more = fgets(line, sizeof(line), f) != NULL;

		if (more && sscanf(line, "%llx-%llx", &s, &e) != 2)
			continue;
		/* the gap [prev, s) */
		if (s > prev && s - prev >= size) {
			uint64_t below = (s < lo ? s : lo) - size;

			below &= ~(uint64_t)4095;
			if (below >= prev && below + size <= s && hi - below <= REACH && below < lo)
				best = below;
			if (!above && prev >= hi && prev + size - lo <= REACH)
				above = prev;
		}
		if (!more)
			break;
		if (e > prev)
			prev = e;
	}
	fclose(f);
	*ret = best ? best : above;
	return *ret ? 0 : -ENOSPC;
}

static long inject(struct vp_uinject *in, long nr, long a0, long a1, long a2, long a3, long a4,
		   long a5)
{
	const long a[6] = { a0, a1, a2, a3, a4, a5 };

	return vp_uinject_syscall(in, nr, a);
}

/* The stub of function @i: its number pushed, a call of the entry, the
 * relocated instructions and the jmp back.  0 or -errno. */
static int write_stub(struct vp_user_probes *u, size_t rt_size, uint32_t i)
{
	size_t off = rt_size + (size_t)i * VP_URT_STUB;
	unsigned char *s = u->code + off;
	uint64_t at = u->code_at + off;
	int32_t rel;
	int n;

	s[0] = 0x68; /* push $imm32 */
	memcpy(s + 1, &i, 4);
	s[5] = 0xe8;
	rel = (int32_t)(int64_t)(u->code_at + (uint64_t)(vp_urt_entry - vp_urt_start) -
				 (at + VP_URT_STUB_RELOC));
	memcpy(s + 6, &rel, 4);
	n = vp_upatch_relocate(&u->patches[i], at + VP_URT_STUB_RELOC, s + VP_URT_STUB_RELOC);
	return n < 0 ? n : 0;
}

/*
 * The unwinder's _Unwind_RaiseException, at u->unwind.addr, patched to
 * call vp_urt_unwind first, through a stub in the second mapping of the
 * code (u->unwind_at, within its reach).  It stays when the probes are
 * removed: a call still in flight then returns through the trampoline.
 * 0 or -errno (u->unwind_why says why).
 */
static int hook_unwinder(struct vp_user_probes *u, int mem, size_t rt_size, const uint64_t *rips,
			 size_t nrips)
{
	size_t off = rt_size + u->nfuncs * VP_URT_STUB;
	size_t size = u->unwind.size > 4096 ? 4096 : u->unwind.size;
	unsigned char *fc = xmalloc(size ? size : 1), *s = u->code + off, j[VP_UPATCH_JMP];
	uint64_t at = u->unwind_at + off;
	struct vp_upatch p;
	int32_t rel;
	int e, n;

	e = vp_umem_read(mem, u->unwind.addr, fc, size);
	if (!e)
		e = vp_upatch_plan_flags(fc, size, u->unwind.addr, VP_UPATCH_SKIP_UNKNOWN, &p,
					 u->unwind_why, sizeof(u->unwind_why));
	free(fc);
	if (e)
		return e;
	/* a running program (phase 2, -p): a thread stopped between the
	 * bytes the jmp replaces would resume in the middle of it */
	for (size_t t = 0; t < nrips; t++) {
		if (rips[t] > p.at && rips[t] < p.at + p.len) {
			snprintf(u->unwind_why, sizeof(u->unwind_why),
				 "a thread was stopped inside its first instructions");
			return -EBUSY;
		}
	}
	s[0] = 0xe8; /* call vp_urt_unwind */
	rel = (int32_t)(int64_t)(u->unwind_at + (uint64_t)(vp_urt_unwind - vp_urt_start) - (at + 5));
	memcpy(s + 1, &rel, 4);
	n = vp_upatch_relocate(&p, at + 5, s + 5);
	if (n < 0)
		return n;
	vp_upatch_jmp(p.at, at, j);
	return vp_umem_write(mem, p.at, j, sizeof(j));
}

/* Map the regions in varperf, write the runtime and the stubs, patch the
 * functions (every thread stopped): how many, or -errno. */
static int patch_all(struct vp_user_probes *u, const struct vp_user_func *funcs,
		     const uint64_t *rips, size_t nrips, char (*why)[128], char *err,
		     size_t errlen)
{
	size_t rt_size = ((size_t)(vp_urt_end - vp_urt_start) + 63) & ~(size_t)63;
	size_t nfuncs = u->nfuncs;
	uint64_t quads[3], t1, m1;
	unsigned char *code;
	char path[64];
	int npatched = 0, e = 0, mem;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)u->pid);
	mem = open(path, O_RDWR | O_CLOEXEC);
	if (mem < 0)
		return say(err, errlen, -errno, "cannot open '%s': %s", path, strerror(errno));
	code = mmap(NULL, u->code_size, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd, 0);
	u->shared = mmap(NULL, VP_URT_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd,
			 (off_t)u->code_size);
	if (code == MAP_FAILED || u->shared == MAP_FAILED) {
		e = -errno;
		say(err, errlen, e, "cannot map the rings: %s", strerror(-e));
		if (code != MAP_FAILED)
			munmap(code, u->code_size);
		if (u->shared != MAP_FAILED)
			munmap(u->shared, VP_URT_SHARED_SIZE);
		u->shared = NULL;
		goto out;
	}
	u->code = code;
	memcpy(u->code, vp_urt_start, (size_t)(vp_urt_end - vp_urt_start));
	if (u->flags & VP_USER_TLS)
		vp_urt_fs_patch(u->code);
	quads[0] = u->priv_at;
	quads[1] = u->shared_at;
	quads[2] = u->code_at;
	memcpy(u->code, quads, sizeof(quads));
	for (size_t i = 0; i < nfuncs; i++) {
		size_t size = funcs[i].size > 65536 ? 65536 : funcs[i].size;
		unsigned char *fc = xmalloc(size ? size : 1);
		char w[128] = "";

		e = vp_umem_read(mem, funcs[i].addr, fc, size);
		if (e)
			snprintf(w, sizeof(w), "its code cannot be read: %s", strerror(-e));
		else if (vp_upatch_plan(fc, size, funcs[i].addr, &u->patches[i], w, sizeof(w)) < 0)
			e = -EINVAL;
		else if (write_stub(u, rt_size, (uint32_t)i) < 0)
			e = -ERANGE, snprintf(w, sizeof(w), "its data is beyond 2 GiB of the "
					      "trampolines");
		/* a thread stopped between the bytes the jmp replaces would
		 * resume in the middle of the jmp */
		for (size_t t = 0; !e && t < nrips; t++)
			if (rips[t] > u->patches[i].at &&
			    rips[t] < u->patches[i].at + u->patches[i].len)
				e = -EBUSY, snprintf(w, sizeof(w), "a thread was stopped inside "
						     "its first instructions");
		free(fc);
		if (e) {
			memset(&u->patches[i], 0, sizeof(u->patches[i]));
			if (why)
				snprintf(why[i], sizeof(why[i]), "%s", w);
			e = 0;
			continue;
		}
		npatched++;
	}
	if (u->unwind_at) {
		e = hook_unwinder(u, mem, rt_size, rips, nrips);
		if (e) {
			say(err, errlen, e, "cannot hook the unwinder's _Unwind_RaiseException: %s",
			    u->unwind_why[0] ? u->unwind_why : strerror(-e));
			goto out;
		}
	}
	/* the flag, then the jumps: every thread is stopped */
	e = vp_umem_write(mem, u->priv_at + VP_URT_PRIV_FLAG, "\1", 1);
	for (size_t i = 0; !e && i < nfuncs; i++) {
		unsigned char j[VP_UPATCH_JMP];
		const struct vp_upatch *p = &u->patches[i];

		if (!p->len)
			continue;
		vp_upatch_jmp(p->at, u->code_at + rt_size + i * VP_URT_STUB, j);
		e = vp_umem_write(mem, p->at, j, sizeof(j));
	}
	if (e) {
		say(err, errlen, e, "cannot patch process %d: %s", (int)u->pid, strerror(-e));
		vp_user_probes_unpatch(u);
		goto out;
	}
	/* the clock: a calibration spanning CALIB_NS at least */
	do
		clock_pair(&t1, &m1);
	while (m1 - u->mono0 < CALIB_NS);
	u->ns_per_tick = (double)(m1 - u->mono0) / (double)(t1 - u->tsc0);
out:
	close(mem);
	return e ? e : npatched;
}

/*
 * memfd_create("varperf-user-probes", MFD_CLOEXEC) in the stopped process,
 * its name written below the red zone and put back: the memfd, or -errno
 * after the message in @err.
 */
static long create_memfd(struct vp_uinject *in, pid_t pid, char *err, size_t errlen)
{
	static const char name[] = "varperf-user-probes";
	uint64_t at = (in->saved.rsp - 1024) & ~(uint64_t)15;
	unsigned char keep[sizeof(name)];
	long memfd;
	int e;

	e = vp_umem_read(in->mem, at, keep, sizeof(keep));
	if (!e)
		e = vp_umem_write(in->mem, at, name, sizeof(name));
	if (e)
		return say(err, errlen, e, "cannot write to process %d: %s", (int)pid,
			   strerror(-e));
	memfd = inject(in, SYS_memfd_create, (long)at, 1, 0, 0, 0, 0);
	vp_umem_write(in->mem, at, keep, sizeof(keep));
	if (memfd < 0)
		say(err, errlen, (int)memfd, "memfd_create in process %d failed: %s", (int)pid,
		    strerror((int)-memfd));
	return memfd;
}

/*
 * Map the trampolines within reach of [@lo, @hi) (and of the unwinder's
 * hook), the rings shared with varperf and the threads' private slots
 * into the stopped process, from its @memfd: 0, or -errno after the
 * message in @err.
 */
static int map_regions(struct vp_user_probes *u, struct vp_uinject *in, long memfd, uint64_t lo,
		       uint64_t hi, const struct vp_user_func *unwind, char *err, size_t errlen)
{
	pid_t pid = u->pid;
	long r;
	int e;

	e = place(pid, lo, hi, u->code_size,
		  &u->code_at);
	if (e) {
		say(err, errlen, e, "no room for the trampolines within 2 GiB of the code");
		return e;
	}
	r = inject(in, SYS_mmap, (long)u->code_at, (long)u->code_size, PROT_READ | PROT_EXEC,
		   MAP_SHARED | MAP_FIXED_NOREPLACE, memfd, 0);
	if (r != (long)u->code_at) {
		e = r < 0 ? (int)r : -EEXIST;
		say(err, errlen, e, "cannot map the trampolines at %#llx in process %d: %s",
		    (unsigned long long)u->code_at, (int)pid, strerror(-e));
		return e;
	}
	/* the same code again within reach of the unwinder, for its hook */
	if (unwind) {
		u->unwind = *unwind;
		e = place(pid, unwind->addr, unwind->addr + unwind->size, u->code_size,
			  &u->unwind_at);
		r = e ? e : inject(in, SYS_mmap, (long)u->unwind_at, (long)u->code_size,
				   PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED_NOREPLACE,
				   memfd, 0);
		if (r != (long)u->unwind_at) {
			e = r < 0 ? (int)r : -EEXIST;
			say(err, errlen, e, "cannot map the trampolines near the unwinder in "
			    "process %d: %s", (int)pid, strerror(-e));
			return e;
		}
	}
	r = inject(in, SYS_mmap, 0, VP_URT_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   memfd, (long)u->code_size);
	if (r < 0 && r > -4096) {
		e = (int)r;
		say(err, errlen, e, "cannot map the rings in process %d: %s", (int)pid,
		    strerror(-e));
		return e;
	}
	u->shared_at = (uint64_t)r;
	r = inject(in, SYS_mmap, 0, VP_URT_PRIV_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0 && r > -4096) {
		e = (int)r;
		say(err, errlen, e, "cannot map the threads' slots in process %d: %s", (int)pid,
		    strerror(-e));
		return e;
	}
	u->priv_at = (uint64_t)r;
	/* a forked child finds the flag page zeroed: it records nothing */
	r = inject(in, SYS_madvise, (long)u->priv_at, 4096, MADV_WIPEONFORK, 0, 0, 0);
	if (r < 0) {
		e = (int)r;
		say(err, errlen, e, "madvise(MADV_WIPEONFORK) in process %d failed: %s",
		    (int)pid, strerror(-e));
		return e;
	}
	return 0;
}

int vp_user_probes_open(struct vp_user_probes *u, pid_t pid, pid_t tid,
			const struct vp_user_func *funcs, size_t nfuncs, const uint64_t *rips,
			size_t nrips, const struct vp_user_func *unwind, int flags,
			char (*why)[128], char *err, size_t errlen)
{
	size_t rt_size = ((size_t)(vp_urt_end - vp_urt_start) + 63) & ~(size_t)63;
	uint64_t lo = UINT64_MAX, hi = 0;
	struct vp_uinject in;
	char path[64];
	long memfd;
	int e;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	u->pid = pid;
	u->flags = flags;
	u->nfuncs = nfuncs;
	u->patches = xcalloc(nfuncs ? nfuncs : 1, sizeof(*u->patches));
	u->tails = xcalloc(VP_URT_NRINGS, sizeof(*u->tails));
	u->lost_seen = xcalloc(VP_URT_NRINGS, sizeof(*u->lost_seen));
	u->tids = xcalloc(VP_URT_NRINGS, sizeof(*u->tids));
	/* (and one stub for the unwinder's hook) */
	u->code_size = PAGE_UP(rt_size + (nfuncs + 1) * VP_URT_STUB);
	clock_pair(&u->tsc0, &u->mono0);
	e = vp_user_probes_check(err, errlen);
	if (e)
		return e;
	for (size_t i = 0; i < nfuncs; i++) {
		if (funcs[i].addr < lo)
			lo = funcs[i].addr;
		if (funcs[i].addr + funcs[i].size > hi)
			hi = funcs[i].addr + funcs[i].size;
	}
	if (nfuncs && hi - lo > REACH / 2)
		return say(err, errlen, -ERANGE, "the functions span more than 1 GiB: one region "
			   "cannot reach them all");
	e = vp_uinject_begin(&in, pid, tid);
	if (e)
		return say(err, errlen, e, "cannot stop process %d to set up: %s", (int)pid,
			   strerror(-e));
	memfd = create_memfd(&in, pid, err, errlen);
	if (memfd < 0) {
		e = (int)memfd;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, memfd);
	u->fd = open(path, O_RDWR | O_CLOEXEC);
	if (u->fd < 0 || ftruncate(u->fd, (off_t)(u->code_size + VP_URT_SHARED_SIZE)) < 0) {
		e = -errno;
		say(err, errlen, e, "cannot open the target's memfd '%s': %s", path, strerror(-e));
		goto out_close;
	}
	e = map_regions(u, &in, memfd, nfuncs ? lo : 0x10000000, nfuncs ? hi : 0x10000000,
			unwind, err, errlen);
	if (e)
		goto out_close;
	/* done with the thread: the code is read and patched as it is, not
	 * with the syscall instruction at the thread's instruction pointer */
	inject(&in, SYS_close, memfd, 0, 0, 0, 0, 0);
	e = vp_uinject_end(&in);
	if (e)
		return say(err, errlen, e, "cannot restore process %d after setting up: %s",
			   (int)pid, strerror(-e));
	return patch_all(u, funcs, rips, nrips, why, err, errlen);
out_close:
	inject(&in, SYS_close, memfd, 0, 0, 0, 0, 0);
out:
	vp_uinject_end(&in);
	return e;
}

static unsigned char *ring(const struct vp_user_probes *u, unsigned i)
{
	return u->shared + VP_URT_RINGS_OFF + (size_t)i * VP_URT_RING_SIZE;
}

static unsigned nrings(const struct vp_user_probes *u)
{
	uint64_t n;

	if (!u->shared)
		return 0;
	n = __atomic_load_n((uint64_t *)(u->shared + VP_URT_CTL_NRINGS), __ATOMIC_ACQUIRE);
	return n > VP_URT_NRINGS ? VP_URT_NRINGS : (unsigned)n;
}

long vp_user_probes_read(struct vp_user_probes *u, void (*fn)(void *ctx, struct vp_raw *r),
			 void *ctx)
{
	unsigned n = nrings(u);
	long count = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned char *h = ring(u, i);
		const struct vp_urt_event *ev = (const void *)(h + VP_URT_R_EVENTS);
		uint32_t tid = __atomic_load_n((uint32_t *)(h + VP_URT_R_TID), __ATOMIC_ACQUIRE);
		uint32_t pid = __atomic_load_n((uint32_t *)(h + VP_URT_R_TID + 4), __ATOMIC_ACQUIRE);
		uint64_t head, t;

		if (!tid || !pid)
			continue;
		head = __atomic_load_n((uint64_t *)(h + VP_URT_R_HEAD), __ATOMIC_ACQUIRE);
		if (u->tids[i])
			tid = u->tids[i];
		for (t = u->tails[i]; t != head; t++) {
			const struct vp_urt_event *e = &ev[t & (VP_URT_RING_CAP - 1)];
			struct vp_raw r;

			if (e->exit == 2) {
				/* a new thread took the ring with its slot */
				tid = (uint32_t)e->addr;
				continue;
			}
			if (e->func >= u->nfuncs)
				continue;
			memset(&r, 0, sizeof(r));
			r.time = vp_user_tsc_ns(u, e->tsc);
			r.sp = e->sp;
			r.addr = e->addr;
			r.pid = pid;
			r.tid = tid;
			r.func = e->func;
			r.type = e->exit ? VP_RAW_EXIT : VP_RAW_ENTRY;
			fn(ctx, &r);
			count++;
		}
		u->tails[i] = head;
		u->tids[i] = tid;
		__atomic_store_n((uint64_t *)(h + VP_URT_R_TAIL), head, __ATOMIC_RELEASE);
	}
	u->records += (uint64_t)count;
	return count;
}

static uint64_t sum_rings(const struct vp_user_probes *u, size_t off)
{
	unsigned n = nrings(u);
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += __atomic_load_n((uint64_t *)(ring(u, i) + off), __ATOMIC_RELAXED);
	return s;
}

uint64_t vp_user_probes_lost(struct vp_user_probes *u)
{
	unsigned n = nrings(u);
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t l = __atomic_load_n((uint64_t *)(ring(u, i) + VP_URT_R_LOST),
					     __ATOMIC_RELAXED);

		s += l - u->lost_seen[i];
		u->lost_seen[i] = l;
	}
	return s;
}

uint64_t vp_user_probes_noring(const struct vp_user_probes *u)
{
	return u->shared ? *(volatile uint64_t *)(u->shared + VP_URT_CTL_NORING) : 0;
}

uint64_t vp_user_probes_deep(const struct vp_user_probes *u)
{
	return sum_rings(u, VP_URT_R_DEEP);
}

uint64_t vp_user_probes_nested(const struct vp_user_probes *u)
{
	return sum_rings(u, VP_URT_R_NESTED);
}

/*
 * Put back the original bytes of the functions @drop marks (NULL: all)
 * through /proc/PID/mem.  A thread stopped at the jmp resumes at the
 * original first instruction; one in the stub's relocated copy goes on
 * there and jumps back past it: the stub stays.  A restored function is
 * not restored again.  0 or the first -errno.
 */
static int restore(struct vp_user_probes *u, const unsigned char *drop)
{
	char path[64];
	int mem, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)u->pid);
	mem = open(path, O_RDWR | O_CLOEXEC);
	if (mem < 0)
		return -errno;
	for (size_t i = 0; i < u->nfuncs; i++) {
		struct vp_upatch *p = &u->patches[i];
		int e;

		if ((drop && !drop[i]) || !p->len)
			continue;
		e = vp_umem_write(mem, p->at, p->orig, VP_UPATCH_JMP);
		if (e && !err)
			err = e;
		if (!e)
			p->len = 0;
	}
	close(mem);
	return err;
}

int vp_user_probes_unpatch(struct vp_user_probes *u)
{
	int err;

	if (u->unpatched || !u->patches)
		return 0;
	err = restore(u, NULL);
	u->unpatched = !err;
	return err;
}

int vp_user_probes_drop(struct vp_user_probes *u, const unsigned char *drop)
{
	if (u->unpatched || !u->patches)
		return 0;
	return restore(u, drop);
}

void vp_user_probes_close(struct vp_user_probes *u)
{
	if (u->code)
		munmap(u->code, u->code_size);
	if (u->shared)
		munmap(u->shared, VP_URT_SHARED_SIZE);
	if (u->pid && u->fd >= 0)
		close(u->fd);
	vp_user_calib_free(u->calib);
	free(u->pool_in);
	free(u->pool_full);
	free(u->patches);
	free(u->tails);
	free(u->lost_seen);
	free(u->tids);
	memset(u, 0, sizeof(*u));
	u->fd = -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @n calls of @fn: the fastest of @rounds batches, in ticks per call. */
static double batch_ticks(void (*fn)(void), int n, int rounds)
{
	double best = 1e300;

	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = vp_user_tsc(), t1;

		for (int i = 0; i < n; i++) {
			fn();
			__asm__ volatile("" ::: "memory");
		}
		t1 = vp_user_tsc();
		if ((double)(t1 - t0) / n < best)
			best = (double)(t1 - t0) / n;
	}
	return best;
}

/* The calibration's harness: an empty function, patched, in varperf. */
struct vp_user_calib {
	struct vp_user_probes u;
	unsigned char *priv;
	void (*fn)(void);
	double plain;	/* ticks per unpatched call */
	uint64_t *d;	/* in-window ticks of the calls of one run */
	size_t dcap;
};

void vp_user_calib_free(struct vp_user_calib *c)
{
	if (!c)
		return;
	free(c->d);
	free(c->u.patches);
	if (c->u.code && c->u.code != MAP_FAILED)
		munmap(c->u.code, c->u.code_size);
	if (c->u.shared && c->u.shared != MAP_FAILED)
		munmap(c->u.shared, VP_URT_SHARED_SIZE);
	if (c->priv && c->priv != MAP_FAILED)
		munmap(c->priv, VP_URT_PRIV_SIZE);
	free(c);
}

int vp_user_calib_new(struct vp_user_calib **ret, int flags)
{
	/* an empty function: a 5-byte nop and a ret */
	static const unsigned char empty[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3 };
	enum { FN_OFF = 3072 };
	size_t rt_size = ((size_t)(vp_urt_end - vp_urt_start) + 63) & ~(size_t)63;
	struct vp_user_calib *c;
	uint64_t quads[3];
	int err = vp_user_probes_check(NULL, 0);

	if (err)
		return err;
	c = xcalloc(1, sizeof(*c));
	c->u.nfuncs = 1;
	c->u.code_size = 4096;
	c->u.patches = xcalloc(1, sizeof(*c->u.patches));
	c->u.code = mmap(NULL, c->u.code_size, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->u.shared = mmap(NULL, VP_URT_SHARED_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	c->priv = mmap(NULL, VP_URT_PRIV_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->u.code == MAP_FAILED || c->u.shared == MAP_FAILED || c->priv == MAP_FAILED) {
		vp_user_calib_free(c);
		return -ENOMEM;
	}
	c->u.code_at = (uint64_t)(uintptr_t)c->u.code;
	memcpy(c->u.code, vp_urt_start, (size_t)(vp_urt_end - vp_urt_start));
	if (flags & VP_USER_TLS)
		vp_urt_fs_patch(c->u.code);
	quads[0] = (uint64_t)(uintptr_t)c->priv;
	quads[1] = (uint64_t)(uintptr_t)c->u.shared;
	quads[2] = c->u.code_at;
	memcpy(c->u.code, quads, sizeof(quads));
	memcpy(c->u.code + FN_OFF, empty, sizeof(empty));
	c->fn = (void (*)(void))(uintptr_t)(c->u.code + FN_OFF);
	c->plain = batch_ticks(c->fn, 2000, 15);
	err = vp_upatch_plan(empty, sizeof(empty), c->u.code_at + FN_OFF, &c->u.patches[0], NULL,
			     0);
	if (!err)
		err = write_stub(&c->u, rt_size, 0);
	if (err) {
		vp_user_calib_free(c);
		return err;
	}
	vp_upatch_jmp(c->u.code_at + FN_OFF, c->u.code_at + rt_size, c->u.code + FN_OFF);
	c->priv[VP_URT_PRIV_FLAG] = 1;
	__builtin___clear_cache((char *)c->u.code, (char *)c->u.code + c->u.code_size);
	*ret = c;
	return 0;
}

int vp_user_calib_run(struct vp_user_calib *c, int calls, int rounds, double *in_window,
		      double *full)
{
	return vp_user_calib_run_spread(c, calls, rounds, in_window, full, NULL);
}

int vp_user_calib_run_spread(struct vp_user_calib *c, int calls, int rounds, double *in_window,
			     double *full, double *spread)
{
	unsigned char *h = c->u.shared + VP_URT_RINGS_OFF;
	const struct vp_urt_event *ev = (const void *)(h + VP_URT_R_EVENTS);
	double probed = 1e300, *rm = xcalloc(rounds > 0 ? (size_t)rounds : 1, sizeof(*rm));
	size_t nd = 0, nrm = 0;

	if ((size_t)calls * rounds > c->dcap) {
		c->dcap = (size_t)calls * rounds;
		free(c->d);
		c->d = xcalloc(c->dcap, sizeof(*c->d));
	}
	for (int r = 0; r < rounds; r++) {
		uint64_t head, tail;
		double b = batch_ticks(c->fn, calls, 1);
		size_t from = nd;

		if (b < probed)
			probed = b;
		/* the time each call saw from inside: entry to exit */
		head = *(volatile uint64_t *)(h + VP_URT_R_HEAD);
		tail = *(volatile uint64_t *)(h + VP_URT_R_TAIL);
		for (uint64_t t = tail; t + 1 < head; t++) {
			const struct vp_urt_event *a = &ev[t & (VP_URT_RING_CAP - 1)];
			const struct vp_urt_event *z = &ev[(t + 1) & (VP_URT_RING_CAP - 1)];

			if (!a->exit && z->exit && nd < c->dcap) {
				c->d[nd++] = z->tsc - a->tsc;
				t++;
			}
		}
		*(volatile uint64_t *)(h + VP_URT_R_TAIL) = head;
		/* the round's median in-window time: how the rounds spread */
		if (nd > from) {
			qsort(c->d + from, nd - from, sizeof(*c->d), cmp_u64);
			rm[nrm++] = (double)c->d[from + (nd - from) / 2];
		}
	}
	if (!nd) {
		free(rm);
		return -EIO;
	}
	qsort(c->d, nd, sizeof(*c->d), cmp_u64);
	*in_window = (double)c->d[nd / 2];
	*full = probed - c->plain;
	if (spread) {
		/* half the rounds' interquartile range, as the kernel probes'
		 * calibration's blocks */
		qsort(rm, nrm, sizeof(*rm), cmp_double);
		for (size_t i = 0; verbose >= 2 && i < nrm; i++)
			pr_debug2("user backend calibration: round median %zu: %.0f ticks", i, rm[i]);
		*spread = nrm ? (rm[(3 * nrm) / 4 < nrm ? (3 * nrm) / 4 : nrm - 1] - rm[nrm / 4]) / 2
			      : 0;
	}
	free(rm);
	return 0;
}

int vp_user_probes_calibrate(int flags, uint64_t *in_window_ns, uint64_t *full_ns,
			     uint64_t *spread_ns)
{
	struct vp_user_calib *c;
	uint64_t t0, m0, t1, m1;
	double in, full, spread = 0, ns_per_tick;
	int err;

	clock_pair(&t0, &m0);
	err = vp_user_calib_new(&c, flags);
	if (!err)
		err = vp_user_calib_run_spread(c, 2000, 15, &in, &full, &spread);
	vp_user_calib_free(c);
	if (err)
		return err;
	do
		clock_pair(&t1, &m1);
	while (m1 - m0 < 2000000);
	ns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);
	*in_window_ns = (uint64_t)(in * ns_per_tick + 0.5);
	*full_ns = full > 0 ? (uint64_t)(full * ns_per_tick + 0.5) : 0;
	*spread_ns = (uint64_t)(spread * ns_per_tick + 0.5);
	return 0;
}

void vp_user_probes_track(struct vp_user_probes *u)
{
	uint64_t now = monotonic_ns();
	double in, full;

	if (!u->ns_per_tick || now - u->tracked_ns < TRACK_NS)
		return;
	u->tracked_ns = now;
	if (!u->calib && vp_user_calib_new(&u->calib, u->flags) < 0)
		return;
	if (vp_user_calib_run(u->calib, 200, 3, &in, &full) < 0)
		return;
	if (u->npool == u->pool_cap) {
		u->pool_cap = u->pool_cap ? 2 * u->pool_cap : 64;
		u->pool_in = xrealloc(u->pool_in, u->pool_cap * sizeof(*u->pool_in));
		u->pool_full = xrealloc(u->pool_full, u->pool_cap * sizeof(*u->pool_full));
	}
	u->pool_in[u->npool] = in;
	u->pool_full[u->npool++] = full;
}


static double median(const double *v, size_t n)
{
	double *c = xmalloc(n * sizeof(*c)), m;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = c[n / 2];
	free(c);
	return m;
}

int vp_user_probes_tracked(const struct vp_user_probes *u, uint64_t *in_window_ns,
			   uint64_t *full_ns)
{
	double in, full;

	if (u->npool < TRACK_MIN)
		return -EAGAIN;
	in = median(u->pool_in, u->npool) * u->ns_per_tick;
	full = median(u->pool_full, u->npool) * u->ns_per_tick;
	*in_window_ns = (uint64_t)(in + 0.5);
	*full_ns = full > 0 ? (uint64_t)(full + 0.5) : 0;
	return 0;
}
