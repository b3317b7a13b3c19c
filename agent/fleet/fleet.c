/* SPDX-License-Identifier: MIT */
/* One host's side of the fleet protocol (fleet.h). */
#include "fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct fleet {
	struct fs_conf_fleet cfg;
	char dump_path[PATH_MAX], dump_tmp[PATH_MAX + 8];
	char key_host[256], key_leader[256], key_alloc[256], key_hosts[256];
	char key_allocs[256], key_weights[256];
	struct etcd_client c;
	int64_t lease;
	int64_t leader_create_rev;  /* of our leader key, while we lead */
	struct fleet_host_rec last; /* what we published last (our own copy) */
	bool have_last;
	uint64_t last_apply_us; /* CLOCK_MONOTONIC of the last FLEET period; 0 none */
	uint64_t n_periods, last_apply_period;
	struct fleet_status st;
	/* leader: the hosts whose alloc/HOST key it wrote last (to delete the
	 * keys of hosts that left), and the last answer (warm start) */
	char (*written)[FLEET_NAME_MAX];
	size_t n_written;
	struct fleet_warm warm;
	/* the grants last applied (their weights, for status) */
	struct fleet_grant *applied;
	size_t n_applied;
};

const char *fleet_mode_name(enum fleet_mode m)
{
	return m == FLEET_MODE_FLEET ? "fleet" : m == FLEET_MODE_HOLD ? "hold" : "local";
}

int fleet_open(struct fleet **out, const struct fs_conf_fleet *cfg, const char *state_dir,
	       char *err, size_t errlen)
{
	struct etcd_options o = {
	    .endpoints = cfg->endpoints,
	    .cacert = cfg->cacert[0] ? cfg->cacert : NULL,
	    .cert = cfg->cert[0] ? cfg->cert : NULL,
	    .key = cfg->key[0] ? cfg->key : NULL,
	    .user = cfg->user[0] ? cfg->user : NULL,
	    .password = cfg->user[0] ? cfg->password : NULL,
	    .timeout_ms = (long)(cfg->timeout_us / 1000) ? (long)(cfg->timeout_us / 1000) : 1,
	};
	struct fleet *f = calloc(1, sizeof(*f));
	int r;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->cfg = *cfg;
	r = etcd_client_init(&f->c, &o);
	if (r < 0) {
		snprintf(err, errlen, "%s", f->c.err[0] ? f->c.err : strerror(-r));
		free(f);
		return r;
	}
	snprintf(f->key_host, sizeof(f->key_host), "%shosts/%s", cfg->prefix, cfg->host);
	snprintf(f->key_hosts, sizeof(f->key_hosts), "%shosts/", cfg->prefix);
	snprintf(f->key_leader, sizeof(f->key_leader), "%sleader", cfg->prefix);
	snprintf(f->key_alloc, sizeof(f->key_alloc), "%salloc/%s", cfg->prefix, cfg->host);
	snprintf(f->key_allocs, sizeof(f->key_allocs), "%salloc/", cfg->prefix);
	snprintf(f->key_weights, sizeof(f->key_weights), "%sweights", cfg->prefix);
	snprintf(f->dump_path, sizeof(f->dump_path), "%s/fleet-dump.ini", state_dir);
	snprintf(f->dump_tmp, sizeof(f->dump_tmp), "%s.tmp", f->dump_path);
	/* The dump lives with the daemon's state (also in dry-run, where the
	 * writer does not create the directory). */
	if (mkdir(state_dir, 0755) < 0 && errno != EEXIST)
		f->dump_path[0] = '\0';
	f->st.mode = FLEET_MODE_LOCAL;
	snprintf(f->st.reason, sizeof(f->st.reason), "not yet in contact with etcd");
	*out = f;
	return 0;
}

void fleet_close(struct fleet *f)
{
	if (!f)
		return;
	if (f->lease)
		etcd_lease_revoke(&f->c, f->lease); /* best effort: else it expires */
	etcd_client_free(&f->c);
	fleet_host_free(&f->last);
	fleet_warm_free(&f->warm);
	free(f->written);
	free(f->applied);
	free(f);
}

const struct fleet_status *fleet_status(const struct fleet *f)
{
	return &f->st;
}

const struct fleet_grant *fleet_applied_grant(const struct fleet *f, const char *tenant)
{
	for (size_t i = 0; i < f->n_applied; i++)
		if (!strcmp(f->applied[i].tenant, tenant))
			return &f->applied[i];
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Four significant digits: estimates that wobble in the noise do not make a
 * new version (and a hold) every period. */
static double round4(double v)
{
	char buf[32];

	if (!(v != 0) || !isfinite(v))
		return v;
	snprintf(buf, sizeof(buf), "%.4g", v);
	return strtod(buf, NULL);
}

static int copy_rec(struct fleet_host_rec *dst, const struct fleet_host_rec *src)
{
	struct fleet_tenant_rec *t = malloc((src->n_tenants + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	memcpy(t, src->t, src->n_tenants * sizeof(*t));
	fleet_host_free(dst);
	*dst = *src;
	dst->t = t;
	return 0;
}

static int lease_step(struct fleet *f)
{
	int64_t ttl = 0;
	int r;

	if (f->lease) {
		r = etcd_lease_keepalive(&f->c, f->lease, &ttl);
		if (r < 0)
			return r;
		if (ttl > 0)
			return 0;
		/* Lapsed (etcd was away longer than the TTL): our record and
		 * leader key went with it. */
		f->lease = 0;
		f->leader_create_rev = 0;
		f->st.is_leader = false;
	}
	return etcd_lease_grant(&f->c, (int64_t)f->cfg.lease_ttl_s, &f->lease);
}

/* Our part of the allocation; *have false when there is none. Serializable:
 * a member answers alone, so a raft election or a slow quorum does not stall
 * it; a lagging member's older answer fails fleet_check (version, age). */
static int read_alloc(struct fleet *f, struct fleet_alloc *a, bool *have, char *why, size_t len)
{
	struct etcd_kvs kvs;
	int r = etcd_range_local(&f->c, f->key_alloc, false, 0, &kvs);

	*have = false;
	if (r < 0)
		return r;
	if (kvs.n == 1) {
		r = fleet_alloc_from_json(kvs.kv[0].value, a, why, len);
		*have = r == 0;
		r = r == -ENOMEM ? r : 0; /* a bad record is "no allocation", not an outage */
	}
	etcd_kvs_free(&kvs);
	return r;
}

static int publish(struct fleet *f, struct fleet_host_rec *me, uint64_t now_real_us)
{
	char *json;
	int r;

	me->version = f->have_last ? f->last.version : 0;
	if (!f->have_last || !fleet_host_same(me, &f->last))
		me->version++;
	me->time_us = now_real_us;
	json = fleet_host_to_json(me);
	if (!json)
		return -ENOMEM;
	r = etcd_put(&f->c, f->key_host, json, strlen(json), f->lease, NULL);
	f->st.etcd_keys_written++;
	free(json);
	if (r == 0) {
		r = copy_rec(&f->last, me);
		f->have_last = r == 0;
	}
	f->st.version = me->version;
	return r;
}

static int campaign(struct fleet *f)
{
	struct etcd_kv holder;
	bool won;
	int64_t rev;
	int r = etcd_txn_put(&f->c, f->key_leader, ETCD_CMP_CREATE, 0, f->cfg.host,
			     strlen(f->cfg.host), f->lease, &won, &rev, &holder);

	if (r < 0)
		return r;
	if (won) {
		f->st.etcd_keys_written++;
		f->leader_create_rev = rev;
		snprintf(f->st.leader, sizeof(f->st.leader), "%s", f->cfg.host);
	} else if (holder.key) {
		bool ours = holder.lease == f->lease && !strcmp(holder.value, f->cfg.host);

		f->leader_create_rev = ours ? holder.create_revision : 0;
		snprintf(f->st.leader, sizeof(f->st.leader), "%s", holder.value);
	}
	f->st.is_leader = f->leader_create_rev != 0;
	etcd_kv_free(&holder);
	return 0;
}

/* Writes the dump next to our state, atomically (tmp + rename). */
static FILE *dump_open(struct fleet *f)
{
	return f->dump_path[0] ? fopen(f->dump_tmp, "we") : NULL;
}

/* The fleet-wide weights at the snapshot's revision; none (every host's own
 * weight) when the key is absent or bad (said in status). */
static int read_weights(struct fleet *f, int64_t revision, struct fleet_weights *w)
{
	struct etcd_kvs kvs;
	char why[256];
	int r = etcd_range(&f->c, f->key_weights, false, revision, &kvs);

	memset(w, 0, sizeof(*w));
	f->st.weights_note[0] = '\0';
	if (r < 0)
		return r;
	if (kvs.n == 1 && fleet_weights_from_json(kvs.kv[0].value, w, why, sizeof(why)) < 0)
		snprintf(f->st.weights_note, sizeof(f->st.weights_note),
			 "%s ignored (hosts' weights used): %s", f->key_weights, why);
	f->st.fleet_weights = w->n;
	etcd_kvs_free(&kvs);
	return 0;
}

static bool in_alloc(const struct fleet_alloc *a, const char *host)
{
	for (size_t k = 0; k < a->n_hosts; k++)
		if (!strcmp(a->h[k].host, host))
			return true;
	return false;
}

/* etcd's default --max-txn-ops is 128: stay below it. */
#define TXN_OPS 100

/*
 * Writes each host's part to PREFIX/alloc/HOST, bound to our lease (they go
 * with our leadership), and deletes the keys of hosts that left, in txns of
 * TXN_OPS guarded by our leader key: a deposed leader's write does not land.
 * Each host judges its own key on its own, so a fleet larger than one txn
 * is safe too. *won false when deposed.
 */
static int write_alloc(struct fleet *f, const struct fleet_alloc *a, bool *won)
{
	size_t n_ops = a->n_hosts + f->n_written, n = 0;
	struct etcd_op *ops = calloc(n_ops + 1, sizeof(*ops));
	char **json = calloc(n_ops + 1, sizeof(char *)), (*del)[256] = NULL;
	char(*written)[FLEET_NAME_MAX] = calloc(a->n_hosts + 1, sizeof(*written));
	int r = 0;

	*won = true;
	del = calloc(f->n_written + 1, sizeof(*del));
	if (!ops || !json || !written || !del) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->n_written; i++) {
		if (in_alloc(a, f->written[i]))
			continue;
		snprintf(del[i], sizeof(del[i]), "%s%s", f->key_allocs, f->written[i]);
		ops[n++] = (struct etcd_op){.key = del[i], .del = true};
	}
	for (size_t k = 0; k < a->n_hosts; k++) {
		char *key = malloc(strlen(f->key_allocs) + strlen(a->h[k].host) + 1);

		json[k] = fleet_alloc_host_to_json(a, k);
		if (!json[k] || !key) {
			free(key);
			r = -ENOMEM;
			goto out;
		}
		sprintf(key, "%s%s", f->key_allocs, a->h[k].host);
		ops[n++] = (struct etcd_op){
		    .key = key, .value = json[k], .len = strlen(json[k]), .lease = f->lease};
		snprintf(written[k], sizeof(written[k]), "%s", a->h[k].host);
	}
	for (size_t i = 0; i < n && r == 0 && *won; i += TXN_OPS) {
		r = etcd_txn_ops(&f->c, f->key_leader, ETCD_CMP_CREATE, f->leader_create_rev,
				 &ops[i], n - i < TXN_OPS ? n - i : TXN_OPS, won, NULL);
		if (r == 0 && *won)
			f->st.etcd_keys_written += n - i < TXN_OPS ? n - i : TXN_OPS;
	}
	if (r == 0 && *won) {
		free(f->written);
		f->written = written;
		f->n_written = a->n_hosts;
		written = NULL;
	}
out:
	for (size_t i = 0; ops && i < n; i++)
		if (!ops[i].del)
			free((char *)ops[i].key);
	for (size_t k = 0; json && k < a->n_hosts; k++)
		free(json[k]);
	free(json);
	free(ops);
	free(del);
	free(written);
	return r;
}

static int lead(struct fleet *f, uint64_t now_real_us)
{
	struct etcd_kvs kvs;
	struct fleet_host_rec *hosts = NULL;
	struct fleet_weights weights = {0};
	struct fleet_alloc a = {0};
	size_t n = 0;
	char why[256] = "";
	uint64_t t0 = cpu_ns();
	FILE *dump = NULL;
	bool won = false;
	int r = etcd_range(&f->c, f->key_hosts, true, 0, &kvs);

	if (r == 0)
		r = read_weights(f, kvs.revision, &weights); /* the same snapshot */
	if (r < 0)
		goto out;
	hosts = calloc(kvs.n + 1, sizeof(*hosts));
	if (!hosts) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < kvs.n; i++)
		if (fleet_host_from_json(kvs.kv[i].value, &hosts[n], why, sizeof(why)) == 0)
			n++;
	dump = dump_open(f);
	r = fleet_solve(hosts, n, &weights, &f->warm, &a, dump, why, sizeof(why));
	if (dump && fclose(dump) != 0 && r == 0)
		r = -EIO;
	if (r < 0) {
		snprintf(f->st.reason, sizeof(f->st.reason), "leader: %s", why);
		r = 0; /* nothing to publish is not an etcd outage */
		goto out;
	}
	a.revision = kvs.revision;
	a.time_us = now_real_us;
	snprintf(a.leader, sizeof(a.leader), "%s", f->cfg.host);
	f->st.solved_hosts = n;
	f->st.solve_ns = cpu_ns() - t0;
	f->st.solve_iterations = a.iterations;
	f->st.solve_warm = f->warm.used;
	r = write_alloc(f, &a, &won);
	if (r == 0 && !won) {
		f->leader_create_rev = 0; /* deposed between campaign and now */
		f->st.is_leader = false;
	}
	if (r == 0 && won && rename(f->dump_tmp, f->dump_path) != 0)
		unlink(f->dump_tmp);
out:
	fleet_alloc_free(&a);
	fleet_weights_free(&weights);
	for (size_t i = 0; i < n; i++)
		fleet_host_free(&hosts[i]);
	free(hosts);
	etcd_kvs_free(&kvs);
	return r;
}

static bool same_tenants(const struct fleet_host_rec *a, const struct fleet_host_rec *b)
{
	if (a->n_tenants != b->n_tenants)
		return false;
	for (size_t i = 0; i < a->n_tenants; i++)
		if (strcmp(a->t[i].name, b->t[i].name))
			return false;
	return true;
}

/*
 * The last allocation applied is young enough to hold on to: fewer periods
 * ago than max_age spans. Counted in periods, not by the clock: periods are
 * stamped with the time they run, so a clock age jitters by what a period
 * ran late, and the hold ended one period early or late (the suite's "local
 * within max_age" and "no local period in a raft election" both saw it).
 * Whether an allocation is too old to apply at all is fleet_check's
 * wall-clock test of its own stamp.
 */
static bool applied_recently(const struct fleet *f)
{
	return f->last_apply_us &&
	       (f->n_periods + 1 - f->last_apply_period) * f->cfg.interval_us < f->cfg.max_age_us;
}

enum fleet_mode fleet_period(struct fleet *f, struct fleet_host_rec *me, uint64_t now_mono_us,
			     uint64_t now_real_us, double *grant)
{
	struct fleet_alloc a = {0};
	const struct fleet_host_alloc *mine = NULL;
	enum fleet_verdict v = FLEET_NOT_LISTED;
	bool have = false;
	char why[256] = "";
	enum fleet_mode was = f->st.mode;
	int r;

	snprintf(me->host, sizeof(me->host), "%s", f->cfg.host);
	for (size_t k = 0; k < me->n_res; k++)
		me->capacity[k] = round4(me->capacity[k]);
	for (size_t i = 0; i < me->n_tenants; i++)
		for (size_t k = 0; k < me->n_res; k++)
			me->t[i].demand[k] = round4(me->t[i].demand[k]);

	r = lease_step(f);
	if (r == 0)
		r = read_alloc(f, &a, &have, why, sizeof(why));
	if (r == 0 && have) {
		f->st.alloc_revision = a.revision;
		f->st.alloc_time_us = a.time_us;
		if (f->have_last)
			v = fleet_check(&a, &f->last, now_real_us, f->cfg.max_age_us, &mine);
		/* Our tenants or demands changed since the record it answers:
		 * not applicable until the leader has seen the new one. */
		if (v == FLEET_APPLY && !same_tenants(me, &f->last))
			v = FLEET_OTHER_TENANTS;
		else if (v == FLEET_APPLY && !fleet_host_same(me, &f->last))
			v = FLEET_OLD_DEMANDS;
	}
	if (r == 0)
		r = publish(f, me, now_real_us);
	if (r == 0)
		r = campaign(f);
	if (r == 0 && f->st.is_leader)
		r = lead(f, now_real_us);
	f->st.etcd_requests = f->c.requests;
	f->st.etcd_bytes = f->c.bytes_sent;
	f->st.etcd_bytes_received = f->c.bytes_received;
	f->st.etcd_ok = r == 0;

	if (r < 0) {
		/* An etcd blip (a raft election) shorter than max_age keeps the
		 * last allocation in force rather than flipping the kernel to
		 * the local policy and back: hold while it is younger. */
		bool recent = applied_recently(f);

		f->st.mode = recent ? FLEET_MODE_HOLD : FLEET_MODE_LOCAL;
		f->st.is_leader = false;
		f->leader_create_rev = 0;
		snprintf(f->st.reason, sizeof(f->st.reason), "etcd unreachable: %s", f->c.err);
	} else if (v == FLEET_APPLY) {
		struct fleet_grant *g = realloc(f->applied, (mine->n + 1) * sizeof(*g));

		for (size_t i = 0; i < me->n_tenants; i++)
			grant[i] = mine->g[i].grant;
		if (g) {
			memcpy(g, mine->g, mine->n * sizeof(*g));
			f->applied = g;
			f->n_applied = mine->n;
		}
		f->st.mode = FLEET_MODE_FLEET;
		f->st.applied_revision = a.revision;
		f->st.applied_age_us = now_real_us > a.time_us ? now_real_us - a.time_us : 0;
		f->last_apply_us = now_mono_us;
		snprintf(f->st.reason, sizeof(f->st.reason), "allocation of revision %lld applied",
			 (long long)a.revision);
	} else {
		const char *what =
		    !have ? (why[0] ? why : "no allocation published yet") : fleet_verdict_text(v);
		bool recent = applied_recently(f);

		f->st.mode = recent ? FLEET_MODE_HOLD : FLEET_MODE_LOCAL;
		snprintf(f->st.reason, sizeof(f->st.reason), "%s", what);
	}
	f->n_periods++;
	if (f->st.mode == FLEET_MODE_LOCAL)
		f->n_applied = 0; /* the host's own weights are in force */
	if (f->st.mode == FLEET_MODE_FLEET)
		f->last_apply_period = f->n_periods;
	else if (f->st.mode == FLEET_MODE_LOCAL && was != FLEET_MODE_LOCAL)
		f->st.fallback_periods = f->n_periods - f->last_apply_period;
	f->st.periods[f->st.mode]++;
	fleet_alloc_free(&a);
	return f->st.mode;
}
