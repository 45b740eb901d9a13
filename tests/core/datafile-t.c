/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-t.c - tests for core/datafile.c: a written file reads back
 * exactly (header, definitions, events across chunks, trailer) in under
 * 16 bytes per event, and every kind of damage gives the exact message
 * with the file offset: empty, bad magic, wrong version, truncated
 * header, bad checksum, truncated tail (a warning: the complete chunks
 * stay readable).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/datafile.h"
#include "tests/tap/basic.h"

enum { NEV = 100000 };

static char *dir;

static char *path_of(const char *name)
{
	return basprintf("%s/%s", dir, name);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		sysbail("cannot write %s", path);
}

static void *read_all(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st))
		sysbail("cannot read %s", path);
	p = bmalloc((size_t)st.st_size + 1);
	*len = fread(p, 1, (size_t)st.st_size, f);
	fclose(f);
	return p;
}

static struct vp_event expect(size_t i)
{
	struct vp_event ev;
	uint64_t depth = i % 7;

	ev.kind = (i & 1) ? VP_EV_EXIT : VP_EV_ENTRY;
	ev.func = (uint32_t)(i % 3);
	ev.thread = (uint32_t)(i % 2);
	ev.time = 1000000000ULL + i * 1500 + (i % 5);
	ev.sp = 0x7ffc0000f000ULL - depth * 48 + (ev.kind == VP_EV_EXIT ? 8 : 0);
	ev.callsite = ev.kind == VP_EV_ENTRY ? (uint32_t)(i % 2) : UINT32_MAX;
	return ev;
}

static void write_good(const char *path, size_t nev, int finish)
{
	char *argv[] = { "prog", "arg one" };
	unsigned char bid[] = { 0xde, 0xad, 0x00, 0xbe, 0xef };
	struct vp_module mod = { "/bin/prog", bid, sizeof(bid) };
	struct vp_func funcs[3] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_EMULATED, "main", "main", "main" },
		{ 0, 0x1100, 32, 0x1100, VP_FUNC_CLONE, VP_INSN_STEPPED, "f.isra.0", "f.isra.0",
		  "f" },
		{ 0, 0x1200, 8, 0x1200, 0, VP_INSN_UNKNOWN, "_Z1gv", "g()", "g()" },
	};
	struct vp_probe_cost cost = { VP_INSN_STEPPED, 16000, 17000 };
	struct vp_header h = { 0 };
	struct vp_callsite cs0 = { 0, 0, 0x1010, "main+0x10", "prog.c", 42 };
	struct vp_callsite cs1 = { VP_CS_TRAMPOLINE, -1, 0, "", "", 0 };
	struct vp_trailer tr = { .wait_status = 3 << 8, .flags = VP_END_EXITED, .foreign = 7,
				 .end_time = 99 };
	struct vp_writer *w;
	size_t i;

	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.start_time = 1700000000;
	h.pid = 4242;
	h.ncpu = 2;
	h.host = "6.1 x86_64";
	h.argc = 2;
	h.argv = argv;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 3;
	h.funcs = funcs;
	h.ncosts = 1;
	h.costs = &cost;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 4242, 4242);
	vp_writer_thread(w, 1, 4243, 4242);
	vp_writer_callsite(w, 0, &cs0);
	vp_writer_callsite(w, 1, &cs1);
	for (i = 0; i < nev; i++) {
		struct vp_event ev = expect(i);

		if (vp_writer_event(w, &ev))
			sysbail("vp_writer_event");
		if (i == nev / 2)
			vp_writer_lost(w, 1, 11);
	}
	if (finish) {
		if (vp_writer_finish(w, &tr))
			sysbail("vp_writer_finish");
	} else {
		/* unfinished on purpose: as if varperf was killed */
		vp_writer_flush(w);
		vp_writer_free(w);
	}
}

/* Read everything; returns events read or a negative errno. */
static long read_back(const char *path, char *err, size_t errlen, struct vp_reader **ret)
{
	static struct vp_event buf[1000];
	struct vp_reader *r;
	long n, total = 0;
	int rc;

	rc = vp_reader_open(path, &r, err, errlen);
	if (rc)
		return rc;
	while ((n = vp_reader_next(r, buf, 1000)) > 0) {
		long i;

		for (i = 0; i < n; i++) {
			struct vp_event e = expect((size_t)(total + i));

			if (memcmp(&e, &buf[i], sizeof(e))) {
				diag("event %ld differs", total + i);
				vp_reader_free(r);
				return -EILSEQ;
			}
		}
		total += n;
	}
	if (n < 0) {
		snprintf(err, errlen, "%s", vp_reader_error(r));
		vp_reader_free(r);
		return n;
	}
	*ret = r;
	return total;
}

static void expect_open_error(const char *name, const void *bytes, size_t len, const char *msg)
{
	char *p = path_of(name), *want, err[512] = "";
	struct vp_reader *r;

	write_bytes(p, bytes, len);
	ok(vp_reader_open(p, &r, err, sizeof(err)) < 0, "%s: rejected", name);
	want = basprintf("'%s': %s", p, msg);
	is_string(want, err, "%s: message", name);
	free(want);
	free(p);
}

int main(void)
{
	struct vp_reader *r = NULL;
	const struct vp_header *h;
	char err[512], *good, *p, *want;
	unsigned char *bytes;
	size_t len;
	long n;
	struct stat st;

	plan(45);
	dir = test_tmpdir();
	good = path_of("good.data");

	/* Round trip. */
	write_good(good, NEV, 1);
	n = read_back(good, err, sizeof(err), &r);
	is_int(NEV, n, "all %d events read back identically", NEV);
	if (n != NEV)
		bail("cannot continue: %s", err);
	h = vp_reader_header(r);
	is_int(VP_UNIT_NS, h->unit, "unit");
	is_int(4242, h->pid, "pid");
	is_int(2, h->argc, "argc");
	is_string("arg one", h->argv[1], "argv with a space");
	is_string("/bin/prog", h->modules[0].path, "module path");
	is_int(5, h->modules[0].build_id_len, "build-id length (with a NUL byte inside)");
	ok(!memcmp(h->modules[0].build_id, "\xde\xad\x00\xbe\xef", 5), "build-id bytes");
	is_int(3, h->nfuncs, "function count");
	is_string("f", h->funcs[1].base, "clone base name");
	is_string("g()", h->funcs[2].display, "demangled name");
	is_int(VP_FUNC_CLONE, h->funcs[1].flags, "function flags");
	is_int(16000, h->costs[0].in_window_ns, "probe cost");
	is_int(2, vp_reader_nthreads(r), "threads defined");
	is_int(4243, vp_reader_thread(r, 1)->tid, "thread tid");
	is_int(2, vp_reader_ncallsites(r), "call sites defined");
	is_string("prog.c", vp_reader_callsite(r, 0)->file, "call-site file");
	is_int(42, vp_reader_callsite(r, 0)->line, "call-site line");
	is_int(VP_CS_TRAMPOLINE, vp_reader_callsite(r, 1)->flags, "trampoline call site");
	is_int(11, vp_reader_lost(r), "lost records");
	ok(vp_reader_trailer(r)->present, "trailer present");
	is_int(NEV, vp_reader_trailer(r)->events, "trailer event count");
	is_int(3 << 8, vp_reader_trailer(r)->wait_status, "trailer wait status");
	ok(vp_reader_warning(r) == NULL, "no warning for a complete file");
	vp_reader_rewind(r);
	{
		static struct vp_event buf[NEV / 10];
		long k, again = 0;

		while ((k = vp_reader_next(r, buf, NEV / 10)) > 0)
			again += k;
		is_int(NEV, again, "rewind: a second pass reads everything again");
	}
	vp_reader_free(r);
	stat(good, &st);
	ok((double)st.st_size / NEV <= 16.0, "compact: %.2f bytes per event",
	   (double)st.st_size / NEV);

	/* Damage. */
	bytes = read_all(good, &len);
	expect_open_error("empty.data", "", 0,
			  "offset 0: file is empty (expected a varperf data file)");
	expect_open_error("magic.data", "ELF\x7f\0\0\0\0\1\0\0\0\0\0\0\0", 16,
			  "offset 0: not a varperf data file (bad magic)");
	{
		unsigned char v[16];

		memcpy(v, bytes, 16);
		v[8] = 99;
		expect_open_error("version.data", v, 16,
				  "offset 8: unsupported format version 99 (this varperf reads "
				  "version 1)");
	}
	expect_open_error("short.data", bytes, 12,
			  "offset 12: file ends inside the file header (truncated)");
	expect_open_error("nometa.data", bytes, 40,
			  "offset 16: file ends before its META chunk is complete (truncated)");
	{
		unsigned char *c = bmalloc(len);

		memcpy(c, bytes, len);
		c[16 + 16 + 3] ^= 0x40; /* inside the META payload */
		p = path_of("crc.data");
		write_bytes(p, c, len);
		ok(vp_reader_open(p, &r, err, sizeof(err)) < 0, "bad META checksum rejected");
		ok(strstr(err, "offset 28: chunk checksum mismatch") != NULL, "... with offset: %s",
		   err);
		free(p);
		free(c);
	}

	/* Corrupt an EVENTS chunk in the middle: an error, no numbers. */
	{
		unsigned char *c = bmalloc(len);

		memcpy(c, bytes, len);
		c[len / 2] ^= 0x01;
		p = path_of("mid.data");
		write_bytes(p, c, len);
		n = read_back(p, err, sizeof(err), &r);
		ok(n < 0, "corrupt events chunk is an error");
		ok(strstr(err, "chunk checksum mismatch") != NULL, "... %s", err);
		free(p);
		free(c);
	}

	/* Truncated tail: complete chunks are read, and a warning says so. */
	p = path_of("cut.data");
	write_bytes(p, bytes, len - 100);
	n = read_back(p, err, sizeof(err), &r);
	ok(n > NEV / 2 && n < NEV, "truncated: %ld complete events still read", n);
	if (n > 0) {
		ok(vp_reader_warning(r) && strstr(vp_reader_warning(r), "(truncated)"),
		   "truncated: warned: %s", vp_reader_warning(r) ? vp_reader_warning(r) : "none");
		ok(!vp_reader_trailer(r)->present, "truncated: no trailer");
		vp_reader_free(r);
	} else {
		skip_block(2, "nothing read");
	}
	free(p);

	/* Recorder killed before the END chunk: complete, but warned. */
	p = path_of("unfinished.data");
	write_good(p, 1000, 0);
	n = read_back(p, err, sizeof(err), &r);
	is_int(1000, n, "unfinished: every flushed event read");
	if (n > 0) {
		want = basprintf("'%s': recording incomplete: no END chunk (the recorder did not "
				 "finish)",
				 p);
		is_string(want, vp_reader_warning(r), "unfinished: warning");
		free(want);
		vp_reader_free(r);
	} else {
		skip("nothing read");
	}
	free(p);
	free(bytes);
	free(good);
	test_tmpdir_free(dir);
	return 0;
}
