/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probes-bpf.c - probe mode on BPF uprobe_multi links (see probes-bpf.h).
 *
 * Debian 12's libbpf (1.1) loads the object but knows neither the
 * "uprobe.multi" sections nor the link's attributes: the programs get
 * their expected attach type by hand and the links come from the bpf(2)
 * system call with the UAPI's layout of the attributes, defined below.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/detach.h"
#include "perf-collector/probes/probes-bpf.h"
#include "util/util.h"

#ifdef HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perf-collector/probes/probes-bpf-abi.h"

/* The compiled programs (probes.bpf.c), embedded by the build. */
extern const unsigned char vp_bpf_object[];
extern const size_t vp_bpf_object_size;

/* From the kernel's UAPI (6.6 on); Debian 12's headers (6.1) lack them. */
enum {
	X_BPF_LINK_CREATE = 28,
	X_BPF_TRACE_UPROBE_MULTI = 48,
	X_BPF_F_UPROBE_MULTI_RETURN = 1,
};

/* The uprobe_multi variant of union bpf_attr's link_create member. */
struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t path_fd; /* newer kernels; 0 here */
};
_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16, "bpf_attr layout");
_Static_assert(offsetof(struct uprobe_multi_attr, cnt) == 48, "bpf_attr layout");
_Static_assert(offsetof(struct uprobe_multi_attr, pid) == 56, "bpf_attr layout");

/* The generation no record matches (vp_bpf_probes_stop). */
static const uint64_t GEN_NONE = 1ULL << 32;

static int link_create(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, uint32_t n, int is_return, pid_t pid)
{
	struct uprobe_multi_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = X_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offs;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = n;
	a.multi_flags = is_return ? X_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	fd = syscall(SYS_bpf, X_BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

/* libbpf's own messages: only with -vv (its warnings name internals). */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (verbose < 2 || level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	pr_debug2("libbpf: %s", buf);
	return 0;
}

/* Release >= major.minor of the running kernel. */
static int kernel_at_least(int major, int minor, char *rel, size_t len)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) < 0)
		return 0;
	snprintf(rel, len, "%s", u.release);
	if (sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > major || (a == major && b >= minor);
}

static struct bpf_object *object_open(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "varperf");

	libbpf_set_print(libbpf_log);
	return bpf_object__open_mem(vp_bpf_object, vp_bpf_object_size, &opts);
}

/*
 * A test aid, not an interface (HACKING, "dearer probes"): the suite sets
 * VARPERF_TEST_PROBE_DELAY_NS to make every probe hit cost that much more,
 * as on a machine whose traps are slower, calibration included.
 */
static uint32_t test_delay_ns(void)
{
	const char *s = getenv("VARPERF_TEST_PROBE_DELAY_NS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	return errno || *end || v > 1000000 ? 0 : (uint32_t)v;
}

/* Set the program types and sizes, then load: 0 or -errno. */
static int object_load(struct bpf_object *obj, pid_t pid, int follow, int hold,
		       size_t buf_size, size_t nfuncs)
{
	struct vp_bpf_cfg cfg = { (uint32_t)pid, (uint32_t)!!follow, (uint32_t)getpid(),
				  test_delay_ns() };
	struct bpf_program *prog;
	struct bpf_map *map;
	int err;

	bpf_object__for_each_program(prog, obj) {
		/* one of the fork programs: holding children takes 6.13's kfunc */
		if (!strcmp(bpf_program__name(prog), "vp_fork_hold"))
			bpf_program__set_autoload(prog, hold);
		if (!strcmp(bpf_program__name(prog), "vp_fork"))
			bpf_program__set_autoload(prog, !hold);
		if (strcmp(bpf_program__section_name(prog), "uprobe") &&
		    strcmp(bpf_program__section_name(prog), "uretprobe"))
			continue;
		bpf_program__set_expected_attach_type(prog,
						      (enum bpf_attach_type)X_BPF_TRACE_UPROBE_MULTI);
	}
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);

		if (strstr(name, ".rodata"))
			err = bpf_map__set_initial_value(map, &cfg, sizeof(cfg));
		else if (!strcmp(name, "rb"))
			err = bpf_map__set_max_entries(map, (uint32_t)buf_size);
		else if (!strcmp(name, "hits"))
			err = bpf_map__set_max_entries(map, (uint32_t)(nfuncs ? nfuncs : 1));
		else
			err = 0;
		if (err)
			return err;
	}
	err = bpf_object__load(obj);
	return err < 0 ? err : 0;
}

int vp_bpf_probes_check(char *why, size_t len)
{
	/* r0 = 0; exit */
	static const struct bpf_insn check_insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)X_BPF_TRACE_UPROBE_MULTI);
	static int checked, result;
	static char reason[256];
	char rel[128] = "";
	int fd;

	if (checked)
		goto out;
	checked = 1;
	if (!kernel_at_least(6, 12, rel, sizeof(rel))) {
		/* before 6.12 the link's pid filter saw one thread only */
		snprintf(reason, sizeof(reason),
			 "Linux %s is older than 6.12, whose uprobe_multi links follow every "
			 "thread of the target", rel);
		result = -ENOTSUP;
		goto out;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		snprintf(reason, sizeof(reason), "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		result = -ENOTSUP;
		goto out;
	}
	/*
	 * The rights and the link type, with a program of two instructions:
	 * loading varperf's own object here would parse the kernel's BTF
	 * (tens of milliseconds) only to do it again.
	 */
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "vp_check", "GPL", check_insns, 2, &opts);
	result = fd < 0 ? fd : 0;
	if (fd >= 0)
		close(fd);
	if (result == -EPERM || result == -EACCES)
		snprintf(reason, sizeof(reason),
			 "loading BPF programs is not permitted (it needs CAP_BPF and "
			 "CAP_PERFMON, or root)");
	else if (result)
		snprintf(reason, sizeof(reason), "the kernel has no uprobe_multi links: %s",
			 strerror(-result));
out:
	if (result && why)
		snprintf(why, len, "%s", reason);
	return result;
}

/* Add @off with @cookie to a growing pair of arrays. */
static void push_probe(uint64_t **offs, uint64_t **cookies, uint32_t *n, uint64_t off,
		       uint64_t cookie)
{
	*offs = xrealloc(*offs, (*n + 1) * sizeof(**offs));
	*cookies = xrealloc(*cookies, (*n + 1) * sizeof(**cookies));
	(*offs)[*n] = off;
	(*cookies)[(*n)++] = cookie;
}

static void gen_close(struct vp_bpf_gen *g)
{
	/* return links first: see the notes in probes.h */
	for (size_t i = g->n; i-- > 0;)
		if (g->fds[i] >= 0)
			close(g->fds[i]);
	free(g->fds);
	memset(g, 0, sizeof(*g));
}

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * With the target gone no return is pending: every link's removal (a
 * grace period each) can overlap the others', in threads.
 */
static void gen_close_parallel(struct vp_bpf_gen *g)
{
	pthread_t *t = xcalloc(g->n ? g->n : 1, sizeof(*t));
	unsigned char *started = xcalloc(g->n ? g->n : 1, 1);

	for (size_t i = 1; i < g->n; i++) {
		started[i] = pthread_create(&t[i], NULL, close_one, (void *)(intptr_t)g->fds[i]) == 0;
		if (started[i])
			g->fds[i] = -1;
	}
	if (g->n && g->fds[0] >= 0) {
		close(g->fds[0]);
		g->fds[0] = -1;
	}
	for (size_t i = 1; i < g->n; i++)
		if (started[i])
			pthread_join(t[i], NULL);
	free(started);
	free(t);
	gen_close(g);
}

void vp_bpf_probes_target_gone(struct vp_bpf_probes *b)
{
	b->gone = 1;
}

/* The function a probe of @cookie belongs to, for messages. */
static const char *cookie_func(const struct vp_bpf_probes *b, uint64_t cookie)
{
	uint32_t f = VP_BPF_COOKIE_FUNC(cookie);

	return f < b->nfuncs ? b->funcs[f].display : "?";
}

/*
 * Link @n probes; one the kernel refuses fails the whole link, without
 * saying which: halve until it is found, and name it.
 */
static int link_or_explain(struct vp_bpf_probes *b, int prog_fd, const char *path,
			   const uint64_t *offs, const uint64_t *cookies, uint32_t n,
			   int is_return, pid_t pid)
{
	int fd = link_create(prog_fd, path, offs, cookies, n, is_return, pid);

	if (fd >= 0 || n == 0)
		return fd;
	/* a child that has already ended: nothing to probe */
	if (fd == -ESRCH && pid != b->pid)
		return fd;
	if (n == 1)
		return error("cannot probe %s of '%s' at file offset %#llx in '%s': %s",
			     is_return ? "the return" : "the entry or an exit",
			     cookie_func(b, cookies[0]), (unsigned long long)offs[0], path,
			     strerror(-fd));
	for (uint32_t k = 0; k < n; k += (n + 1) / 2) {
		uint32_t m = n - k < (n + 1) / 2 ? n - k : (n + 1) / 2;
		int part = link_or_explain(b, prog_fd, path, offs + k, cookies + k, m, is_return,
					   pid);

		if (part < 0)
			return part == -ESRCH ? part : -1;
		close(part);
	}
	/* every half links alone: too many at once, or a transient failure */
	return error("cannot link %u probes in '%s': %s", n, path, strerror(-fd));
}

/*
 * Link the functions not dropped, as generation @gen, restricted to
 * process @pid, into @g: 0, -1 after printing why, or -ESRCH for a child
 * that has ended.
 */
static int gen_link(struct vp_bpf_probes *b, uint32_t gen, struct vp_bpf_gen *g, pid_t pid)
{
	int err = 0;

	memset(g, 0, sizeof(*g));
	for (size_t m = 0; !err; m++) {
		uint64_t *eo = NULL, *ec = NULL, *ro = NULL, *rc = NULL;
		uint32_t ne = 0, nr = 0;
		const char *path = NULL;
		int any = 0;

		for (size_t i = 0; i < b->nfuncs; i++) {
			const struct vp_func *f = &b->funcs[i];
			uint32_t how = b->exits ? b->exits[i].how : VP_EXITS_URETPROBE;

			any |= f->module >= m;
			if (f->module != m || b->off[i])
				continue;
			path = b->mods[m].path;
			push_probe(&eo, &ec, &ne, f->probe_off,
				   VP_BPF_COOKIE(i, how == VP_EXITS_AT_ENTRY ? VP_BPF_ENTRY_EXITS
									 : VP_BPF_ENTRY, gen));
			if (how == VP_EXITS_URETPROBE)
				push_probe(&ro, &rc, &nr, f->probe_off,
					   VP_BPF_COOKIE(i, VP_BPF_RETURN, gen));
			for (uint32_t k = 0; how == VP_EXITS_SITES && k < b->exits[i].n; k++)
				push_probe(&eo, &ec, &ne, b->exits[i].offs[k],
					   VP_BPF_COOKIE(i, VP_BPF_EXIT_SITE, gen));
		}
		if (!any) {
			free(eo), free(ec), free(ro), free(rc);
			break;
		}
		/* entries first, so that gen_close() removes returns first */
		for (int ret = 0; ret < 2 && !err; ret++) {
			uint32_t n = ret ? nr : ne;
			int fd;

			if (!n)
				continue;
			fd = link_or_explain(b, ret ? b->return_fd : b->entry_fd, path,
					     ret ? ro : eo, ret ? rc : ec, n, ret, pid);
			if (fd < 0) {
				err = fd == -ESRCH ? fd : -1;
				break;
			}
			g->fds = xrealloc(g->fds, (g->n + 1) * sizeof(*g->fds));
			g->fds[g->n++] = fd;
		}
		free(eo), free(ec), free(ro), free(rc);
	}
	if (err)
		gen_close(g);
	return err;
}

static int set_ctl(struct vp_bpf_probes *b, uint64_t gen, uint64_t wake_bytes)
{
	struct vp_bpf_ctl c = { gen, wake_bytes };
	uint32_t key = 0;

	return bpf_map_update_elem(b->ctl_fd, &key, &c, BPF_ANY) < 0 ? -errno : 0;
}

/* Whether process @pid runs the probed program (not one it exec'd). */
static int runs_program(const struct vp_bpf_probes *b, pid_t pid)
{
	struct stat a, e;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &e) < 0 || stat(b->mods[0].path, &a) < 0)
		return 0;
	return a.st_dev == e.st_dev && a.st_ino == e.st_ino;
}

/*
 * Whether @pid is stopped, or has the SIGSTOP pending that will stop it.
 * System calls only: the guard (guard_main) runs it too.
 */
static int stop_taken(pid_t pid)
{
	char path[64], buf[2048], *line;
	int taken = 0, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* gone */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	for (line = buf; !taken && line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long mask;
		char state;

		if (sscanf(line, "State: %c", &state) == 1)
			taken = strchr("TtZX", state) != NULL;
		else if (sscanf(line, "SigPnd: %llx", &mask) == 1 ||
			 sscanf(line, "ShdPnd: %llx", &mask) == 1)
			taken = !!(mask & (1ULL << (SIGSTOP - 1)));
	}
	return taken;
}

/*
 * Let held child @pid go: once its SIGSTOP is queued (the kernel may
 * send it late, from irq_work: a SIGCONT before would leave it stopped
 * for good), continue it, then take it out of the "held" table, in that
 * order, so that a varperf killed in between leaves it to the guard.
 */
static int release_held(int held_fd, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000 && !stop_taken(pid); i++)
		nanosleep(&ms, NULL);
	kill(pid, SIGCONT);
	return held_fd >= 0 ? bpf_map_delete_elem(held_fd, &key) : 0;
}

/* Let every child in the "held" table go. */
static void release_all_held(int held_fd)
{
	uint32_t key;

	while (held_fd >= 0 && bpf_map_get_next_key(held_fd, NULL, &key) == 0)
		if (release_held(held_fd, (pid_t)key) < 0)
			break; /* (it would come first again) */
}

/* How long the guard sweeps after varperf's end (see guard_main). */
static const uint64_t GUARD_LATE_NS = 250000000;     /* a stop sent late */
static const uint64_t GUARD_NO_PIDFD_NS = 10000000000ULL;
static const uint64_t GUARD_MAX_NS = 600000000000ULL; /* a kernel that never lets go */

/*
 * The guard (VP_UNHOLD_NAME).  A SIGSTOP the fork program sent outlives
 * varperf: the guard, a detached process holding nothing of varperf's
 * but the "held" table and the read end of a pipe, continues the children
 * left in that table once varperf is gone.  A byte on the pipe says that
 * varperf let them go itself; its end without one, that varperf died
 * (SIGKILL, a crash, the OOM killer) - its fork program possibly still
 * attached while the kernel closes its descriptors (a grace period per
 * link: seconds with many).  The guard sweeps the table until varperf
 * has ended entirely (its pidfd readable: every descriptor closed, the
 * program detached), and a quarter second more for a stop sent late.
 */
static void guard_main(int gate, int held_fd, pid_t parent)
{
	int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
	struct timespec tick = { 0, 5000000 };
	uint64_t start, gone_at = 0;
	ssize_t n;
	char c;

	/* varperf ended before the pidfd was made: its pid may be another's */
	if (pidfd >= 0 && getppid() != parent) {
		close(pidfd);
		pidfd = -1;
	}
	while ((n = read(gate, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1) {
		release_all_held(held_fd); /* (varperf has: nothing left) */
		_exit(0);
	}
	start = monotonic_ns();
	for (;;) {
		struct pollfd pf = { pidfd, POLLIN, 0 };
		uint64_t now;

		release_all_held(held_fd);
		now = monotonic_ns();
		if (!gone_at && (pidfd >= 0 ? poll(&pf, 1, 0) == 1
					    : now - start > GUARD_NO_PIDFD_NS))
			gone_at = now;
		if ((gone_at && now - gone_at > GUARD_LATE_NS) || now - start > GUARD_MAX_NS)
			break;
		nanosleep(&tick, NULL);
	}
	release_all_held(held_fd);
	_exit(0);
}

/* Start the guard of the children held: 0, or -1 after printing why. */
static int guard_start(struct vp_bpf_probes *b)
{
	pid_t parent = getpid();
	int gate[2], keep[2];

	if (pipe2(gate, O_CLOEXEC) < 0)
		return error("cannot start the guard of held child processes: %s",
			     strerror(errno));
	keep[0] = gate[0];
	keep[1] = b->held_fd;
	b->guard_pid = vp_detach_fork(VP_UNHOLD_NAME, keep, 2);
	if (b->guard_pid == 0)
		guard_main(gate[0], b->held_fd, parent);
	close(gate[0]);
	if (b->guard_pid < 0) {
		close(gate[1]);
		return error("cannot start the guard of held child processes: %s",
			     strerror((int)-b->guard_pid));
	}
	b->guard_fd = gate[1];
	return 0;
}

/* Varperf has let every held child go: the guard may end. */
static void guard_stop(struct vp_bpf_probes *b)
{
	if (b->guard_pid <= 0)
		return;
	if (write(b->guard_fd, "q", 1) < 0) {
		/* the guard is gone: nothing to tell */
	}
	close(b->guard_fd);
	while (waitpid(b->guard_pid, NULL, 0) < 0 && errno == EINTR)
		;
	b->guard_fd = -1;
	b->guard_pid = 0;
}

/* Drop the followed process @pid from the kernel's table. */
static void unfollow(struct vp_bpf_probes *b, pid_t pid)
{
	uint32_t tgid = (uint32_t)pid;
	int fd = bpf_object__find_map_fd_by_name(b->obj, "followed");

	if (fd >= 0)
		bpf_map_delete_elem(fd, &tgid);
}

/* Append @src's links to @dst; @src is left empty. */
static void gen_move(struct vp_bpf_gen *dst, struct vp_bpf_gen *src)
{
	dst->fds = xrealloc(dst->fds, (dst->n + src->n + 1) * sizeof(*dst->fds));
	memcpy(dst->fds + dst->n, src->fds, src->n * sizeof(*src->fds));
	dst->n += src->n;
	free(src->fds);
	memset(src, 0, sizeof(*src));
}

/* Links of child @pid, restricted to it: 0, or -1 (-ESRCH: it ended). */
static int child_link(struct vp_bpf_probes *b, pid_t pid)
{
	struct vp_bpf_gen g;
	int err;

	for (size_t i = 0; i < b->nkids; i++)
		if (b->kids[i].pid == pid)
			return 0;
	err = gen_link(b, b->gen, &g, pid);
	if (err)
		return err;
	b->kids = xrealloc(b->kids, (b->nkids + 1) * sizeof(*b->kids));
	b->kids[b->nkids].pid = pid;
	b->kids[b->nkids++].live = g;
	return 0;
}

/*
 * Child @pid of @ppid has started (at @start_ns) and, if @held, stopped
 * itself: link its probes, then let it go (release_held).
 */
static void child_start(struct vp_bpf_probes *b, pid_t pid, pid_t ppid, int held,
			uint64_t start_ns)
{
	uint64_t t0 = monotonic_ns(), waited;

	if (b->closing) {
		/* the recording is over: let it go unprobed */
		unfollow(b, pid);
	} else if (!runs_program(b, pid)) {
		/* forked by a child that exec'd another program */
		unfollow(b, pid);
		if (ppid > 0 && !runs_program(b, ppid))
			unfollow(b, ppid);
	} else if (child_link(b, pid) == -1) {
		warning("child process %d is not probed", (int)pid);
		unfollow(b, pid);
	}
	if (held)
		release_held(b->held_fd, pid);
	waited = monotonic_ns() - (start_ns < t0 ? start_ns : t0);
	if (b->closing)
		return;
	if (held) {
		b->nheld++;
		b->held_ns += waited;
		if (waited > b->held_max_ns)
			b->held_max_ns = waited;
		pr_debug("child process %d: probes linked in %.2f ms, held %.2f ms from its fork",
			 (int)pid, (double)(monotonic_ns() - t0) / 1e6, (double)waited / 1e6);
	} else {
		b->nunheld++;
		if (waited > b->unheld_max_ns)
			b->unheld_max_ns = waited;
		warning("child process %d could not be held at its fork: its probes were "
			"attached %.1f ms after it, its calls before are not recorded",
			(int)pid, (double)waited / 1e6);
	}
}

static void *closer_main(void *arg);

/* Close @g in a thread of its own (a grace period per link): @g is moved. */
static void close_later(struct vp_bpf_probes *b, struct vp_bpf_gen *g)
{
	struct vp_bpf_gen *old = xcalloc(1, sizeof(*old));
	pthread_t t;

	gen_move(old, g);
	b->closers = xrealloc(b->closers, (b->nclosers + 1) * sizeof(*b->closers));
	if (pthread_create(&t, NULL, closer_main, old) == 0)
		b->closers[b->nclosers++] = t;
	else
		closer_main(old);
}

/* Followed child @pid has ended: its links go now (a process forking
 * thousands of children would run out of descriptors otherwise). */
static void child_gone(struct vp_bpf_probes *b, pid_t pid)
{
	for (size_t i = 0; i < b->nkids; i++) {
		if (b->kids[i].pid != pid)
			continue;
		if (b->closing)
			gen_move(&b->dead, &b->kids[i].live);
		else
			close_later(b, &b->kids[i].live);
		b->kids[i] = b->kids[--b->nkids];
		return;
	}
}

/* The ring buffer's callback context: @b may be copied, this may not. */
struct vp_bpf_reader {
	struct vp_bpf_probes *b;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct vp_bpf_probes *b = ((struct vp_bpf_reader *)ctx)->b;
	const struct vp_bpf_rec *x = data;
	struct vp_raw r;

	if (size < sizeof(*x))
		return 0;
	if (x->kind == VP_BPF_CHILD) {
		child_start(b, (pid_t)x->pid, (pid_t)x->tid, (int)x->addr, x->time);
		return 0;
	}
	if (x->kind == VP_BPF_GONE) {
		child_gone(b, (pid_t)x->pid);
		return 0;
	}
	if (x->kind == VP_BPF_WAIT) {
		if (!b->reading)
			return 0;
		memset(&r, 0, sizeof(r));
		r.type = VP_RAW_WAIT;
		r.time = x->time;
		r.addr = x->addr;
		r.offcpu = x->offcpu;
		r.pid = x->pid;
		r.tid = x->tid;
		r.func = x->func;
		b->fn(b->ctx, &r);
		return 0;
	}
	/* (vp_bpf_probes_close() reads on only to let held children go) */
	if (x->func >= b->nfuncs || !b->reading)
		return 0;
	memset(&r, 0, sizeof(r));
	r.time = x->time;
	r.sp = x->sp;
	r.addr = x->addr;
	r.offcpu = x->offcpu;
	r.pid = x->pid;
	r.tid = x->tid;
	r.func = x->func;
	switch (x->kind) {
	case VP_BPF_ENTRY_EXITS:
		r.flags = VP_RAW_F_EXITS_TOO;
		/* fall through */
	case VP_BPF_ENTRY:
		r.type = VP_RAW_ENTRY;
		break;
	case VP_BPF_EXIT_SITE:
		/* before the ret: the data file's exits have the popped sp */
		r.type = VP_RAW_EXIT;
		r.sp = r.sp ? r.sp + 8 : 0;
		break;
	default:
		r.type = VP_RAW_EXIT;
		break;
	}
	b->records++;
	b->fn(b->ctx, &r);
	return 0;
}

/* A power of two of at least one page, as the ring buffer needs. */
static size_t ring_size(size_t want)
{
	size_t n = (size_t)sysconf(_SC_PAGESIZE);

	while (n < want && n < (1UL << 30))
		n <<= 1;
	return n;
}

/*
 * An object loaded ahead of its use (vp_bpf_probes_preload()), in a thread
 * of its own: libbpf's read of the kernel's BTF, the verifier and the maps
 * take some 40-90 ms here, which auto mode's phase 2 would otherwise wait
 * for, and which phase 1's reading must not.
 */
static struct {
	struct bpf_object *obj;
	pid_t pid;
	int follow, hold;
	size_t size, max_funcs;
} preloaded;
/* what was asked, and the thread loading it (0: none) */
static struct {
	pid_t pid;
	size_t buf_size, max_funcs;
	int flags;
} preload_req;
static pthread_t preload_tid;
static int preload_running;
/* (auto mode calibrates in a thread of its own meanwhile) */
static pthread_mutex_t preload_lock = PTHREAD_MUTEX_INITIALIZER;

static void unpreload_locked(void)
{
	if (preloaded.obj)
		bpf_object__close(preloaded.obj);
	memset(&preloaded, 0, sizeof(preloaded));
}

static void *preload_main(void *arg)
{
	size_t size = ring_size(preload_req.buf_size);
	pid_t pid = preload_req.pid;
	int follow = pid > 0 && (preload_req.flags & VP_BPF_FOLLOW_FORK), hold;
	struct bpf_object *obj;
	char rel[128];

	(void)arg;
	obj = object_open();
	if (!obj)
		return NULL;
	hold = follow && kernel_at_least(6, 13, rel, sizeof(rel));
	if (object_load(obj, pid, follow, hold, size, preload_req.max_funcs) < 0) {
		pr_debug("BPF probes: loading ahead failed");
		bpf_object__close(obj);
		return NULL;
	}
	pthread_mutex_lock(&preload_lock);
	unpreload_locked();
	preloaded.obj = obj;
	preloaded.pid = pid;
	preloaded.follow = follow;
	preloaded.hold = hold;
	preloaded.size = size;
	preloaded.max_funcs = preload_req.max_funcs;
	pthread_mutex_unlock(&preload_lock);
	pr_debug("BPF probes: loaded ahead for process %d, up to %zu functions", (int)pid,
		 preload_req.max_funcs);
	return NULL;
}

int vp_bpf_probes_preload(pid_t pid, size_t buf_size, size_t max_funcs, int flags)
{
	int err = 0;

	if (pid <= 0)
		return -EINVAL;
	pthread_mutex_lock(&preload_lock);
	if (preload_running) {
		err = -EBUSY;
	} else {
		preload_req.pid = pid;
		preload_req.buf_size = buf_size;
		preload_req.max_funcs = max_funcs;
		preload_req.flags = flags;
		err = -pthread_create(&preload_tid, NULL, preload_main, NULL);
		preload_running = !err;
	}
	pthread_mutex_unlock(&preload_lock);
	return err;
}

/* Wait for the load ahead, if one for @pid runs (0: any).  Only the
 * thread that asked waits: the others open with pid 0 (calibration). */
static void preload_wait(pid_t pid)
{
	int wait;

	pthread_mutex_lock(&preload_lock);
	wait = preload_running && (!pid || preload_req.pid == pid);
	pthread_mutex_unlock(&preload_lock);
	if (!wait)
		return;
	pthread_join(preload_tid, NULL);
	pthread_mutex_lock(&preload_lock);
	preload_running = 0;
	pthread_mutex_unlock(&preload_lock);
}

void vp_bpf_probes_unpreload(void)
{
	preload_wait(0);
	pthread_mutex_lock(&preload_lock);
	unpreload_locked();
	pthread_mutex_unlock(&preload_lock);
}

/* The object loaded ahead if it fits (then no longer kept), else NULL. */
static struct bpf_object *take_preloaded(pid_t pid, int follow, size_t size, size_t nfuncs,
					 int *hold)
{
	struct bpf_object *obj = NULL;

	if (pid > 0)
		preload_wait(pid);
	pthread_mutex_lock(&preload_lock);
	if (preloaded.obj && preloaded.pid == pid && preloaded.follow == follow &&
	    preloaded.size == size && nfuncs <= preloaded.max_funcs) {
		obj = preloaded.obj;
		*hold = preloaded.hold;
		memset(&preloaded, 0, sizeof(preloaded));
	}
	pthread_mutex_unlock(&preload_lock);
	return obj;
}

int vp_bpf_probes_open(struct vp_bpf_probes *b, const struct vp_func *funcs, size_t nfuncs,
		       const struct vp_exits *exits, const struct vp_module *mods, pid_t pid,
		       size_t buf_size, int flags)
{
	size_t size = ring_size(buf_size);
	int follow = pid > 0 && (flags & VP_BPF_FOLLOW_FORK);
	char rel[128];
	int err;

	memset(b, 0, sizeof(*b));
	b->entry_fd = b->return_fd = b->ctl_fd = b->hits_fd = b->stats_fd = -1;
	b->held_fd = b->guard_fd = -1;
	b->funcs = funcs;
	b->exits = exits;
	b->mods = mods;
	b->nfuncs = nfuncs;
	b->pid = pid;
	b->off = xcalloc(nfuncs ? nfuncs : 1, 1);
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		error("cannot count the possible CPUs: %s", strerror(-b->ncpus));
		goto out_close;
	}
	b->obj = take_preloaded(pid, follow, size, nfuncs, &b->hold);
	if (b->obj)
		goto loaded;
	b->obj = object_open();
	if (!b->obj) {
		error("cannot open varperf's BPF object: %s", strerror(errno));
		goto out_close;
	}
	/* before 6.13 no BPF program can stop another task (the child) */
	b->hold = follow && kernel_at_least(6, 13, rel, sizeof(rel));
	err = object_load(b->obj, pid, follow, b->hold, size, nfuncs);
	if (err) {
		error("cannot load varperf's BPF programs: %s", strerror(-err));
		goto out_close;
	}
loaded:
	b->entry_fd = bpf_program__fd(bpf_object__find_program_by_name(b->obj, "vp_entry"));
	b->return_fd = bpf_program__fd(bpf_object__find_program_by_name(b->obj, "vp_return"));
	b->ctl_fd = bpf_object__find_map_fd_by_name(b->obj, "ctl");
	b->hits_fd = bpf_object__find_map_fd_by_name(b->obj, "hits");
	b->stats_fd = bpf_object__find_map_fd_by_name(b->obj, "stats");
	b->gen = 1;
	/* a quarter full: wake the reader, which also polls every 50 ms */
	b->wake_bytes = size / 4;
	err = set_ctl(b, b->gen, b->wake_bytes);
	if (err) {
		error("cannot set up the BPF probes: %s", strerror(-err));
		goto out_close;
	}
	b->reader = xcalloc(1, sizeof(*b->reader));
	b->rb = ring_buffer__new(bpf_object__find_map_fd_by_name(b->obj, "rb"), on_record,
				 b->reader, NULL);
	if (!b->rb) {
		error("cannot map the BPF ring buffer: %s", strerror(errno));
		goto out_close;
	}
	/* before the first child can stop: see guard_main() */
	b->held_fd = bpf_object__find_map_fd_by_name(b->obj, "held");
	if (b->hold && guard_start(b) < 0)
		goto out_close;
	if (follow) {
		b->fork = bpf_program__attach(bpf_object__find_program_by_name(
			b->obj, b->hold ? "vp_fork_hold" : "vp_fork"));
		if (!b->fork) {
			error("cannot follow the target's child processes: %s", strerror(errno));
			goto out_close;
		}
		b->exit = bpf_program__attach(bpf_object__find_program_by_name(b->obj, "vp_exit"));
		if (!b->exit) {
			error("cannot follow the target's child processes: %s", strerror(errno));
			goto out_close;
		}
	}
	/* blocked versus preempted: the target's threads' sleeps (a target
	 * of its own: pid 0, any process, is the idle tasks' to the kernel) */
	if (pid > 0) {
		b->sw = bpf_program__attach(
			bpf_object__find_program_by_name(b->obj, "vp_switch"));
		if (b->sw)
			b->wakeup = bpf_program__attach(
				bpf_object__find_program_by_name(b->obj, "vp_wakeup"));
		if (!b->sw || !b->wakeup) {
			error("cannot follow the target's context switches: %s", strerror(errno));
			goto out_close;
		}
	}
	if (gen_link(b, b->gen, &b->live, pid) < 0)
		goto out_close;
	pr_debug("BPF probes: %zu functions in %zu links, ring buffer %zu KiB", nfuncs,
		 b->live.n, size >> 10);
	return 0;
out_close:
	vp_bpf_probes_close(b);
	return -1;
}

int vp_bpf_probes_fd(const struct vp_bpf_probes *b)
{
	return b->rb ? ring_buffer__epoll_fd(b->rb) : -1;
}

long vp_bpf_probes_read(struct vp_bpf_probes *b, void (*fn)(void *ctx, struct vp_raw *r),
			void *ctx)
{
	int n;

	if (!b->rb)
		return 0;
	b->fn = fn;
	b->ctx = ctx;
	b->reader->b = b;
	b->reading = 1;
	n = ring_buffer__consume(b->rb);
	b->reading = 0;
	return n;
}

/* The sum over CPUs of slot @key of per-CPU array @fd. */
static uint64_t percpu_sum(const struct vp_bpf_probes *b, int fd, uint32_t key)
{
	uint64_t *v, sum = 0;

	if (fd < 0 || b->ncpus <= 0)
		return 0;
	v = xcalloc((size_t)b->ncpus, sizeof(*v));
	if (bpf_map_lookup_elem(fd, &key, v) == 0)
		for (int c = 0; c < b->ncpus; c++)
			sum += v[c];
	free(v);
	return sum;
}

uint64_t vp_bpf_probes_hits(const struct vp_bpf_probes *b, uint32_t func)
{
	if (func >= b->nfuncs)
		return 0;
	return percpu_sum(b, b->hits_fd, func);
}

uint64_t vp_bpf_probes_lost(const struct vp_bpf_probes *b)
{
	return percpu_sum(b, b->stats_fd, VP_BPF_STAT_LOST);
}

uint64_t vp_bpf_probes_lost_waits(const struct vp_bpf_probes *b)
{
	return percpu_sum(b, b->stats_fd, VP_BPF_STAT_NO_WAIT);
}

uint64_t vp_bpf_probes_unfollowed(const struct vp_bpf_probes *b)
{
	return percpu_sum(b, b->stats_fd, VP_BPF_STAT_NO_FOLLOW) +
	       percpu_sum(b, b->stats_fd, VP_BPF_STAT_NO_CHILD);
}

uint64_t vp_bpf_probes_unheld(const struct vp_bpf_probes *b)
{
	return b->nunheld;
}

int vp_bpf_probes_follow(struct vp_bpf_probes *b, pid_t pid)
{
	uint32_t tgid = (uint32_t)pid;
	uint8_t one = 1;
	int fd = bpf_object__find_map_fd_by_name(b->obj, "followed");

	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, &tgid, &one, BPF_ANY) < 0)
		return -errno;
	return child_link(b, pid) == -1 ? -EINVAL : 0;
}

/*
 * The children's links of generation @gen: into each one's next, or,
 * when that generation is to record at once (its live links are gone),
 * its live.  0, or -1 after printing why (the new ones closed).
 */
static int kids_link(struct vp_bpf_probes *b, uint32_t gen)
{
	for (size_t i = 0; i < b->nkids; i++) {
		struct vp_bpf_child *k = &b->kids[i];
		struct vp_bpf_gen *g = gen == b->gen ? &k->live : &k->next;
		int err = gen_link(b, gen, g, k->pid);

		if (err == -ESRCH)
			continue; /* ended: its GONE record comes */
		if (err < 0) {
			for (size_t j = 0; j < i; j++)
				gen_close(gen == b->gen ? &b->kids[j].live : &b->kids[j].next);
			return -1;
		}
	}
	return 0;
}

static void *closer_main(void *arg)
{
	struct vp_bpf_gen *g = arg;

	gen_close(g);
	free(g);
	return NULL;
}

int vp_bpf_probes_drop(struct vp_bpf_probes *b, const unsigned char *drop, int wait)
{
	struct vp_bpf_gen next, *old;
	pthread_t t;

	for (size_t i = 0; i < b->nfuncs; i++)
		if (drop[i] && !b->off[i])
			b->off[i] = 2; /* dropped now: not in the next links */
	if (wait) {
		/*
		 * Old links first: removing one waits for the target's
		 * pending returns through any uretprobe, and new links'
		 * return probes would keep making more (seconds, measured).
		 */
		set_ctl(b, GEN_NONE, b->wake_bytes);
		gen_close(&b->live);
		for (size_t i = 0; i < b->nkids; i++)
			gen_close(&b->kids[i].live);
	}
	if (gen_link(b, b->gen + 1, &next, b->pid) < 0 || kids_link(b, b->gen + 1) < 0) {
		gen_close(&next);
		for (size_t i = 0; i < b->nfuncs; i++)
			b->off[i] = b->off[i] == 2 ? 0 : b->off[i];
		if (wait && (gen_link(b, b->gen, &b->live, b->pid) < 0 ||
			     kids_link(b, b->gen) < 0))
			return -1;
		if (wait)
			set_ctl(b, b->gen, b->wake_bytes);
		return -1;
	}
	/* From here the new links record, the old ones are silent. */
	if (set_ctl(b, b->gen + 1, b->wake_bytes) < 0) {
		gen_close(&next);
		for (size_t i = 0; i < b->nkids; i++)
			gen_close(&b->kids[i].next);
		return error("cannot switch to the new BPF links: %s", strerror(errno));
	}
	b->gen++;
	for (size_t i = 0; i < b->nfuncs; i++)
		b->off[i] = b->off[i] ? 1 : 0;
	old = xmalloc(sizeof(*old));
	*old = b->live;
	b->live = next;
	for (size_t i = 0; i < b->nkids; i++) {
		gen_move(old, &b->kids[i].live);
		b->kids[i].live = b->kids[i].next;
		memset(&b->kids[i].next, 0, sizeof(b->kids[i].next));
	}
	/*
	 * Removing a link waits for an RCU grace period, and for the
	 * target's pending returns through it: a thread pays for that.
	 */
	b->closers = xrealloc(b->closers, (b->nclosers + 1) * sizeof(*b->closers));
	if (pthread_create(&t, NULL, closer_main, old) == 0)
		b->closers[b->nclosers++] = t;
	else
		closer_main(old);
	return 0;
}

void vp_bpf_probes_stop(struct vp_bpf_probes *b)
{
	if (b->ctl_fd >= 0)
		set_ctl(b, GEN_NONE, 0);
}

void vp_bpf_probes_close(struct vp_bpf_probes *b)
{
	/* no child stops at its fork any more; those stopped go on */
	if (b->fork)
		bpf_link__destroy(b->fork);
	b->fork = NULL;
	b->closing = 1;
	if (b->rb) {
		b->reader->b = b;
		ring_buffer__consume(b->rb);
	}
	/* any the ring had no record of (a fork in flight at the detach) */
	if (b->hold)
		release_all_held(b->held_fd);
	guard_stop(b);
	for (size_t i = 0; i < b->nclosers; i++)
		pthread_join(b->closers[i], NULL);
	free(b->closers);
	/* the children's first: no return of theirs is pending once they end,
	 * and those still running are left as the target is */
	for (size_t i = 0; i < b->nkids; i++)
		gen_move(&b->dead, &b->kids[i].live);
	free(b->kids);
	if (b->gone) {
		gen_move(&b->dead, &b->live);
		gen_close_parallel(&b->dead);
	} else {
		gen_close_parallel(&b->dead);
		gen_close(&b->live);
	}
	if (b->exit)
		bpf_link__destroy(b->exit);
	if (b->sw)
		bpf_link__destroy(b->sw);
	if (b->wakeup)
		bpf_link__destroy(b->wakeup);
	ring_buffer__free(b->rb);
	free(b->reader);
	bpf_object__close(b->obj);
	free(b->off);
	memset(b, 0, sizeof(*b));
	b->entry_fd = b->return_fd = b->ctl_fd = b->hits_fd = b->stats_fd = -1;
	b->held_fd = b->guard_fd = -1;
}

#else /* !HAVE_BPF */

int vp_bpf_probes_check(char *why, size_t len)
{
	snprintf(why, len, "varperf was built without libbpf and clang's BPF target");
	return -ENOTSUP;
}

int vp_bpf_probes_open(struct vp_bpf_probes *b, const struct vp_func *funcs, size_t nfuncs,
		       const struct vp_exits *exits, const struct vp_module *mods, pid_t pid,
		       size_t buf_size, int flags)
{
	memset(b, 0, sizeof(*b));
	return error("varperf was built without the BPF backend (libbpf, clang's BPF target)");
}

int vp_bpf_probes_preload(pid_t pid, size_t buf_size, size_t max_funcs, int flags)
{
	return -ENOSYS;
}

void vp_bpf_probes_unpreload(void)
{
}

int vp_bpf_probes_fd(const struct vp_bpf_probes *b)
{
	return -1;
}

long vp_bpf_probes_read(struct vp_bpf_probes *b, void (*fn)(void *ctx, struct vp_raw *r),
			void *ctx)
{
	return 0;
}

uint64_t vp_bpf_probes_hits(const struct vp_bpf_probes *b, uint32_t func)
{
	return 0;
}

uint64_t vp_bpf_probes_lost(const struct vp_bpf_probes *b)
{
	return 0;
}

uint64_t vp_bpf_probes_lost_waits(const struct vp_bpf_probes *b)
{
	return 0;
}

uint64_t vp_bpf_probes_unheld(const struct vp_bpf_probes *b)
{
	return 0;
}

uint64_t vp_bpf_probes_unfollowed(const struct vp_bpf_probes *b)
{
	return 0;
}

int vp_bpf_probes_follow(struct vp_bpf_probes *b, pid_t pid)
{
	return -ENOTSUP;
}

int vp_bpf_probes_drop(struct vp_bpf_probes *b, const unsigned char *drop, int wait)
{
	return -1;
}

void vp_bpf_probes_stop(struct vp_bpf_probes *b)
{
}

void vp_bpf_probes_target_gone(struct vp_bpf_probes *b)
{
}

void vp_bpf_probes_close(struct vp_bpf_probes *b)
{
	memset(b, 0, sizeof(*b));
}

#endif
