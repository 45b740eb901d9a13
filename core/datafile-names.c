/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-names.c - the words for the values of varperf.data's fields
 * (sampling events, probed instruction classes, time bases), so that the
 * recorder, the renderers and the GDB plugin call them the same.
 */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "datafile.h"

const char *vp_sample_event_name(uint32_t event)
{
	switch (event) {
	case VP_SEV_CPU_CLOCK:
		return "cpu-clock";
	case VP_SEV_TASK_CLOCK:
		return "task-clock";
	case VP_SEV_CYCLES:
		return "cycles";
	default:
		return "an unknown event";
	}
}

const char *vp_insn_class_name(uint32_t insn_class)
{
	switch (insn_class) {
	case VP_INSN_EMULATED:
		return "emulated";
	case VP_INSN_STEPPED:
		return "single-stepped";
	default:
		return "unknown";
	}
}

const char *vp_header_func_name(const struct vp_header *hdr, uint32_t func)
{
	const struct vp_func *f;

	if (func >= hdr->nfuncs)
		return "?";
	f = &hdr->funcs[func];
	return f->display ? f->display : f->name;
}

static const char *const time_base_names[] = {
	[VP_TIME_WALL] = "wall",
	[VP_TIME_CPU] = "cpu",
	[VP_TIME_OFFCPU] = "offcpu",
};

const char *vp_time_base_name(enum vp_time_base base)
{
	if ((size_t)base < sizeof(time_base_names) / sizeof(time_base_names[0]))
		return time_base_names[base];
	return "?";
}

int vp_time_base_parse(const char *name, enum vp_time_base *ret)
{
	for (size_t i = 0; i < sizeof(time_base_names) / sizeof(time_base_names[0]); i++) {
		if (time_base_names[i] && !strcmp(name, time_base_names[i])) {
			*ret = (enum vp_time_base)i;
			return 0;
		}
	}
	return -EINVAL;
}
