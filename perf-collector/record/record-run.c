/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-run.c - "varperf record" while the target runs: starting or
 * attaching to it, the loop that waits and reads (record-merge.c writes
 * what was read, record-budget.c keeps phase 2 within its budget),
 * signals, the end of the recording (record-summary.c says it), and the
 * release of it all.  It never calls the driver (record-auto.c): see
 * record.h.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/calibrate.h"
#include "perf-collector/record/record.h"
#include "util/util.h"

enum {
	POLL_MS = 50,
	/* auto mode's first look comes sooner: a probe too costly for the
	 * budget costs the target all the while */
	POLL_MS_HOLDING = 5,
	/* how long a sampling run waits for an earlier one's probes to go */
	UNPROBE_WAIT_MS = 10000,
};

/*
 * Auto mode on BPF: how long records wait before they are written, so
 * that when a probe turns out too costly what it stretched can be left
 * out (the watchdog looks every round, 50 ms).
 */
static const uint64_t HOLD_NS = 200000000ULL;

/* --duration with a program: how long it may take to stop after SIGINT */
static const uint64_t GRACE_NS = 5000000000ULL;

volatile sig_atomic_t record_signal, record_nsignals;
volatile uint64_t record_signal_ns;

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

static void on_signal(int sig)
{
	struct timespec ts;

	/* (clock_gettime() is async-signal-safe) */
	if (!record_nsignals && clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		record_signal_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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
	/* a closed terminal must not lose what was recorded either */
	sigaction(SIGHUP, &sa, NULL);
}

/* Forward the first SIGINT/SIGTERM; kill the target on the next one. */
static void forward_signals(const struct record_target *t, int *forwarded)
{
	if (record_nsignals > *forwarded) {
		kill(t->pid, *forwarded ? SIGKILL : record_signal);
		pr_debug("sent signal %d to %d", *forwarded ? SIGKILL : (int)record_signal,
			 (int)t->pid);
		*forwarded = (int)record_nsignals;
	}
}

/* User and system CPU time of @ru in ns. */
static uint64_t rusage_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000ULL;
}

/* Stop every event: nothing new arrives after the final round. */
static void disable_events(struct record_probing *p)
{
	if (p->sampler.nfds)
		vp_sampler_disable(&p->sampler);
	for (size_t i = 0; i < p->probes.nfds; i++)
		ioctl(p->probes.fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (p->bpf_on)
		vp_bpf_probes_stop(&p->bpf);
}

/* Attached: whether to stop now (signal, --duration, the process exited). */
static int attach_done(struct record *rec, const struct pollfd *pidfd, uint64_t deadline,
		       int *flags)
{
	uint64_t now = monotonic_ns();

	if (record_nsignals) {
		*flags |= VP_END_INTERRUPTED;
		return 1;
	}
	/* auto, phase 1: the file cannot take it whole, no phase 2 follows */
	if (rec->phase.min_samples && rec->output.write_err)
		return 1;
	/* auto, phase 1: an idle process has shown nothing to plan from yet */
	if (deadline && now >= deadline && rec->counts.nsamples < rec->phase.min_samples &&
	    (!rec->phase.until_ns || now < rec->phase.until_ns)) {
		if (!rec->phase.waiting_said && (!rec->opts.quiet || rec->phase.announce))
			info("phase 1: %llu samples so far: sampling until there are %llu",
			     (unsigned long long)rec->counts.nsamples,
			     (unsigned long long)rec->phase.min_samples);
		rec->phase.waiting_said = 1;
	} else if (deadline && now >= deadline) {
		return 1;
	}
	if ((pidfd->fd >= 0 && (pidfd->revents & POLLIN)) ||
	    (kill(rec->target.pid, 0) < 0 && errno == ESRCH)) {
		rec->target.gone = 1;
		return 1;
	}
	return 0;
}

/*
 * Auto mode, phase 1 of a program in one run: enough seen to plan, once
 * the window is over and there are samples enough (or far past it).
 */
static int phase1_window_over(const struct record_phase *ph, int write_err, uint64_t start_ns,
			      uint64_t nsamples)
{
	uint64_t now = monotonic_ns();

	if (!ph->window_ns)
		return 0;
	/* the file cannot take phase 1 whole: no phase 2 will follow */
	if (write_err)
		return 1;
	if (now < start_ns + ph->window_ns)
		return 0;
	return nsamples >= ph->min_samples || (ph->until_ns && now >= ph->until_ns);
}

/*
 * How long poll() may wait: a round's usual wait, but no later than the
 * end of auto mode's phase-1 window or --duration's @deadline, which a
 * full wait overshot by up to 50 ms (phase 2 began that much later).
 */
static int poll_timeout(const struct record *rec, uint64_t deadline)
{
	int ms = rec->phase.holding || rec->probing.user ? POLL_MS_HOLDING : POLL_MS;
	uint64_t now = monotonic_ns(), next = deadline;

	if (rec->phase.window_ns) {
		uint64_t end = rec->target.start_ns + rec->phase.window_ns;

		if (!next || end < next)
			next = end;
	}
	if (next && next > now && (next - now + 999999) / 1000000 < (uint64_t)ms)
		ms = (int)((next - now + 999999) / 1000000);
	return ms;
}

/*
 * Read the buffers until the end: the target's exit, or attached, a
 * signal to varperf, --duration or the process's exit.  Returns END flags.
 */
static int wait_and_read(struct record *rec, int *status)
{
	size_t n = (size_t)rec->probing.nrings + 2;
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	uint64_t deadline = 0;
	int forwarded = 0, flags = 0, timed_out = 0;
	struct rusage ru;
	pid_t r;

	if (rec->opts.duration > 0)
		deadline = rec->target.start_ns + (uint64_t)(rec->opts.duration * 1e9);
	for (int c = 0; c < rec->probing.nrings; c++) {
		pfd[c].fd = rec->probing.rings[c].fd;
		pfd[c].events = POLLIN;
	}
	pfd[n - 2].fd = rec->probing.bpf_on ? vp_bpf_probes_fd(&rec->probing.bpf) : -1;
	pfd[n - 2].events = POLLIN;
	pfd[n - 1].fd = rec->target.pidfd > 0 ? rec->target.pidfd : -1;
	pfd[n - 1].events = POLLIN;
	record_status_start(rec);
	for (;;) {
		/* A hung-up buffer (its task gone) would make poll() spin. */
		for (int c = 0; c < rec->probing.nrings; c++)
			if (pfd[c].revents & (POLLHUP | POLLERR))
				pfd[c].fd = -1;
		/* (the user backend's rings fill in tens of ms: no fd says so) */
		if (poll(pfd, (nfds_t)n, poll_timeout(rec, deadline)) < 0 && errno != EINTR)
			warning("poll failed: %s", strerror(errno));
		if (rec->opts.attach && !rec->target.child) {
			if (attach_done(rec, &pfd[n - 1], deadline, &flags))
				break;
		} else {
			forward_signals(&rec->target, &forwarded);
			if (deadline && !timed_out && monotonic_ns() >= deadline) {
				/* --duration with a program: as if Ctrl-C */
				kill(rec->target.pid, SIGINT);
				timed_out = 1;
			} else if (timed_out == 1 && monotonic_ns() >= deadline + GRACE_NS) {
				warning("'%s' did not stop within %d s of SIGINT: killing it",
					rec->target.prog, (int)(GRACE_NS / 1000000000));
				kill(rec->target.pid, SIGKILL);
				timed_out = 2;
			}
			r = wait4(rec->target.pid, status, WNOHANG, &ru);
			if (r == rec->target.pid || (r < 0 && errno == ECHILD)) {
				if (r == rec->target.pid)
					rec->target.cpu = rusage_ns(&ru) - rec->target.start_cpu;
				rec->target.gone = 1;
				break;
			}
			if (phase1_window_over(&rec->phase, rec->output.write_err, rec->target.start_ns,
					       rec->counts.nsamples)) {
				rec->target.left_running = 1;
				rec->phase.ended_ns = monotonic_ns();
				break;
			}
		}
		record_merge_round(rec, 0);
		/* before the samples go to the file: those of a truncating stack
		 * copy are dropped, not written */
		if (rec->ops && rec->ops->round(rec)) {
			/* new events, new buffers */
			for (size_t c = 0; c + 2 < n; c++) {
				pfd[c].fd = (int)c < rec->probing.nrings ? rec->probing.rings[c].fd
									 : -1;
				pfd[c].revents = 0;
			}
		}
		/* phase 1 writes no sample its stack check may still drop */
		if (!rec->ops || rec->ops->may_flush(rec))
			record_merge_flush(rec);
		if (rec->phase.calls)
			record_budget_watch(rec);
		if (rec->hdr.ncosts)
			vp_calibrate_track();
		record_status_tick(rec);
	}
	record_status_end(rec);
	/* (the probes also fire for other processes that run the code) */
	disable_events(&rec->probing);
	record_user_stop(rec);
	if (rec->target.left_running || (rec->opts.attach && !rec->target.child))
		record_target_cpu_update(&rec->target);
	/* The target is gone or no longer followed: every record is in. */
	if ((!rec->opts.attach && !rec->target.left_running) || rec->target.gone) {
		vp_addrspace_target_gone(rec->as);
		vp_bpf_probes_target_gone(&rec->probing.bpf);
	}
	record_merge_round(rec, 1);
	record_merge_finish(rec);
	free(pfd);
	/* (--duration is no interruption: the run was as long as asked) */
	if (forwarded)
		flags |= VP_END_INTERRUPTED;
	return flags;
}

/*
 * Run the target under the probes and write the file: 0, or -errno when
 * it could not run or the file is incomplete; the exit status to pass on
 * goes to @rec->outcome.
 */
static int run(struct record *rec)
{
	struct vp_trailer tr;
	int status = 0, err;

	if (!rec->opts.attach) {
		/* interrupted while getting ready: the program never runs */
		err = record_nsignals ? -EINTR : vp_launch_release(&rec->target.launch);
		if (err) {
			if (err == -EINTR)
				vp_launch_abort(&rec->target.launch);
			else
				error("cannot run '%s': %s", rec->target.prog, strerror(-err));
			vp_writer_free(rec->output.w);
			rec->output.w = NULL;
			vp_output_release(&rec->output.file);
			rec->outcome.status = err == -EINTR ? 128 + (int)record_signal : 1;
			return err;
		}
	}
	if (rec->probing.user && record_user_attach(rec) < 0) {
		vp_writer_free(rec->output.w);
		rec->output.w = NULL;
		vp_output_release(&rec->output.file);
		rec->outcome.status = 1;
		return -1;
	}
	/* The recording begins: the file takes the output's name.  (After
	 * the exec: if that fails, an existing file stays as it was.) */
	err = vp_output_commit(&rec->output.file);
	if (err < 0) {
		vp_writer_free(rec->output.w);
		rec->output.w = NULL;
		vp_output_release(&rec->output.file);
		if (!rec->opts.attach) {
			kill(rec->target.pid, SIGKILL);
			waitpid(rec->target.pid, NULL, 0);
		}
		rec->outcome.status = 1;
		return err;
	}
	rec->target.start_ns = monotonic_ns();
	/* attached, the process has a past; launched, it has just exec'd */
	rec->target.start_cpu = rec->opts.attach ? record_process_cpu_ns(rec->target.pid) : 0;
	memset(&tr, 0, sizeof(tr));
	tr.flags = wait_and_read(rec, &status);
	if (rec->target.left_running) {
		tr.flags |= VP_END_DETACHED;
	} else if (!rec->opts.attach || rec->target.child) {
		tr.flags |= VP_END_EXITED;
		tr.wait_status = (uint64_t)status;
	} else {
		tr.flags |= rec->target.gone ? VP_END_GONE : VP_END_DETACHED;
	}
	record_procs_finish(&rec->target.procs, &rec->output);
	tr.lost = rec->counts.lost + rec->counts.lost_phase1;
	tr.foreign = rec->counts.foreign;
	tr.unfollowed = rec->target.procs.unfollowed;
	if (rec->hdr.ncosts)
		tr.ncosts = (uint32_t)vp_calibrate_tracked(tr.costs);
	if (rec->probing.user)
		tr.ncosts = (uint32_t)record_user_tracked(&rec->probing, &rec->hdr, tr.costs);
	tr.end_time = monotonic_ns();
	record_budget_account(rec, &tr);
	if (rec->output.write_err)
		tr.flags |= VP_END_WRITE_ERROR;
	err = vp_writer_finish(rec->output.w, &tr);
	rec->output.w = NULL;
	record_write_failed(&rec->output, err);
	/* the program may have written (or replaced) the file meanwhile */
	if (!err && vp_output_verify(&rec->output.file, record_file_whole, NULL) < 0)
		err = rec->output.write_err = -EIO;
	rec->outcome.finished = !err;
	rec->outcome.events = tr.events;
	rec->outcome.trailer = tr;
	record_summary_print(rec, &tr);
	record_budget_print(rec, &tr);
	if (rec->opts.attach && !rec->target.child)
		record_summary_detach(&rec->target, rec->opts.quiet);
	/* attached, or phase 1 that leaves the program running: no status of its own */
	if ((rec->opts.attach && !rec->target.child) || rec->target.left_running)
		rec->outcome.status = 0;
	else
		rec->outcome.status = exit_code_of(status);
	if (rec->output.write_err)
		rec->outcome.status = 1;
	return rec->output.write_err;
}

static void *calibrate_done_main(void *arg)
{
	(void)arg;
	vp_calibrate_done();
	return NULL;
}

void record_release(struct record *rec)
{
	int calibrating = 0;
	pthread_t calib;

	/* The sampling events first: the probes' clean-up child must not
	 * inherit them (they would sample on until it is done). */
	if (rec->probing.sampler.nfds)
		vp_sampler_close(&rec->probing.sampler);
	/* The kernel removes one uprobe event in 60-80 ms (RCU grace periods
	 * under a global mutex, measured on 6.18): a detached child waits
	 * for that, not the user.  Not for the return probes of a program
	 * that can throw: until removed they would still end it (or another
	 * run of it) at the first exception through a probed function. */
	if (rec->probing.probes.nfds && (rec->probing.bpf_on || rec->probing.user))
		vp_probes_close(&rec->probing.probes); /* mmap tracking only: no uprobe */
	else if (rec->probing.probes.nfds)
		vp_probes_close_detached(&rec->probing.probes,
					 rec->probing.can_throw ? VP_CLOSE_RETURNS_NOW : 0);
	/*
	 * One RCU grace period per link: no need for a helper process.  The
	 * calibration's links go at the same time, in a thread: the grace
	 * periods overlap.
	 */
	if (rec->hdr.ncosts && rec->probing.bpf_on &&
	    pthread_create(&calib, NULL, calibrate_done_main, NULL) == 0)
		calibrating = 1;
	vp_bpf_probes_close(&rec->probing.bpf);
	record_user_release(&rec->probing);
	if (calibrating)
		pthread_join(calib, NULL);
	else if (rec->hdr.ncosts)
		vp_calibrate_done();
	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_free(rec->probing.symfiles ? rec->probing.symfiles[i] : NULL);
	free(rec->probing.symfiles);
	free(rec->probing.probe_vaddr);
	vp_addrspace_free(rec->as);
	for (size_t i = 0; rec->probing.exits && i < rec->hdr.nfuncs; i++)
		vp_exits_release(&rec->probing.exits[i]);
	free(rec->probing.exits);
	record_procs_release(&rec->target.procs);
	record_merge_release(&rec->output, &rec->ids);
	vp_sample_sink_free(rec->probing.ss);
	vp_output_release(&rec->output.file);
	vp_plan_release(&rec->phase.plan);
	free(rec->phase.calls);
	free(rec->phase.kept);
	free(rec->phase.dropped);
	if (rec->target.pidfd > 0)
		close(rec->target.pidfd);
	vp_nesting_free(rec->probing.nesting);
	vp_header_release(&rec->hdr);
	free(rec->target.path);
	free(rec->probing.unprobeable);
}

/* Open the sampling events (and the writer's sample side). */
static int start_sampling(struct record *rec)
{
	pid_t *tids = NULL;
	int ntids = 0, err;

	rec->probing.ss = vp_sample_sink_new(rec->output.w, rec->hdr.modules, rec->hdr.nmodules);
	if (!rec->probing.ss)
		return error("cannot set up unwinding: %s", strerror(errno));
	if (rec->mode == MODE_COMBINED) {
		/* where each trap is: past the first instruction if moved */
		rec->probing.probe_vaddr = xcalloc(rec->hdr.nfuncs ? rec->hdr.nfuncs : 1,
					   sizeof(*rec->probing.probe_vaddr));
		for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
			const struct vp_func *f = &rec->hdr.funcs[i];

			if (vp_symfile_off_to_vaddr(rec->probing.symfiles[f->module], f->probe_off,
						    &rec->probing.probe_vaddr[i]) < 0)
				rec->probing.probe_vaddr[i] = f->addr;
			if (vp_sample_sink_probe(rec->probing.ss, rec->hdr.modules[f->module].path,
						 rec->probing.probe_vaddr[i]) < 0)
				warning("out of memory: samples in the probe of '%s' are not "
					"mapped back to it", f->display);
		}
	}
	if (rec->opts.attach) {
		/* Every thread that runs now; later ones inherit. */
		ntids = vp_task_list(rec->target.pid, &tids);
		if (ntids == -ESRCH)
			return error("cannot attach to process %d: it exited before varperf was "
				     "ready", (int)rec->target.pid);
		if (ntids < 0)
			return error("cannot list the threads of process %d: %s",
				     (int)rec->target.pid, strerror(-ntids));
		vp_sample_sink_read_maps(rec->probing.ss, rec->target.pid);
	}
	/* one event per thread and CPU (twice the threads: new ones come) */
	if (raise_nofile(rec->probing.probes.nfds + (size_t)(ntids > 0 ? 2 * ntids : 1) *
						 (rec->hdr.ncpu ? rec->hdr.ncpu : 1)) < 0) {
		free(tids);
		return -1;
	}
	err = vp_sampler_open(&rec->probing.sampler, &rec->opts.sampling, rec->target.pid, tids,
			      (size_t)ntids,
			      rec->mode == MODE_COMBINED ? rec->probing.probes.rings : NULL,
			      rec->opts.attach ? 0 : VP_SAMPLER_ON_EXEC);
	free(tids);
	if (err < 0)
		return -1;
	if (rec->mode == MODE_SAMPLE) {
		rec->probing.rings = rec->probing.sampler.rings;
		rec->probing.nrings = rec->probing.sampler.ncpus;
		/* Attached, the mappings of now are known now; later ones come
		 * as records, in order with the samples. */
		rec->output.defer = 1;
		/*
		 * All varperf does while the target runs is empty the buffers:
		 * give way to the target when CPUs are short (the target was
		 * forked before this, and keeps its priority).
		 */
		if (!rec->opts.attach)
			setpriority(PRIO_PROCESS, 0, 5);
	}
	return 0;
}

/* Fork the target (or attach), create the file, open the events; 0 or -1
 * after the error. */
static int start(struct record *rec, int argc, char **argv)
{
	size_t need;
	int err;

	if (rec->opts.attach) {
		rec->target.pid = rec->opts.attach;
	} else {
		err = vp_launch_fork(&rec->target.launch, rec->target.path, argv);
		if (err)
			return error("cannot fork: %s", strerror(-err));
		rec->target.pid = rec->target.launch.pid;
	}
	record_header_cmdline(rec, argc, argv);
	rec->output.name = rec->opts.output;
	/* for the report to tell which unpaired entries the kernel cost */
	for (uint32_t f = 0; rec->mode != MODE_SAMPLE && f < rec->hdr.nfuncs; f++)
		if (record_has_return_probe(&rec->probing, f))
			rec->hdr.funcs[f].flags |= VP_FUNC_URETPROBE;
	/* unnamed until the recording begins (run()): an existing file stays
	 * as it was if it never does */
	if (vp_output_create(&rec->output.file, rec->opts.output) < 0)
		goto out_abort;
	rec->output.w = vp_writer_new_fd(dup(rec->output.file.fd), &rec->hdr);
	if (!rec->output.w) {
		error("cannot create '%s': %s", rec->opts.output, strerror(errno));
		goto out_unlink;
	}
	record_procs_start(&rec->target.procs, rec->target.pid, rec->opts.follow_fork,
			   &rec->output);
	if (rec->phase.plan_from) {
		err = vp_plan_copy(&rec->phase.plan, rec->output.w, &rec->hdr, &rec->ids.thread_base);
		rec->counts.lost_phase1 = vp_reader_lost(rec->phase.plan.r);
		if (!err)
			err = vp_writer_phase(rec->output.w, 2, (uint32_t)rec->target.pid);
		if (err) {
			error("cannot write '%s': %s", rec->opts.output, strerror(-err));
			goto out_unlink;
		}
	}
	rec->as = vp_addrspace_new(rec->target.pid, rec->hdr.modules, rec->probing.symfiles,
				   rec->hdr.nmodules);
	if (rec->mode != MODE_SAMPLE && rec->probing.user) {
		if (record_user_start(rec) < 0)
			goto out_unlink;
	} else if (rec->mode != MODE_SAMPLE && rec->probing.bpf_on) {
		/*
		 * perf's part: per-CPU buffers for the target's mappings (and
		 * in combined mode its samples).  Mappings alone need little:
		 * small enough for the unprivileged mlock limit (516 KiB).
		 */
		size_t mmap_buf = rec->mode == MODE_PROBE ? 128 << 10 : (size_t)rec->opts.buf_size;

		if (vp_probes_open(&rec->probing.probes, rec->hdr.funcs, 0, NULL, rec->hdr.modules,
				   rec->target.pid, mmap_buf, 0) < 0 ||
		    vp_bpf_probes_open(&rec->probing.bpf, rec->hdr.funcs, rec->hdr.nfuncs,
				       rec->probing.exits, rec->hdr.modules, rec->target.pid,
				       (size_t)rec->opts.buf_size *
					       (rec->hdr.ncpu ? rec->hdr.ncpu : 1),
				       rec->opts.follow_fork ? VP_BPF_FOLLOW_FORK : 0) < 0)
			goto out_unlink;
		/* children forked before (auto mode's phase 1 in the same run) */
		for (size_t i = 1; i < rec->target.procs.n; i++)
			if (rec->target.procs.v[i].followed)
				vp_bpf_probes_follow(&rec->probing.bpf,
						     (pid_t)rec->target.procs.v[i].pid);
	} else if (rec->mode != MODE_SAMPLE) {
		need = vp_probes_fds_needed(rec->probing.exits, rec->hdr.nfuncs,
					    (int)(rec->hdr.ncpu ? rec->hdr.ncpu : 1));
		if (raise_nofile(need) < 0 ||
		    vp_probes_open(&rec->probing.probes, rec->hdr.funcs, rec->hdr.nfuncs,
				   rec->probing.exits, rec->hdr.modules, rec->target.pid,
				   (size_t)rec->opts.buf_size, 0) < 0)
			goto out_unlink;
	}
	if (rec->mode != MODE_SAMPLE) {
		rec->probing.rings = rec->probing.probes.rings;
		rec->probing.nrings = rec->probing.probes.ncpus;
		rec->probing.nesting = vp_nesting_new(rec->hdr.nfuncs);
		if (rec->phase.plan_from) {
			rec->phase.calls = xcalloc(rec->hdr.nfuncs, sizeof(*rec->phase.calls));
			rec->phase.kept = xcalloc(2 * rec->hdr.nfuncs, sizeof(*rec->phase.kept));
			rec->phase.dropped = xcalloc(rec->hdr.nfuncs, 1);
			/* until the watchdog's first look: watchdog() */
			rec->phase.holding = rec->probing.bpf_on || rec->probing.user;
			rec->phase.hold_ns =
				rec->probing.bpf_on || rec->probing.user ? HOLD_NS : 0;
		}
	}
	if (rec->mode != MODE_PROBE) {
		rec->opts.sampling.buf_size = (size_t)rec->opts.buf_size;
		if (start_sampling(rec) < 0)
			goto out_unlink;
	}
	/* readable when the target exits: the loop wakes at once, not at its
	 * next round (a negative errno where the kernel has none: rounds) */
	rec->target.pidfd = vp_pidfd_open(rec->target.pid);
	if (rec->opts.attach && !rec->target.child) {
		if (!rec->opts.quiet || rec->phase.announce)
			info("attached to process %d (%s)%s", (int)rec->target.pid,
			     rec->target.path, rec->opts.duration > 0 ? "" : ": Ctrl-C to stop");
	}
	return 0;
out_unlink:
	vp_writer_free(rec->output.w);
	rec->output.w = NULL;
	vp_output_release(&rec->output.file);
out_abort:
	if (!rec->opts.attach)
		vp_launch_abort(&rec->target.launch);
	return -1;
}

int record_run(struct record *rec, int argc, char **argv)
{
	int err;

	/*
	 * An earlier recording's return probes, until the kernel has removed
	 * them, put its trampoline in place of return addresses in every
	 * process that runs the code: sampled stacks would end there.
	 */
	for (size_t i = 0; rec->mode != MODE_PROBE && i < rec->hdr.nmodules; i++) {
		const char *path = rec->hdr.modules[i].path;

		if (vp_probes_wait_removed(
			    path, UNPROBE_WAIT_MS,
			    rec->opts.quiet && !rec->phase.announce
				    ? NULL
				    : "waiting for an earlier recording's probes to be "
				      "removed (they would cut sampled stacks short)") < 0)
			warning("an earlier recording's probes are still being removed from '%s': "
				"sampled stacks through the functions it probed end there until "
				"they are gone", path);
	}

	install_signals();
	/*
	 * Phase 2 of the same run: a Ctrl-C on the terminal ends the program
	 * too, maybe while its probes are opened - which then fail for want
	 * of a process.  That is the interruption, not an error of its own.
	 */
	if (rec->target.child)
		hold_errors();
	err = start(rec, argc, argv);
	if (rec->target.child)
		release_errors(!(err < 0 && record_nsignals));
	if (err < 0) {
		rec->outcome.status = 1;
		return -1;
	}
	return run(rec);
}

int record_resample(struct record *rec, uint32_t stack_size)
{
	pid_t *tids = NULL;
	int ntids, err;

	vp_sampler_close(&rec->probing.sampler);
	record_merge_drop_samples(&rec->output);
	rec->opts.sampling.stack_size = stack_size;
	rec->counts.nsamples = rec->counts.full_stacks = 0;
	/* the program has exec'd: its threads now, and those they start */
	ntids = vp_task_list(rec->target.pid, &tids);
	if (ntids < 0)
		return error("cannot list the threads of process %d: %s", (int)rec->target.pid,
			     strerror(-ntids));
	err = vp_sampler_open(&rec->probing.sampler, &rec->opts.sampling, rec->target.pid, tids,
			      (size_t)ntids, NULL, 0);
	free(tids);
	rec->probing.rings = rec->probing.sampler.rings;
	rec->probing.nrings = rec->probing.sampler.ncpus;
	return err < 0 ? -1 : 0;
}
