/* SPDX-License-Identifier: MIT */
/* The published snapshot's answers (see published.h). */
#include "published.h"

double fsd_entitlement(const struct fsd_published *p, size_t i)
{
	return p->t[i].plan.entitlement;
}

const char *fsd_resource_state(const struct fsd_published *p, size_t r)
{
	if (r >= p->pcfg.res.n)
		return NULL;
	if (p->saturated[r])
		return "saturated";
	if (p->busy[r])
		return p->pcfg.contended[r] ? "contended" : "busy";
	return NULL;
}

bool fsd_is_bottleneck(const struct fsd_published *p, size_t i, size_t r)
{
	const struct plan_tenant *t = &p->t[i].plan;

	if (!t->in_problem || !fsd_resource_state(p, r))
		return false;
	return t->bottleneck == (int)r ||
	       t->alloc[r] >= FSD_BOTTLENECK_MIN_SHARE * p->pcfg.res.capacity[r];
}

const char *fsd_tenant_mode(const struct fsd_published *p, size_t i)
{
	if (!p->t[i].present)
		return "absent";
	if (p->released)
		return "released";
	switch (p->mode) {
	case PLAN_MODE_LIMITS:
		return "limits";
	case PLAN_MODE_WEIGHTS:
		return "weights";
	default:
		return "off";
	}
}
