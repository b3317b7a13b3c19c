/* SPDX-License-Identifier: MIT */
/* Disk contention and delivered capacity (rules in contention.h). Pure. */
#include "contention.h"

#include <math.h>
#include <string.h>

void ct_config_default(struct ct_config *cfg)
{
	cfg->queue_min = 2.0;
	cfg->busy = FS_RES_BUSY_SHARE;
	cfg->user_share = FS_RES_USER_SHARE;
	cfg->hold = 5;
	cfg->follow = 0.25;
	cfg->grow = 1.05;
	cfg->used_share = 0.95;
	cfg->floor_share = 0.05;
	cfg->stall_share = 0.5;
	cfg->stall_max = 2;
}

void ct_input_init(struct ct_input *in)
{
	memset(in, 0, sizeof(*in));
	for (size_t k = 0; k < FS_MAX_DISKS; k++)
		in->queue[k] = NAN;
}

void ct_state_init(struct ct_state *s)
{
	memset(s, 0, sizeof(*s));
}

static double clampd(double v, double lo, double hi)
{
	if (!(v >= lo))
		return lo;
	return v > hi ? hi : v;
}

void ct_update(const struct fs_resources *res, const struct ct_config *cfg,
	       const struct ct_input *in, const struct ct_state *prev, struct ct_state *next)
{
	struct ct_state out;

	ct_state_init(&out);
	for (size_t r = 0; r < res->n; r++) {
		double declared = res->capacity[r], total = fmax(0.0, in->total[r]);
		double cap = prev->capacity[r] > 0 ? prev->capacity[r] : declared;
		int k = res->disk[r];
		bool backlog, pair, was = prev->contended[r];
		/* 0: no users counted, nothing to compare with */
		double allowed = in->allowed[r] > 0 ? in->allowed[r] : INFINITY;

		out.capacity[r] = declared;
		if (!fs_res_is_io(res->kind[r]) || (in->users[r] < 2 && !was))
			continue;
		/* NaN (unknown queue) compares false. With fewer than two users
		 * nothing here is contention: the period is calm (contention.h). */
		pair = in->users[r] >= 2;
		backlog = pair && k >= 0 && k < FS_MAX_DISKS && in->queue[k] >= cfg->queue_min;
		out.loaded[r] = backlog || (pair && total >= cfg->busy * declared);
		if (out.loaded[r] || (pair && in->binding[r]))
			out.calm[r] = 0;
		else
			out.calm[r] = prev->calm[r] + 1;
		out.contended[r] = out.loaded[r] || (was && out.calm[r] < cfg->hold);
		if (!out.contended[r])
			continue;
		if (was && total < cfg->stall_share * cap)
			out.stalled[r] = prev->stalled[r] + 1;
		if (!was)
			cap = declared;
		else if (total > cap)
			cap += cfg->follow * (total - cap);
		else if (in->binding[r] && total >= cfg->used_share * fmin(cap, allowed))
			cap *= cfg->grow;
		else if (backlog && !in->binding[r])
			cap += cfg->follow * (total - cap);
		out.capacity[r] = clampd(cap, cfg->floor_share * declared, declared);
	}
	*next = out;
}

bool ct_stalled(const struct ct_config *cfg, const struct ct_state *s, size_t r)
{
	return s->stalled[r] >= 1 && s->stalled[r] <= cfg->stall_max;
}
