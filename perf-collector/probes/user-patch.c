// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * user-patch.c - decode a function's first instructions and relocate the
 * ones a 5-byte jmp displaces (x86-64, capstone).  The rules are those of
 * the jump-based patching E9Patch starts from (Duck et al. 2020; not its
 * punning, padding or eviction tactics): only whole instructions move;
 * RIP-relative operands and relative branches are re-encoded for their
 * new place; nothing that leaves the function or whose bytes another
 * branch of the function lands in is moved.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "perf-collector/probes/user-patch.h"


static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int put_rel32(unsigned char *out, uint64_t next, uint64_t target)
{
	int64_t d = (int64_t)(target - next);
	int32_t v = (int32_t)d;

	if (d != (int64_t)v)
		return -ERANGE;
	memcpy(out, &v, 4);
	return 0;
}

int vp_upatch_jmp(uint64_t from, uint64_t to, unsigned char *out)
{
	out[0] = 0xe9;
	return put_rel32(out + 1, from + 5, to);
}

#ifdef HAVE_CAPSTONE
static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static int open_cs(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -ENOMEM;
	if (cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(cs);
		return -ENOMEM;
	}
	return 0;
}

/* The target of a relative branch or call, if @insn is one. */
static int rel_target(csh cs, const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x = &insn->detail->x86;

	if (!cs_insn_group(cs, insn, CS_GRP_JUMP) && !cs_insn_group(cs, insn, CS_GRP_CALL))
		return 0;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	*target = (uint64_t)x->operands[0].imm;
	return 1;
}

static int is_loop(unsigned id)
{
	return id == X86_INS_LOOP || id == X86_INS_LOOPE || id == X86_INS_LOOPNE ||
	       id == X86_INS_JRCXZ || id == X86_INS_JECXZ || id == X86_INS_JCXZ;
}

/* Whether @insn may run elsewhere (refused: what leaves or loops). */
static int movable(csh cs, const cs_insn *insn, char *why, size_t len)
{
	if (cs_insn_group(cs, insn, CS_GRP_RET))
		return refuse(why, len, "it returns within its first %d bytes", VP_UPATCH_JMP);
	if (cs_insn_group(cs, insn, CS_GRP_CALL))
		return refuse(why, len, "a call is among its first %d bytes", VP_UPATCH_JMP);
	if (is_loop(insn->id))
		return refuse(why, len, "a %s is among its first %d bytes", insn->mnemonic,
			      VP_UPATCH_JMP);
	if (cs_insn_group(cs, insn, CS_GRP_JUMP) && insn->id != X86_INS_JMP) {
		uint64_t t;

		/* a conditional branch: re-encoded with a 32-bit displacement */
		if (!rel_target(cs, insn, &t) ||
		    !((insn->size == 2 && (insn->bytes[0] & 0xf0) == 0x70) ||
		      (insn->size == 6 && insn->bytes[0] == 0x0f &&
		       (insn->bytes[1] & 0xf0) == 0x80)))
			return refuse(why, len, "'%s %s' among its first %d bytes cannot move",
				      insn->mnemonic, insn->op_str, VP_UPATCH_JMP);
		return 0;
	}
	if (cs_insn_group(cs, insn, CS_GRP_JUMP))
		return refuse(why, len, "it jumps away within its first %d bytes",
			      VP_UPATCH_JMP);
	if (cs_insn_group(cs, insn, CS_GRP_INT) || cs_insn_group(cs, insn, CS_GRP_IRET))
		return refuse(why, len, "'%s' among its first %d bytes cannot move",
			      insn->mnemonic, VP_UPATCH_JMP);
	return 0;
}

int vp_upatch_plan(const unsigned char *code, size_t size, uint64_t addr, struct vp_upatch *p,
		   char *why, size_t whylen)
{
	return vp_upatch_plan_flags(code, size, addr, 0, p, why, whylen);
}

int vp_upatch_plan_flags(const unsigned char *code, size_t size, uint64_t addr, int flags,
			 struct vp_upatch *p, char *why, size_t whylen)
{
	const unsigned char *c = code;
	size_t left = size;
	uint64_t a = addr;
	cs_insn *insn;
	csh cs;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->at = addr;
	if (size >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)))
		p->at = addr + sizeof(endbr64);
	if (size < (p->at - addr) + VP_UPATCH_JMP)
		return refuse(why, whylen, "it is too short to patch (%zu bytes)", size);
	if (open_cs(&cs) < 0)
		return refuse(why, whylen, "capstone cannot be opened");
	insn = cs_malloc(cs);
	c = code + (p->at - addr);
	left = size - (p->at - addr);
	a = p->at;
	while (p->len < VP_UPATCH_JMP) {
		if (!cs_disasm_iter(cs, &c, &left, &a, insn)) {
			err = refuse(why, whylen, left ? "its code at +%#llx cannot be decoded"
						      : "it is too short to patch (%zu bytes)",
				     left ? (unsigned long long)(a - addr) : size);
			goto out;
		}
		err = movable(cs, insn, why, whylen);
		if (err)
			goto out;
		if (p->len + insn->size > VP_UPATCH_MAX) {
			err = refuse(why, whylen, "its first instructions are too long");
			goto out;
		}
		p->len += insn->size;
		p->ninsns++;
	}
	memcpy(p->orig, code + (p->at - addr), p->len);
	/* the whole function: no branch into the displaced bytes, none back
	 * to its entry (a loop through it would count as a call) */
	c = code;
	left = size;
	a = addr;
	while (left) {
		uint64_t t;

		if (!cs_disasm_iter(cs, &c, &left, &a, insn)) {
			if ((flags & VP_UPATCH_SKIP_UNKNOWN) && left > 1) {
				/* (an instruction newer than capstone: past it
				 * byte by byte, which finds more branches, not fewer) */
				c++, left--, a++;
				continue;
			}
			err = refuse(why, whylen, "its code at +%#llx cannot be decoded",
				     (unsigned long long)(a - addr));
			goto out;
		}
		if (!rel_target(cs, insn, &t))
			continue;
		if (t > p->at && t < p->at + p->len) {
			err = refuse(why, whylen, "the branch at +%#llx lands in the bytes the patch "
				     "replaces (+%#llx)", (unsigned long long)(insn->address - addr),
				     (unsigned long long)(t - addr));
			goto out;
		}
		if (t >= addr && t <= p->at && !cs_insn_group(cs, insn, CS_GRP_CALL)) {
			err = refuse(why, whylen, "the branch at +%#llx loops back to its entry",
				     (unsigned long long)(insn->address - addr));
			goto out;
		}
	}
out:
	cs_free(insn, 1);
	cs_close(&cs);
	return err;
}

int vp_upatch_relocate(const struct vp_upatch *p, uint64_t to, unsigned char *out)
{
	const unsigned char *c = p->orig;
	size_t left = p->len, n = 0;
	uint64_t a = p->at;
	cs_insn *insn;
	csh cs;
	int err = 0;

	if (open_cs(&cs) < 0)
		return -ENOMEM;
	insn = cs_malloc(cs);
	while (left) {
		const cs_x86 *x;
		uint64_t t;

		if (!cs_disasm_iter(cs, &c, &left, &a, insn)) {
			err = -EINVAL;
			goto out;
		}
		x = &insn->detail->x86;
		if (cs_insn_group(cs, insn, CS_GRP_JUMP) && rel_target(cs, insn, &t)) {
			/* jcc: the 32-bit form, same condition */
			unsigned cc = insn->size == 2 ? insn->bytes[0] & 0xf : insn->bytes[1] & 0xf;

			out[n] = 0x0f;
			out[n + 1] = (unsigned char)(0x80 | cc);
			err = put_rel32(out + n + 2, to + n + 6, t);
			if (err)
				goto out;
			n += 6;
			continue;
		}
		memcpy(out + n, insn->bytes, insn->size);
		for (unsigned i = 0; i < x->op_count; i++) {
			const cs_x86_op *op = &x->operands[i];

			if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
				continue;
			/* the same target from the new place */
			t = insn->address + insn->size + (uint64_t)op->mem.disp;
			if (!x->encoding.disp_offset || x->encoding.disp_size != 4) {
				err = -EINVAL;
				goto out;
			}
			err = put_rel32(out + n + x->encoding.disp_offset, to + n + insn->size, t);
			if (err)
				goto out;
		}
		n += insn->size;
	}
	err = vp_upatch_jmp(to + n, p->at + p->len, out + n);
	if (!err)
		err = (int)n + VP_UPATCH_JMP;
out:
	cs_free(insn, 1);
	cs_close(&cs);
	return err;
}

#else /* !HAVE_CAPSTONE */

int vp_upatch_plan(const unsigned char *code, size_t size, uint64_t addr, struct vp_upatch *p,
		   char *why, size_t whylen)
{
	return vp_upatch_plan_flags(code, size, addr, 0, p, why, whylen);
}

int vp_upatch_plan_flags(const unsigned char *code, size_t size, uint64_t addr, int flags,
			 struct vp_upatch *p, char *why, size_t whylen)
{
	(void)code;
	(void)size;
	(void)addr;
	(void)flags;
	memset(p, 0, sizeof(*p));
	return refuse(why, whylen, "varperf was built without capstone, which decodes the "
		      "instructions a patch displaces");
}

int vp_upatch_relocate(const struct vp_upatch *p, uint64_t to, unsigned char *out)
{
	(void)p;
	(void)to;
	(void)out;
	return -ENOSYS;
}

#endif
