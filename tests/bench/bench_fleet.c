/* SPDX-License-Identifier: MIT */
/*
 * fairshare-bench-fleet: the fleet protocol at scale (issue 18) against one
 * real etcd member on loopback: H simulated hosts (one fleet object and etcd
 * client each, run in turn in this process) share T tenants, each host
 * running P of them. Prints the period cost on the leader (its own
 * fleet_period, which includes reading the snapshot, the solve and the
 * write) and on another host, etcd requests, keys and bytes sent per
 * period, and the periods and time from one host's demand change to that
 * host applying the new allocation. Target (issue 18): the allocation is
 * published within one 1 s period at 100 hosts x 1000 tenants.
 * Never fails on speed; fails on errors (a host not applying, etcd down).
 *
 * Usage: fairshare-bench-fleet [--hosts H] [--tenants T] [--per-host P]
 *                              [--periods N] [--quick]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_testutil.h"
#include "fleet.h"

static uint64_t now_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double urand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (double)(*s >> 8 & 0xffffff) / 16777216.0;
}

int main(int argc, char **argv)
{
	size_t H = 100, T = 1000, P = 100, periods = 6;
	static const struct option opts[] = {
	    {"hosts", required_argument, NULL, 'H'},	{"tenants", required_argument, NULL, 'T'},
	    {"per-host", required_argument, NULL, 'P'}, {"periods", required_argument, NULL, 'n'},
	    {"quick", no_argument, NULL, 'q'},		{0},
	};
	struct etcd_cluster ec;
	struct fleet **f;
	struct fleet_host_rec *rec;
	double *grant;
	unsigned seed = 18;
	int c, rc = 0;
	char state[] = "/tmp/fs-bench-fleet.XXXXXX";

	while ((c = getopt_long(argc, argv, "H:T:P:n:q", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			H = strtoul(optarg, NULL, 10);
			break;
		case 'T':
			T = strtoul(optarg, NULL, 10);
			break;
		case 'P':
			P = strtoul(optarg, NULL, 10);
			break;
		case 'n':
			periods = strtoul(optarg, NULL, 10);
			break;
		case 'q':
			H = 8, T = 40, P = 10, periods = 5;
			break;
		default:
			return 2;
		}
	}
	if (!H || !T || !P || P > T || periods < 5) {
		fprintf(stderr, "need hosts, tenants >= per-host >= 1, periods >= 5\n");
		return 2;
	}
	if (!mkdtemp(state) || etcd_cluster_start(&ec, 1) < 0) {
		fprintf(stderr, "cannot start etcd (etcd-server)\n");
		return 1;
	}
	f = calloc(H, sizeof(*f));
	rec = calloc(H, sizeof(*rec));
	grant = calloc(P, sizeof(double));
	for (size_t h = 0; h < H; h++) {
		struct fs_conf_fleet cfg = {.enabled = true,
					    .lease_ttl_s = 60,
					    .max_age_us = 600000000,
					    .timeout_us = 5000000};
		char err[ETCD_ERR_MAX];

		snprintf(cfg.endpoints, sizeof(cfg.endpoints), "%s", ec.endpoints);
		snprintf(cfg.prefix, sizeof(cfg.prefix), "/bench/");
		snprintf(cfg.host, sizeof(cfg.host), "h%03zu", h);
		if (fleet_open(&f[h], &cfg, state, err, sizeof(err)) < 0) {
			fprintf(stderr, "fleet_open: %s\n", err);
			return 1;
		}
		rec[h].n_res = 2;
		snprintf(rec[h].res_name[0], sizeof(rec[h].res_name[0]), "cpu");
		snprintf(rec[h].res_name[1], sizeof(rec[h].res_name[1]), "memory");
		rec[h].capacity[0] = 64;
		rec[h].capacity[1] = 256e9;
		rec[h].n_tenants = P;
		rec[h].t = calloc(P, sizeof(*rec[h].t));
		/* P distinct tenants, spread so that each runs on about H P / T hosts. */
		for (size_t i = 0; i < P; i++) {
			size_t n = (h * P + i * 7) % T;

			snprintf(rec[h].t[i].name, sizeof(rec[h].t[i].name), "t%04zu", n);
			rec[h].t[i].weight = 1 + (double)(n % 4);
			rec[h].t[i].demand[0] = 0.5 + 8 * urand(&seed);
			rec[h].t[i].demand[1] = (0.5 + 16 * urand(&seed)) * 1e9;
		}
	}
	printf("fleet bench: %zu hosts, %zu tenants, %zu per host, one etcd member\n", H, T, P);
	uint64_t change_at = 0, change_period = 0;
	size_t probe = H > 1 ? H - 1 : 0;
	bool applied_after_change = false;
	for (size_t p = 0; p < periods; p++) {
		uint64_t leader_us = 0, host_us = 0, solve_ns = 0, req0 = 0, bytes0 = 0, req1 = 0,
			 bytes1 = 0, recv0 = 0, recv1 = 0, keys0 = 0, keys1 = 0, host_recv = 0;
		size_t n_fleet = 0, leader = SIZE_MAX;
		int sweeps = 0;
		bool warm = false;

		if (p == periods - 3) { /* one demand change on the probe host */
			rec[probe].t[0].demand[0] *= 1.5;
			change_at = now_us(CLOCK_MONOTONIC);
			change_period = p;
		}
		for (size_t h = 0; h < H; h++) {
			const struct fleet_status *st = fleet_status(f[h]);
			uint64_t t0 = now_us(CLOCK_MONOTONIC);
			enum fleet_mode m;

			req0 += st->etcd_requests;
			bytes0 += st->etcd_bytes;
			recv0 += st->etcd_bytes_received;
			keys0 += st->etcd_keys_written;
			if (h == probe)
				host_recv = st->etcd_bytes_received;
			m = fleet_period(f[h], &rec[h], t0, now_us(CLOCK_REALTIME), grant);
			req1 += st->etcd_requests;
			bytes1 += st->etcd_bytes;
			recv1 += st->etcd_bytes_received;
			keys1 += st->etcd_keys_written;
			if (h == probe)
				host_recv = st->etcd_bytes_received - host_recv;
			n_fleet += m == FLEET_MODE_FLEET;
			if (st->is_leader) {
				leader = h;
				leader_us = now_us(CLOCK_MONOTONIC) - t0;
				solve_ns = st->solve_ns;
				sweeps = st->solve_iterations;
				warm = st->solve_warm;
			} else if (h == probe) {
				host_us = now_us(CLOCK_MONOTONIC) - t0;
			}
			if (h == probe && change_at && !applied_after_change &&
			    m == FLEET_MODE_FLEET && st->version == rec[h].version) {
				applied_after_change = p > change_period;
				if (applied_after_change)
					printf(
					    "  demand change on h%03zu applied %zu period(s) and "
					    "%.3f s later (periods here run the hosts one after "
					    "another)\n",
					    h, p - change_period,
					    (double)(now_us(CLOCK_MONOTONIC) - change_at) / 1e6);
			}
		}
		printf("  period %zu: %zu/%zu hosts in fleet mode; leader h%03zu %.1f ms (solve "
		       "%.1f ms CPU, %d sweeps%s), a host %.1f ms (%.1f KB received); etcd %llu requests, %llu keys "
		       "written, %.1f KB sent, %.1f KB received\n",
		       p, n_fleet, H, leader, (double)leader_us / 1e3, (double)solve_ns / 1e6,
		       sweeps, warm ? " warm" : "", (double)host_us / 1e3, (double)host_recv / 1e3,
		       (unsigned long long)(req1 - req0), (unsigned long long)(keys1 - keys0),
		       (double)(bytes1 - bytes0) / 1e3, (double)(recv1 - recv0) / 1e3);
		/* The probe holds in the period of its change: the allocation it
		 * reads was solved with its previous demands. */
		if (p >= 2 && n_fleet + (change_at && p == change_period) < H) {
			fprintf(stderr,
				"FAIL: %zu of %zu hosts not in fleet mode in period %zu: %s\n",
				H - n_fleet, H, p, fleet_status(f[0])->reason);
			rc = 1;
		}
	}
	if (!applied_after_change) {
		fprintf(stderr, "FAIL: the demand change was never applied\n");
		rc = 1;
	}
	for (size_t h = 0; h < H; h++) {
		fleet_close(f[h]);
		free(rec[h].t);
	}
	free(f);
	free(rec);
	free(grant);
	etcd_cluster_stop(&ec);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
		if (system(cmd) != 0)
			rc = 1;
	}
	return rc;
}
