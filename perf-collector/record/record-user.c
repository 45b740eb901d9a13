// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * record-user.c - the record pipeline's side of the user backend
 * (perf-collector/probes/user-probes.h): whether it can record this
 * program, getting into the target (stopped at its exec, or attached) and
 * out, and its rings read into the pipeline as every backend's records.
 */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf-collector/probes/user-inject.h"
#include "perf-collector/probes/user-probes.h"
#include "perf-collector/probes/user-runtime.h"
#include "perf-collector/record/record.h"

/* The file offset of function @f's entry (its probe may have moved past
 * the first instructions): 0, or -ENOENT. */
static int entry_off(const struct record_probing *p, const struct vp_func *f, uint64_t *ret)
{
	uint64_t pv;

	if (vp_symfile_off_to_vaddr(p->symfiles[f->module], f->probe_off, &pv) < 0 ||
	    pv < f->addr || pv - f->addr > f->probe_off)
		return -ENOENT;
	*ret = f->probe_off - (pv - f->addr);
	return 0;
}

/* Whether function @f's entry can be patched, from its file's code; 0 or
 * -errno with why. */
static int patchable(const struct record_probing *pr, const struct vp_header *h,
		     const struct vp_func *f, char *why, size_t len)
{
	struct vp_upatch p;
	unsigned char *code;
	size_t size = f->size > 65536 ? 65536 : (size_t)f->size;
	uint64_t off;
	ssize_t n = -1;
	int fd, err;

	if (entry_off(pr, f, &off) < 0) {
		snprintf(why, len, "its entry is not in the file");
		return -ENOENT;
	}
	code = xmalloc(size ? size : 1);
	fd = open(h->modules[f->module].path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, code, size, (off_t)off);
		close(fd);
	}
	if (n != (ssize_t)size) {
		snprintf(why, len, "its code cannot be read");
		err = -EIO;
	} else {
		err = vp_upatch_plan(code, size, f->addr, &p, why, len);
	}
	free(code);
	return err;
}

/*
 * VP_USER_TLS for a dynamically linked program (PT_INTERP): the dynamic
 * linker sets a thread's TLS up before any of the program's code runs, so
 * %fs:0 is always the thread pointer there.  (A static program's own
 * start-up code runs before it has one.)
 */
static int user_flags(const char *prog)
{
	Elf64_Ehdr eh;
	int fd = open(prog, O_RDONLY | O_CLOEXEC), flags = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr)) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP) {
				flags |= VP_USER_TLS;
				break;
			}
		}
	}
	close(fd);
	return flags;
}

/* Drop function @i from what is probed (its name, its exits). */
static void drop_func(struct vp_header *h, struct record_probing *p, size_t i)
{
	struct vp_func *f = &h->funcs[i];

	free(f->name);
	free(f->display);
	free(f->base);
	if (p->exits)
		vp_exits_release(&p->exits[i]);
}

/*
 * The functions whose entry cannot be patched are left out of the
 * recording, each said with why (the first MAX_SAID; the kernel's backends
 * can probe them, at their cost), and marked so in @plan when there is
 * one (auto mode: its chosen functions are @h's, in order): 0, or -1 with
 * @why when none is left.
 */
static int leave_out_unpatchable(struct vp_header *h, struct record_probing *p,
				 struct vp_plan *plan, char *why, size_t len)
{
	enum { MAX_SAID = 5 };
	unsigned char *ok = xcalloc(h->nfuncs ? h->nfuncs : 1, 1);
	char (*fwhy)[128] = xcalloc(h->nfuncs ? h->nfuncs : 1, sizeof(*fwhy));
	size_t k = 0, out = 0, first = 0;
	int ret = 0;

	for (size_t i = 0; i < h->nfuncs; i++) {
		ok[i] = patchable(p, h, &h->funcs[i], fwhy[i], sizeof(fwhy[i])) == 0;
		if (!ok[i] && !out++)
			first = i;
	}
	if (out == h->nfuncs && out) {
		/* none: the backend auto takes keeps them all */
		snprintf(why, len, "%s'%s' cannot be patched: %s",
			 out > 1 ? "none of the functions can be patched; " : "",
			 h->funcs[first].display, fwhy[first]);
		ret = -1;
		goto out;
	}
	for (size_t i = 0, k2 = 0; plan && i < plan->nfuncs && k2 < h->nfuncs; i++) {
		if (plan->funcs[i].why != VP_PLAN_PROBED)
			continue;
		if (!ok[k2++])
			plan->funcs[i].why = VP_PLAN_UNPATCHABLE;
	}
	for (size_t i = 0, said = 0; i < h->nfuncs; i++) {
		if (ok[i]) {
			h->funcs[k] = h->funcs[i];
			if (p->exits)
				p->exits[k] = p->exits[i];
			k++;
			continue;
		}
		if (said++ < MAX_SAID)
			warning("'%s' is not probed: %s (--backend=bpf or perf can probe it)",
				h->funcs[i].display, fwhy[i]);
		drop_func(h, p, i);
	}
	if (out > MAX_SAID)
		warning("... and %zu more functions are not probed: their entries cannot be "
			"patched", out - MAX_SAID);
	h->nfuncs = k;
out:
	free(ok);
	free(fwhy);
	return ret;
}

/*
 * Whether program @path imports one of libc's ways to start a process
 * (its dynamic symbols, undefined): the first such name in @name.  On this
 * backend a forked child is not recorded; --backend=auto leaves such a
 * program to BPF, which follows it.
 */
static int starts_processes(const char *path, char *name, size_t len)
{
	static const char *const starters[] = { "fork", "vfork", "_Fork", "posix_spawn",
						"posix_spawnp", "system", "popen", "clone",
						"clone3" };
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum)
		goto out;
	sh = xcalloc(eh.e_shnum, sizeof(*sh));
	if (pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
	    (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
		const Elf64_Shdr *str;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum)
			continue;
		str = &sh[sh[i].sh_link];
		for (uint64_t k = 1; k < sh[i].sh_size / sizeof(Elf64_Sym) && !found; k++) {
			char sym_name[16] = "";
			Elf64_Sym sym;

			if (pread(fd, &sym, sizeof(sym), (off_t)(sh[i].sh_offset + k * sizeof(sym))) !=
				    (ssize_t)sizeof(sym) ||
			    sym.st_shndx != SHN_UNDEF || sym.st_name >= str->sh_size ||
			    pread(fd, sym_name, sizeof(sym_name) - 1,
				  (off_t)(str->sh_offset + sym.st_name)) <= 0)
				continue;
			for (size_t n = 0; n < sizeof(starters) / sizeof(starters[0]); n++) {
				if (!strcmp(sym_name, starters[n])) {
					snprintf(name, len, "%s", starters[n]);
					found = 1;
					break;
				}
			}
		}
	}
out:
	free(sh);
	close(fd);
	return found;
}

int record_user_choose(struct record *rec, int asked)
{
	char why[256] = "";
	const char *instead = "probing with BPF (or perf) instead";

	if (vp_user_probes_check(why, sizeof(why)) < 0)
		goto fallback;
	if (!asked && rec->opts.follow_fork) {
		char name[16];

		if (starts_processes(rec->hdr.modules[0].path, name, sizeof(name))) {
			snprintf(why, sizeof(why), "'%s' calls %s(), and it records no forked "
				 "child (BPF follows them)", rec->target.path, name);
			goto fallback;
		}
	}
	/* auto mode's phase 2 samples nothing (on any backend): only the
	 * combined mode's samples would need unwinding through the stubs */
	if (rec->mode != MODE_PROBE) {
		snprintf(why, sizeof(why), "it records --mode=probe and auto mode only, for now "
			 "(the sampler's unwinder does not step through its trampolines yet)");
		goto fallback;
	}
	if (rec->probing.can_throw && !(user_flags(rec->hdr.modules[0].path) & VP_USER_TLS)) {
		/* its return trampoline has no unwind information: the
		 * unwinder must be hooked, in libgcc_s, which a static
		 * program does not load */
		snprintf(why, sizeof(why), "'%s' can throw C++ exceptions and is statically "
			 "linked (the unwinder is hooked in libgcc_s)", rec->target.path);
		goto fallback;
	}
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];

		if (f->module) {
			snprintf(why, sizeof(why), "'%s' is in the library '%s': it patches the "
				 "program's own functions only, for now", f->display,
				 rec->hdr.modules[f->module].path);
			goto fallback;
		}
	}
	/* auto mode: its plan's functions, once chosen (record_user_planned()) */
	if (rec->opts.mode != MODE_AUTO &&
	    leave_out_unpatchable(&rec->hdr, &rec->probing, NULL, why, sizeof(why)) < 0)
		goto fallback;
	rec->probing.user = xcalloc(1, sizeof(*rec->probing.user));
	if (!asked && !rec->opts.quiet)
		info("probing with the user backend (patches in the process, tens of ns a call, "
		     "no privilege needed): --backend=bpf for kernel probes");
	return 0;
fallback:
	if (asked)
		warning("cannot probe with --backend=user: %s; %s", why, instead);
	else if (!rec->opts.quiet || verbose)
		info("not probing with the user backend: %s", why);
	return -1;
}

int record_user_planned(struct record *rec)
{
	char why[256] = "";

	if (!rec->probing.user || !rec->hdr.nfuncs)
		return 0;
	if (leave_out_unpatchable(&rec->hdr, &rec->probing, &rec->phase.plan, why,
				  sizeof(why)) < 0)
		return error("no function to probe: %s (--backend=bpf can probe %s)", why,
			     rec->hdr.nfuncs > 1 ? "them" : "it");
	return 0;
}

int record_user_start(struct record *rec)
{
	/* a forked child records nothing (its flag page is wiped): say so,
	 * rather than list it as followed with no calls */
	if (rec->opts.follow_fork && !rec->opts.quiet && rec->opts.backend == BACKEND_USER)
		info("the user backend records no forked child (--follow-fork is for "
		     "the kernel's backends): the program's own threads only");
	rec->target.procs.follow = 0;
	/* the target's mappings, as on BPF: what perf reports, as it can */
	if (vp_probes_open(&rec->probing.probes, rec->hdr.funcs, 0, NULL, rec->hdr.modules,
			   rec->target.pid, 128 << 10, 0) < 0)
		return -1;
	if (rec->opts.attach)
		return 0;
	/* stopped at its exec: patched before its first instruction */
	if (ptrace(PTRACE_SEIZE, rec->target.pid, NULL, (void *)PTRACE_O_TRACEEXEC) < 0)
		return error("cannot trace process %d: %s", (int)rec->target.pid,
			     strerror(errno));
	return 0;
}

/* Where the functions are in process @pid, from its mappings of the program. */
static int locate(const struct vp_header *h, const struct record_probing *p, pid_t pid,
		  struct vp_user_func *fns)
{
	char path[64], line[4352];
	struct stat st;
	FILE *f;
	int found = 0;

	if (stat(h->modules[0].path, &st) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (size_t i = 0; i < h->nfuncs; i++)
		fns[i].addr = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &s, &e, &off, &maj, &min, &ino) !=
			    6 ||
		    ino != st.st_ino || makedev(maj, min) != st.st_dev)
			continue;
		for (size_t i = 0; i < h->nfuncs; i++) {
			uint64_t eo;

			if (fns[i].addr || entry_off(p, &h->funcs[i], &eo) < 0)
				continue;
			if (eo >= off && eo < off + (e - s)) {
				fns[i].addr = s + (eo - off);
				fns[i].size = h->funcs[i].size;
				found++;
			}
		}
	}
	fclose(f);
	return found;
}

/* Launched, stopped at its exec: run it to its entry point (the dynamic
 * linker has loaded its libraries then), stopped again.  0 or -1. */
static int run_to_entry(pid_t pid)
{
	char path[64];
	uint64_t av[2], entry = 0;
	unsigned char int3 = 0xcc, orig;
	struct user_regs_struct regs;
	int fd, mem, st, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDWR | O_CLOEXEC);
	if (!entry || mem < 0 || vp_umem_read(mem, entry, &orig, 1) < 0 ||
	    vp_umem_write(mem, entry, &int3, 1) < 0)
		goto out;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		goto out;
	for (;;) {
		if (waitpid(pid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		if (!WIFSTOPPED(st))
			goto out; /* it ended */
		if (WSTOPSIG(st) == SIGTRAP)
			break;
		/* its signals, delivered */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st)) < 0)
			goto out;
	}
	if (vp_umem_write(mem, entry, &orig, 1) < 0 ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0 || regs.rip != entry + 1)
		goto out;
	regs.rip = entry;
	ret = ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0 ? -1 : 0;
out:
	if (mem >= 0)
		close(mem);
	return ret;
}

/* The address and size of _Unwind_RaiseException in process @pid's
 * libgcc_s (from its dynamic symbols): 0, or -1 when not there. */
static int find_unwinder(pid_t pid, struct vp_user_func *ret)
{
	char path[64], line[4352], lib[4096] = "";
	unsigned long long base = 0;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	FILE *f;
	int fd = -1, found = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		char perms[8], dev[16];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %n", &s, &e, perms, &off, dev, &ino,
			   &pos) < 6 || !pos)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (!strstr(line + pos, "/libgcc_s.so") || off)
			continue;
		snprintf(lib, sizeof(lib), "%s", line + pos);
		base = s;
		break;
	}
	fclose(f);
	if (!lib[0] || (fd = open(lib, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh.e_shnum)
		goto out;
	sh = xcalloc(eh.e_shnum, sizeof(*sh));
	if (pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
	    (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && found < 0; i++) {
		const Elf64_Shdr *str;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum)
			continue;
		str = &sh[sh[i].sh_link];
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
			static const char want[] = "_Unwind_RaiseException";
			char name[sizeof(want)];
			Elf64_Sym sym;

			if (pread(fd, &sym, sizeof(sym), (off_t)(sh[i].sh_offset + k * sizeof(sym))) !=
				    (ssize_t)sizeof(sym) ||
			    !sym.st_value || sym.st_name >= str->sh_size ||
			    pread(fd, name, sizeof(name), (off_t)(str->sh_offset + sym.st_name)) !=
				    (ssize_t)sizeof(name) ||
			    memcmp(name, want, sizeof(want)))
				continue;
			/* a shared object linked at 0: its mapping at offset 0 is its base */
			ret->addr = base + sym.st_value;
			ret->size = sym.st_size;
			found = 0;
			break;
		}
	}
out:
	free(sh);
	close(fd);
	return found;
}

/* The threads of a process in a ptrace stop (stop_all()), and the signal
 * each was stopped with when that was one of its own: delivered again
 * when it is let go. */
struct stopped {
	pid_t pid;
	pid_t *tids;
	int *sigs;
	int n;
};

/*
 * Wait for thread @tid of process @pid, interrupted, to stop: 0 with the
 * signal of a signal-delivery stop in *@sig, or -ESRCH when it ended
 * instead.  The process's exit is not reaped here (varperf's child: its
 * exit status is the recording's), only a thread's.
 */
static int wait_stop(pid_t pid, pid_t tid, int *sig)
{
	siginfo_t si;
	int st;

	*sig = 0;
	if (tid == pid) {
		memset(&si, 0, sizeof(si));
		while (waitid(P_PID, (id_t)tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT) < 0)
			if (errno != EINTR)
				return -errno;
		if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
			return -ESRCH;
	}
	while (waitpid(tid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFSTOPPED(st))
		return -ESRCH;
	/* a signal-delivery stop (no event in the high bits): its signal
	 * is the thread's own */
	if (!(st >> 16))
		*sig = WSTOPSIG(st);
	return 0;
}

static int stopped_has(const struct stopped *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->tids[i] == tid)
			return 1;
	return 0;
}

static void detach_all(struct stopped *s)
{
	for (int i = 0; i < s->n; i++)
		if (ptrace(PTRACE_DETACH, s->tids[i], NULL, (void *)(long)s->sigs[i]) < 0 &&
		    errno == ESRCH && s->tids[i] != s->pid)
			/* killed meanwhile: a traced thread's end is its tracer's to reap */
			waitpid(s->tids[i], NULL, __WALL | WNOHANG);
	free(s->tids);
	free(s->sigs);
	memset(s, 0, sizeof(*s));
}

/*
 * Stop every thread of process @pid, and those started meanwhile (listed
 * again until no new one: a stopped thread starts none).  How many, or
 * -errno with none left stopped.
 */
static int stop_all(pid_t pid, struct stopped *s)
{
	int err = 0, added;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	do {
		pid_t *tids = NULL;
		int n = vp_task_list(pid, &tids);

		added = 0;
		if (n <= 0) {
			err = n;
			free(tids);
			break;
		}
		s->tids = xrealloc(s->tids, (size_t)(s->n + n) * sizeof(*s->tids));
		s->sigs = xrealloc(s->sigs, (size_t)(s->n + n) * sizeof(*s->sigs));
		for (int i = 0; i < n && !err; i++) {
			int sig;

			if (stopped_has(s, tids[i]))
				continue;
			if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) < 0 ||
			    ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) < 0) {
				if (errno != ESRCH)
					err = -errno;
				continue; /* ESRCH: it ended meanwhile */
			}
			if (wait_stop(pid, tids[i], &sig) < 0)
				continue; /* it ended */
			s->tids[s->n] = tids[i];
			s->sigs[s->n++] = sig;
			added++;
		}
		free(tids);
	} while (added && !err);
	if (!err && !s->n)
		err = -ESRCH;
	if (err) {
		detach_all(s);
		return err;
	}
	return s->n;
}

int record_user_attach(struct record *rec)
{
	pid_t pid = rec->target.pid;
	struct stopped stop = { 0 };
	struct vp_user_func *fns = xcalloc(rec->hdr.nfuncs ? rec->hdr.nfuncs : 1, sizeof(*fns));
	char (*why)[128] = xcalloc(rec->hdr.nfuncs ? rec->hdr.nfuncs : 1, sizeof(*why));
	char err[256] = "";
	struct vp_user_func unwind = { 0, 0 };
	uint64_t *rips = NULL;
	int n, st, ret = -1;
	uint64_t t0 = monotonic_ns();

	if (rec->opts.attach) {
		n = stop_all(pid, &stop);
		if (n < 0) {
			error("cannot attach to process %d: %s (ptrace needs the same user and, "
			      "with Yama's ptrace_scope 1, a parent: run varperf as root or set "
			      "kernel.yama.ptrace_scope to 0)", (int)pid,
			      strerror(-n));
			goto out;
		}
	} else {
		/* the exec: stopped before the new program's first instruction */
		for (;;) {
			if (waitpid(pid, &st, __WALL) < 0) {
				if (errno == EINTR)
					continue;
				error("cannot wait for '%s' to start: %s", rec->target.prog,
				      strerror(errno));
				goto out;
			}
			if (WIFEXITED(st) || WIFSIGNALED(st)) {
				error("'%s' ended before it could be patched", rec->target.prog);
				goto out;
			}
			if (WIFSTOPPED(st) && st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
				break;
			/* a signal before the exec: delivered */
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st));
		}
		stop.pid = pid;
		stop.tids = xmalloc(sizeof(*stop.tids));
		stop.sigs = xcalloc(1, sizeof(*stop.sigs));
		stop.tids[0] = pid;
		stop.n = 1;
	}
	/* a program that can throw: the unwinder is hooked, which takes
	 * its library loaded - the program run to its entry point first */
	if (rec->probing.can_throw) {
		const char *what = NULL;

		if (!rec->opts.attach && run_to_entry(pid) < 0)
			what = "it did not reach its entry point";
		else if (find_unwinder(pid, &unwind) < 0)
			what = "no _Unwind_RaiseException in its libgcc_s";
		if (what) {
			error("cannot probe '%s' with --backend=user: it can throw C++ exceptions "
			      "and %s", rec->target.prog, what);
			detach_all(&stop);
			goto out_kill;
		}
	}
	n = locate(&rec->hdr, &rec->probing, pid, fns);
	if (n < (int)rec->hdr.nfuncs) {
		error("cannot find the probed functions in process %d: %s", (int)pid,
		      n < 0 ? strerror(-n) : "the program is not mapped as expected");
		detach_all(&stop);
		goto out_kill;
	}
	rips = xcalloc((size_t)stop.n, sizeof(*rips));
	for (int i = 0; i < stop.n; i++) {
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, stop.tids[i], NULL, &r) == 0)
			rips[i] = r.rip;
	}
	n = vp_user_probes_open(rec->probing.user, pid, stop.tids[0], fns, rec->hdr.nfuncs, rips,
				(size_t)stop.n, rec->probing.can_throw ? &unwind : NULL,
				user_flags(rec->hdr.modules[0].path), why, err, sizeof(err));
	detach_all(&stop);
	if (n < 0) {
		error("cannot probe with --backend=user: %s", err);
		goto out_kill;
	}
	for (size_t i = 0; i < rec->hdr.nfuncs; i++)
		if (why[i][0])
			warning("'%s' is not probed: %s", rec->hdr.funcs[i].display, why[i]);
	pr_debug("user backend: %d of %zu functions patched in %.2f ms", n, rec->hdr.nfuncs,
		 (double)(monotonic_ns() - t0) / 1e6);
	ret = 0;
	goto out;
out_kill:
	if (!rec->opts.attach) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
out:
	free(rips);
	detach_all(&stop); /* (none left after a failure) */
	free(fns);
	free(why);
	return ret;
}

void record_user_read(struct record *rec, void (*fn)(void *ctx, struct vp_raw *r))
{
	if (!rec->probing.user)
		return;
	vp_user_probes_read(rec->probing.user, fn, rec);
	/* the calibration drifts with the host's load: measured again */
	if (rec->hdr.ncosts)
		vp_user_probes_track(rec->probing.user);
}

int record_user_tracked(const struct record_probing *p, const struct vp_header *h,
			struct vp_probe_cost *costs)
{
	uint64_t in_window, full;

	if (!h->ncosts || vp_user_probes_tracked(p->user, &in_window, &full) < 0)
		return 0;
	if (verbose) {
		const struct vp_user_probes *u = p->user;
		double lo = u->pool_in[0], hi = u->pool_in[0];

		for (size_t i = 1; i < u->npool; i++) {
			lo = u->pool_in[i] < lo ? u->pool_in[i] : lo;
			hi = u->pool_in[i] > hi ? u->pool_in[i] : hi;
		}
		pr_debug("user backend: cost tracked over %zu runs: %llu ns, %llu in the call "
			 "(runs %.0f-%.0f)", u->npool, (unsigned long long)full,
			 (unsigned long long)in_window, lo * u->ns_per_tick, hi * u->ns_per_tick);
	}
	for (size_t c = 0; c < h->ncosts && c < 2; c++) {
		costs[c].insn_class = h->costs[c].insn_class;
		costs[c].in_window_ns = in_window;
		costs[c].full_ns = full;
	}
	return h->ncosts < 2 ? (int)h->ncosts : 2;
}

void record_user_count_lost(struct record *rec)
{
	uint64_t lost = vp_user_probes_lost(rec->probing.user);
	uint64_t noring = vp_user_probes_noring(rec->probing.user);
	uint64_t deep = vp_user_probes_deep(rec->probing.user);
	uint64_t nested = vp_user_probes_nested(rec->probing.user);

	if (lost) {
		rec->counts.lost += lost;
		record_write_failed(&rec->output, vp_writer_lost(rec->output.w, 0, lost));
	}
	if (noring)
		warning("%llu threads were not recorded: the user backend has rings for %d",
			(unsigned long long)noring, VP_URT_NRINGS);
	if (deep)
		warning("%llu calls were not recorded: nested more than %d probed calls deep",
			(unsigned long long)deep, VP_URT_SHADOW_N);
	if (nested)
		warning("%llu calls made by signal handlers were not recorded: the signal came "
			"while its thread was in the user backend's runtime",
			(unsigned long long)nested);
}

void record_user_stop(struct record *rec)
{
	struct stopped stop;

	/* a program run to its end took its patches along */
	if (!rec->probing.user || !rec->opts.attach || rec->target.child || rec->target.gone)
		return;
	if (stop_all(rec->target.pid, &stop) < 0 || vp_user_probes_unpatch(rec->probing.user) < 0)
		warning("cannot remove the patches from process %d: its probed calls go on "
			"into rings nobody reads (bounded, at some 30 ns a call)",
			(int)rec->target.pid);
	detach_all(&stop);
}

int record_user_drop(struct record *rec, const unsigned char *drop)
{
	struct stopped stop;
	int err;

	if (!rec->probing.user)
		return 0;
	err = stop_all(rec->target.pid, &stop);
	if (err >= 0)
		err = vp_user_probes_drop(rec->probing.user, drop);
	detach_all(&stop);
	return err < 0 ? err : 0;
}

void record_user_release(struct record_probing *p)
{
	if (!p->user)
		return;
	vp_user_probes_close(p->user);
	free(p->user);
	p->user = NULL;
}

int record_user_calibrate(struct record *rec)
{
	struct vp_probe_cost *costs;
	uint64_t in_window, full, spread;
	char a[32], b[32];
	int err;

	if (rec->opts.no_calibrate)
		return 0;
	err = vp_user_probes_calibrate(user_flags(rec->hdr.modules[0].path), &in_window, &full,
				       &spread);
	if (err) {
		warning("cannot measure the probe cost: %s", strerror(-err));
		return 0;
	}
	/* the same for every first instruction: it is never trapped */
	costs = xcalloc(2, sizeof(*costs));
	costs[0].insn_class = VP_INSN_EMULATED;
	costs[1].insn_class = VP_INSN_STEPPED;
	for (int c = 0; c < 2; c++) {
		costs[c].in_window_ns = in_window;
		costs[c].full_ns = full;
		/* (of the in-window time: what a short call's compensation
		 * hangs on) */
		costs[c].spread_ns = spread;
	}
	rec->hdr.costs = costs;
	rec->hdr.ncosts = 2;
	if (!rec->opts.quiet)
		info("probe cost per call: %s (user backend; %s of it inside the call)",
		     fmt_duration((double)full, a, sizeof(a)),
		     fmt_duration((double)in_window, b, sizeof(b)));
	return 0;
}
