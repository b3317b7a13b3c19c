/* SPDX-License-Identifier: MIT */
/*
 * The control socket's status answer (schema in control_status.h) read back
 * into plain structs, for fairctl status/top and the tests; and amounts in
 * operator units (cores, MiB, MB/s).
 */
#ifndef FAIRSHARE_AGENT_CONTROL_JSON_H
#define FAIRSHARE_AGENT_CONTROL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "resource.h" /* FS_MAX_RES: the resource cap of the status reply */

#define FCJ_NAME 80

struct fcj_resource {
	char name[FCJ_NAME];
	char kind[16]; /* cpu, memory, io-rbps, io-wbps, io-riops, io-wiops, io-bps,
			  io-iops, net */
	double capacity, allocated, used;
	bool saturated;
	char state[16]; /* a bottleneck: saturated, contended, busy; else "" (published.h) */
};

struct fcj_tenant {
	char name[FCJ_NAME];
	char cgroup[256];
	char mode[16];	       /* limits, weights, off, absent, released */
	char bottlenecks[256]; /* "cpu,memory" or "" */
	char gap_resource[FCJ_NAME];
	char estimate[96];
	bool present, promoted, written;
	double weight, entitlement, granted, share, gap;
	double fleet_weight;	    /* fleet mode: the leader's weight; NAN = none */
	char fleet_weight_from[16]; /* "fleet", "template", "host" */
	/* per resource of fcj_status.res; NAN = missing, INFINITY = no limit */
	double demand[FS_MAX_RES], alloc[FS_MAX_RES], usage[FS_MAX_RES], limit[FS_MAX_RES];
	char cpu_max[48], mem_high[24], mem_max[24];
	long long cpu_weight, io_weight;
	char io_max[256];	      /* lines joined with "; " */
	uint64_t drift_corrected;     /* files found changed by others, written again */
	char template_name[FCJ_NAME]; /* made by [template.T]: T; else "" */
	char login[64];		      /* a user slice's login name, else "" */
	char backend[16];	      /* "systemd", "cgroupfs", "none"; "" from an older daemon */
	char backend_reason[320];     /* why */
};

struct fcj_status {
	uint64_t period;
	double interval; /* seconds */
	char policy[16], mode[16], mode_reason[256];
	bool dry_run, released;
	uint64_t drift_corrected; /* all tenants, since the daemon started */
	size_t n_res;
	struct fcj_resource res[FS_MAX_RES];
	size_t n_tenants;
	struct fcj_tenant *t;
};

/* Reads a status answer. 0, -EPROTO (missing/mistyped member, err filled)
 * or -ENOMEM. Free with fcj_status_free even on error. */
int fcj_status_parse(struct json_object *o, struct fcj_status *s, char *err, size_t errlen);
void fcj_status_free(struct fcj_status *s);

/* Index of a resource by kind ("cpu"), or -1. */
int fcj_find_kind(const struct fcj_status *s, const char *kind);

/* v in the unit of kind: "2.50 cores", "512.0 MiB", "12.3 MB/s", "300 op/s";
 * "-" for NaN, "max" for infinity. width-free. */
void fcj_fmt_amount(const char *kind, double v, char *buf, size_t len);

/* Shorter, for tables: "2.50", "512M", "1.2G", "12.3M" (no unit names). */
void fcj_fmt_short(const char *kind, double v, char *buf, size_t len);

#endif /* FAIRSHARE_AGENT_CONTROL_JSON_H */
