/* SPDX-License-Identifier: MIT */
/*
 * The daemon's published state as JSON (the control socket's answers).
 * Schema (numbers in the resource's unit: cores, bytes, bytes/s, ops/s;
 * null = not finite, e.g. an unlimited limit):
 *   status:  {"period", "time_us", "policy", "interval_seconds", "mode",
 *             "mode_reason", "dry_run", "released", "files_written",
 *             "files_failed", "resources": [RESOURCE], "tenants": [TENANT]}
 *   RESOURCE {"name", "kind", "unit", "capacity", "saturated", "state" (a
 *             bottleneck: "saturated", "contended", "busy"; else "none"), "allocated",
 *             "used", "allocated_ratio", "utilization"}
 *   TENANT   {"name", "cgroup", "present", "in_problem", "weight",
 *             "entitlement", "granted", "share", "mode", "bottleneck",
 *             "bottlenecks", "gap", "gap_resource", "promoted", "estimate",
 *             "probe", "demand": {RES: n}, "allocation": {..}, "usage": {..},
 *             "limit": {..}, "limits": {"written", "cpu.max", "cpu.weight",
 *             "io.weight", "memory.high", "memory.max", "memory.low",
 *             "io.max": [..]}}
 *   explain: the status members, and {"tenant": TENANT, "bottlenecks": [{"resource",
 *             "saturated", "state", "capacity", "allocated", "competitors": [{"name",
 *             "weight", "share", "granted", "allocation"}]}], "certificate":
 *             {"kind", "resource", "holds", "text"}, "policy_check": {"holds",
 *             "why"}, "gaps": [{"resource", "entitled", "consumed", "gap"}],
 *             "gap", "gap_resource", "promoted"}
 * fairctl reads it back with control_json.h.
 */
#ifndef FAIRSHARE_AGENT_CONTROL_STATUS_H
#define FAIRSHARE_AGENT_CONTROL_STATUS_H

#include <json-c/json.h>

#include "published.h"

/* Adds the status members to o. 0 or -ENOMEM. */
int fsd_json_status(const struct fsd_published *p, struct json_object *o);
/* A TENANT object, or NULL (out of memory). */
struct json_object *fsd_json_tenant(const struct fsd_published *p, size_t i);
/* Adds the explain members for tenant i to o. 0, -ENOMEM, or the policy
 * library's error with err filled. */
int fsd_json_explain(const struct fsd_published *p, size_t i, struct json_object *o, char *err,
		     size_t errlen);

/* json-c prints NaN/Infinity, which is not JSON: those become null. */
struct json_object *fsd_json_num(double v);

#endif /* FAIRSHARE_AGENT_CONTROL_STATUS_H */
