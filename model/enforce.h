/* SPDX-License-Identifier: MIT */
/*
 * How fairshare enforces an allocation (the [agent] enforce key, the
 * planner's setting). The mode a plan is in (limits, weights, off) is the
 * planner's own state, see agent/plan/plan.h.
 */
#ifndef FAIRSHARE_MODEL_ENFORCE_H
#define FAIRSHARE_MODEL_ENFORCE_H

enum fs_enforce {
	FS_ENFORCE_AUTO,    /* limits while at most one bottleneck, else weights */
	FS_ENFORCE_LIMITS,  /* cpu.max, memory.high/max, io.max */
	FS_ENFORCE_WEIGHTS, /* cpu.weight, io.weight (io.max where io.weight is inert) */
	FS_ENFORCE_OFF,	    /* observe and publish, never write */
};
#define FS_ENFORCE_COUNT 4

/* The keywords of the enforce key, in the enum's order (the first is the default). */
extern const char *const fs_enforce_names[FS_ENFORCE_COUNT];

/* "auto", "limits", "weights", "off"; "?" for others. */
const char *fs_enforce_name(enum fs_enforce e);

#endif /* FAIRSHARE_MODEL_ENFORCE_H */
