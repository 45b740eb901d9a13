/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * perf-event.c - perf_event_open(2), the uprobe PMU, ring buffers, and the
 * single place that turns an open failure into advice.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/kernel/perf-event.h"
#include "util/util.h"

static const char uprobe_sysfs[] = "/sys/bus/event_source/devices/uprobe";

/* Type of the uprobe PMU once known, to recognise its events in errors. */
static int uprobe_type = -1;

int vp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

int vp_uprobe_pmu(int *type, int *retprobe_bit)
{
	char path[256], buf[64];
	int bit = 0, ret;

	snprintf(path, sizeof(path), "%s/type", uprobe_sysfs);
	ret = read_sysfs(path, buf, sizeof(buf));
	if (ret < 0)
		return ret == -EACCES ? ret : -ENOENT;
	*type = atoi(buf);
	uprobe_type = *type;
	/* "config:0": the bit of attr.config that asks for a return probe. */
	snprintf(path, sizeof(path), "%s/format/retprobe", uprobe_sysfs);
	if (read_sysfs(path, buf, sizeof(buf)) == 0 && sscanf(buf, "config:%d", &bit) != 1)
		bit = 0;
	*retprobe_bit = bit;
	return 0;
}

void vp_uprobe_attr(struct perf_event_attr *attr, int type, int retprobe_bit, int ret,
		    const char *path, uint64_t off)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = (uint32_t)type;
	attr->config = ret ? 1ULL << retprobe_bit : 0;
	attr->config1 = (uint64_t)(uintptr_t)path;
	attr->config2 = off;
	attr->sample_period = 1;
	/* One clock for every buffer, and the one targets use in their own
	 * clock_gettime() brackets (the default perf clock is offset). */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->sample_id_all = 1;
}

static int paranoid_level(void)
{
	char buf[32];

	if (read_sysfs("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) < 0)
		return -100;
	return atoi(buf);
}

const char *vp_perf_open_strerror(int err, const struct perf_event_attr *attr, char *buf,
				  size_t len)
{
	int is_uprobe = attr && uprobe_type >= 0 && attr->type == (uint32_t)uprobe_type;
	int level = paranoid_level();
	char lvl[32] = "unknown";

	if (err < 0)
		err = -err;
	if (level != -100)
		snprintf(lvl, sizeof(lvl), "%d", level);
	switch (err) {
	case EACCES:
	case EPERM:
		if (is_uprobe)
			snprintf(buf, len,
				 "%s: uprobes need CAP_SYS_ADMIN (run varperf as root); "
				 "kernel.perf_event_paranoid is %s",
				 strerror(err), lvl);
		else
			snprintf(buf, len,
				 "%s: needs CAP_PERFMON or CAP_SYS_ADMIN, or "
				 "kernel.perf_event_paranoid <= 1 (it is %s)",
				 strerror(err), lvl);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len, "%s: each probe needs one file descriptor per CPU; "
			 "probe fewer functions (-f) or raise 'ulimit -n'", strerror(err));
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		snprintf(buf, len, "%s: this kernel does not support the event%s", strerror(err),
			 is_uprobe ? " (no CONFIG_UPROBE_EVENTS?)" : "");
		break;
	case EINVAL:
		snprintf(buf, len, "%s: the kernel rejected the event%s", strerror(err),
			 is_uprobe ? " (is the offset inside an executable segment?)" : "");
		break;
	case EBUSY:
		snprintf(buf, len, "%s: another tool holds the PMU exclusively", strerror(err));
		break;
	default:
		snprintf(buf, len, "%s", strerror(err));
		break;
	}
	return buf;
}

int vp_ring_map(struct vp_ring *r, int fd, int cpu, size_t data_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = 1;

	while (pages * page < data_size)
		pages <<= 1;
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cpu = cpu;
	r->map_len = (pages + 1) * page;
	r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->data = (unsigned char *)r->base + page;
	r->mask = pages * page - 1;
	return 0;
}

void vp_ring_unmap(struct vp_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	free(r->tmp);
	r->base = NULL;
	r->tmp = NULL;
}

int vp_ring_redirect(struct vp_ring *r, int fd)
{
	return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0 ? -errno : 0;
}

void vp_ring_begin(struct vp_ring *r)
{
	struct perf_event_mmap_page *pc = r->base;

	/* Pairs with the kernel's store of data_head after writing records. */
	r->head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	r->tail = pc->data_tail;
}

const struct perf_event_header *vp_ring_next(struct vp_ring *r)
{
	const struct perf_event_header *h;
	uint64_t off, size;

	if (r->tail >= r->head)
		return NULL;
	off = r->tail & r->mask;
	h = (const void *)(r->data + off);
	size = h->size;
	if (size < sizeof(*h) || size > r->head - r->tail) {
		/* Cannot happen with a sane kernel; drop the rest rather than loop. */
		r->tail = r->head;
		return NULL;
	}
	if (off + size > r->mask + 1) {
		uint64_t first = r->mask + 1 - off;

		if (r->tmp_len < size) {
			r->tmp = xrealloc(r->tmp, size);
			r->tmp_len = size;
		}
		memcpy(r->tmp, r->data + off, first);
		memcpy(r->tmp + first, r->data, size - first);
		h = (const void *)r->tmp;
	}
	r->tail += size;
	return h;
}

void vp_ring_end(struct vp_ring *r)
{
	struct perf_event_mmap_page *pc = r->base;

	/* Our reads of the records must complete before the kernel reuses them. */
	__atomic_store_n(&pc->data_tail, r->tail, __ATOMIC_RELEASE);
}

int vp_capable(int cap)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long eff = 0;
	char line[256];
	int found = 0;

	if (!f)
		return geteuid() == 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	if (!found)
		return geteuid() == 0;
	return cap < 64 && (eff >> cap) & 1;
}

/* vp_ring_size_limit() from the figures @l. */
static size_t ring_size_fit(const struct vp_mlock_limit *l, int nbuf, size_t page)
{
	unsigned long long total = (l->per_cpu_kb * (unsigned long long)l->ncpus + l->rlimit_kb)
				   * 1024;
	unsigned long long each;
	size_t pages = 1;

	if (nbuf < 1)
		nbuf = 1;
	each = total / (unsigned long long)nbuf;
	/* each buffer is its data pages and a header page */
	while ((pages * 2 + 1) * page <= each)
		pages *= 2;
	return pages * page;
}

size_t vp_ring_size_limit(int nbuf, struct vp_mlock_limit *ret)
{
	struct vp_mlock_limit l = { 516, 0, 1 };
	struct rlimit rl;
	char buf[32];
	int *cpus;

	if (ret)
		*ret = l;
	if (vp_capable(VP_CAP_IPC_LOCK) || paranoid_level() == -1)
		return 0;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if (read_sysfs("/proc/sys/kernel/perf_event_mlock_kb", buf, sizeof(buf)) == 0)
		l.per_cpu_kb = strtoull(buf, NULL, 10);
	l.rlimit_kb = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 ? rl.rlim_cur / 1024 : 0;
	l.ncpus = vp_online_cpus(&cpus);
	if (l.ncpus > 0)
		free(cpus);
	else
		l.ncpus = 1;
	if (ret)
		*ret = l;
	return ring_size_fit(&l, nbuf > 0 ? nbuf : l.ncpus, (size_t)sysconf(_SC_PAGESIZE));
}

int vp_online_cpus(int **ret)
{
	char buf[4096];
	int *cpus = NULL, n = 0, cap = 0, err;
	char *p, *tok, *save = NULL;

	err = read_sysfs("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err < 0) {
		/* Without sysfs assume CPUs 0..N-1. */
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		if (ncpu < 1)
			return err;
		snprintf(buf, sizeof(buf), "0-%ld", ncpu - 1);
	}
	for (p = buf; (tok = strtok_r(p, ",", &save)); p = NULL) {
		int lo, hi;

		if (sscanf(tok, "%d-%d", &lo, &hi) != 2) {
			if (sscanf(tok, "%d", &lo) != 1)
				continue;
			hi = lo;
		}
		for (int c = lo; c <= hi; c++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 8;
				cpus = xrealloc(cpus, (size_t)cap * sizeof(*cpus));
			}
			cpus[n++] = c;
		}
	}
	if (!n) {
		free(cpus);
		return -ENOENT;
	}
	*ret = cpus;
	return n;
}
