/* SPDX-License-Identifier: MIT */
/*
 * fairshare.conf: collect every key with its line (pass 1, inside the inih
 * callback), then resolve and validate everything against the collected
 * values (pass 2), so that errors that need the whole file (percentages of
 * capacities, overlapping cgroups) still point at a line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_conf.h"
#include "ini_limits.h"
#include "str_hash.h"
#include "template.h"

/* Login nodes (one tenant per user) and CI farms (one per job) reach
 * thousands; the period stays linear in tenants (tests/bench/bench_period). */
#define MAX_TENANTS 65536

struct raw_value {
	char *text; /* NULL = key not given */
	int line;
};

struct raw_tenant {
	char name[FS_NAME_MAX];
	int line;
	struct raw_value cgroup, weight, demand, min, max;
	int template; /* index of its [template.NAME] + 1, 0 = [tenant.NAME] */
	char login[FS_LOGIN_MAX];
};

/* weight.NAME = 3 in a [template.X]: tenant NAME's own value. */
struct raw_override {
	char key[8]; /* weight, demand, min, max */
	char name[FS_NAME_MAX];
	struct raw_value v;
	bool used;
};

#define MAX_TEMPLATES 64
#define MAX_OVERRIDES 1024

struct raw_template {
	char name[FS_NAME_MAX];
	int line;
	struct raw_value match, weight, demand, min, max;
	size_t n_over;
	struct raw_override *over;
};

struct raw_disk {
	char name[FS_NAME_MAX];
	struct raw_value v;
};

enum section_kind { SEC_NONE, SEC_AGENT, SEC_RESOURCES, SEC_TENANT, SEC_FLEET, SEC_TEMPLATE };

struct raw_conf {
	const char *path;
	enum section_kind sec;
	bool seen_agent, seen_resources;
	/* [agent] */
	struct raw_value interval, policy, enforce, cgroup_root, on_exit, socket, state_dir,
	    metrics_file, sampler, bpf_wait, backend;
	/* [resources] */
	struct raw_value cpu, memory, memory_reserve, net;
	size_t n_disks;
	struct raw_disk disks[FS_MAX_DISKS];
	size_t n_tenants, cap_tenants;
	struct raw_tenant *tenants;
	/* Open-addressing index of the tenant names (1 + index, 0 = empty), so a
	 * file of thousands of tenants is checked for duplicates in linear time. */
	size_t *name_slot, n_name_slots;
	struct fs_fleet_raw fleet; /* [fleet] (fleet_conf.h) */
	size_t n_templates;
	struct raw_template templates[MAX_TEMPLATES];
	size_t n_explicit; /* tenants from [tenant.NAME]; template ones follow */
};

static void raw_free(struct raw_conf *rc)
{
	struct raw_value *agent_vals[] = {
	    &rc->interval,	 &rc->policy,	 &rc->enforce,	    &rc->cgroup_root, &rc->on_exit,
	    &rc->socket,	 &rc->state_dir, &rc->metrics_file, &rc->cpu,	      &rc->memory,
	    &rc->memory_reserve, &rc->net,	 &rc->sampler,	    &rc->bpf_wait,    &rc->backend};

	for (size_t i = 0; i < sizeof(agent_vals) / sizeof(agent_vals[0]); i++)
		free(agent_vals[i]->text);
	for (size_t i = 0; i < rc->n_disks; i++)
		free(rc->disks[i].v.text);
	for (size_t i = 0; i < rc->n_tenants; i++) {
		struct raw_tenant *t = &rc->tenants[i];

		free(t->cgroup.text);
		free(t->weight.text);
		free(t->demand.text);
		free(t->min.text);
		free(t->max.text);
	}
	free(rc->tenants);
	free(rc->name_slot);
	fs_fleet_raw_free(&rc->fleet);
	for (size_t i = 0; i < rc->n_templates; i++) {
		struct raw_template *t = &rc->templates[i];

		free(t->match.text);
		free(t->weight.text);
		free(t->demand.text);
		free(t->min.text);
		free(t->max.text);
		for (size_t k = 0; k < t->n_over; k++)
			free(t->over[k].v.text);
		free(t->over);
	}
}

/* The slot of name in the index: its tenant's, or the empty one to fill. */
static size_t *name_slot(const struct raw_conf *rc, const char *name)
{
	size_t mask = rc->n_name_slots - 1, k = (size_t)fs_str_hash(name) & mask;

	while (rc->name_slot[k] && strcmp(rc->tenants[rc->name_slot[k] - 1].name, name) != 0)
		k = (k + 1) & mask;
	return &rc->name_slot[k];
}

/* Room for one more name (kept at most half full). 0 or -ENOMEM. */
static int name_index_grow(struct raw_conf *rc)
{
	size_t n = rc->n_name_slots ? rc->n_name_slots : 16;
	size_t *old = rc->name_slot, n_old = rc->n_name_slots;

	if (2 * (rc->n_tenants + 1) <= rc->n_name_slots)
		return 0;
	while (2 * (rc->n_tenants + 1) > n)
		n *= 2;
	rc->name_slot = calloc(n, sizeof(*rc->name_slot));
	if (!rc->name_slot) {
		rc->name_slot = old;
		return -ENOMEM;
	}
	rc->n_name_slots = n;
	for (size_t k = 0; k < n_old; k++)
		if (old[k])
			*name_slot(rc, rc->tenants[old[k] - 1].name) = old[k];
	free(old);
	return 0;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) >= FS_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

static int set_value(struct raw_conf *rc, struct raw_value *v, const char *name, const char *value,
		     int line, struct conf_error *err)
{
	if (v->text)
		return conf_error_set(err, -EINVAL, rc->path, line,
				      "duplicate key '%s' (first set on line %d)", name, v->line);
	/* metrics_file = (empty) is the documented "none". */
	if (!*value && strcmp(name, "metrics_file") != 0)
		return conf_error_set(err, -EINVAL, rc->path, line, "empty value for '%s'", name);
	v->text = strdup(value);
	if (!v->text)
		return conf_error_set(err, -ENOMEM, rc->path, line, "out of memory");
	v->line = line;
	return 0;
}

static int on_section(struct raw_conf *rc, const char *section, int line, struct conf_error *err)
{
	if (strcmp(section, "agent") == 0) {
		if (rc->seen_agent)
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "duplicate section [agent]");
		rc->seen_agent = true;
		rc->sec = SEC_AGENT;
		return 0;
	}
	if (strcmp(section, "resources") == 0) {
		if (rc->seen_resources)
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "duplicate section [resources]");
		rc->seen_resources = true;
		rc->sec = SEC_RESOURCES;
		return 0;
	}
	if (strcmp(section, "fleet") == 0) {
		if (rc->fleet.seen)
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "duplicate section [fleet]");
		rc->fleet.seen = true;
		rc->fleet.line = line;
		rc->sec = SEC_FLEET;
		return 0;
	}
	if (strncmp(section, "tenant.", 7) == 0) {
		const char *name = section + 7;
		struct raw_tenant *t;
		size_t *slot;

		if (!valid_name(name))
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "bad tenant name '%s' (letters, digits, '_', '-')",
					      name);
		if (name_index_grow(rc) < 0)
			return conf_error_set(err, -ENOMEM, rc->path, line, "out of memory");
		slot = name_slot(rc, name);
		if (*slot)
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "duplicate section [tenant.%s] (first on line %d)",
					      name, rc->tenants[*slot - 1].line);
		if (rc->n_tenants == MAX_TENANTS)
			return conf_error_set(err, -E2BIG, rc->path, line,
					      "too many tenants (at most %d)", MAX_TENANTS);
		if (rc->n_tenants == rc->cap_tenants) {
			size_t cap = rc->cap_tenants ? rc->cap_tenants * 2 : 8;
			struct raw_tenant *nt = realloc(rc->tenants, cap * sizeof(*nt));

			if (!nt)
				return conf_error_set(err, -ENOMEM, rc->path, line,
						      "out of memory");
			rc->tenants = nt;
			rc->cap_tenants = cap;
		}
		t = &rc->tenants[rc->n_tenants++];
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "%s", name);
		*slot = rc->n_tenants;
		t->line = line;
		rc->sec = SEC_TENANT;
		return 0;
	}
	if (strncmp(section, "template.", 9) == 0) {
		const char *name = section + 9;
		struct raw_template *t;

		if (!valid_name(name))
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "bad template name '%s' (letters, digits, '_', '-')",
					      name);
		for (size_t i = 0; i < rc->n_templates; i++)
			if (strcmp(rc->templates[i].name, name) == 0)
				return conf_error_set(
				    err, -EINVAL, rc->path, line,
				    "duplicate section [template.%s] (first on line %d)", name,
				    rc->templates[i].line);
		if (rc->n_templates == MAX_TEMPLATES)
			return conf_error_set(err, -E2BIG, rc->path, line,
					      "too many templates (at most %d)", MAX_TEMPLATES);
		t = &rc->templates[rc->n_templates++];
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "%s", name);
		t->line = line;
		rc->sec = SEC_TEMPLATE;
		return 0;
	}
	return conf_error_set(err, -EINVAL, rc->path, line,
			      "unknown section [%s] (expected [agent], [resources], [tenant.NAME], "
			      "[template.NAME], [fleet])",
			      section);
}

/* A key of [template.NAME]: match, the tenant keys, or KEY.TENANT overrides. */
static int template_key(struct raw_conf *rc, const char *name, const char *value, int line,
			struct conf_error *err)
{
	struct raw_template *t = &rc->templates[rc->n_templates - 1];
	static const char *const keys[] = {"weight", "demand", "min", "max"};
	struct raw_value *vals[] = {&t->weight, &t->demand, &t->min, &t->max};
	const char *dot = strchr(name, '.');
	struct raw_override *o;

	if (strcmp(name, "match") == 0)
		return set_value(rc, &t->match, name, value, line, err);
	for (size_t i = 0; i < 4; i++) {
		size_t n = strlen(keys[i]);

		if (strcmp(name, keys[i]) == 0)
			return set_value(rc, vals[i], name, value, line, err);
		if (!dot || (size_t)(dot - name) != n || strncmp(name, keys[i], n) != 0)
			continue;
		if (!valid_name(dot + 1))
			return conf_error_set(err, -EINVAL, rc->path, line,
					      "bad tenant name in '%s' (letters, digits, '_', '-')",
					      name);
		for (size_t k = 0; k < t->n_over; k++)
			if (!strcmp(t->over[k].key, keys[i]) && !strcmp(t->over[k].name, dot + 1))
				return conf_error_set(err, -EINVAL, rc->path, line,
						      "duplicate key '%s' (first set on line %d)",
						      name, t->over[k].v.line);
		if (t->n_over == MAX_OVERRIDES)
			return conf_error_set(err, -E2BIG, rc->path, line,
					      "too many overrides in [template.%s] (at most %d)",
					      t->name, MAX_OVERRIDES);
		o = realloc(t->over, (t->n_over + 1) * sizeof(*o));
		if (!o)
			return conf_error_set(err, -ENOMEM, rc->path, line, "out of memory");
		t->over = o;
		o = &t->over[t->n_over++];
		memset(o, 0, sizeof(*o));
		snprintf(o->key, sizeof(o->key), "%s", keys[i]);
		snprintf(o->name, sizeof(o->name), "%s", dot + 1);
		return set_value(rc, &o->v, name, value, line, err);
	}
	return conf_error_set(err, -EINVAL, rc->path, line,
			      "unknown key '%s' in [template.%s] (match, weight, demand, min, max, "
			      "or KEY.TENANT)",
			      name, t->name);
}

static int on_key(void *user, const char *section, const char *name, const char *value, int line,
		  struct conf_error *err)
{
	struct raw_conf *rc = user;

	if (!name)
		return on_section(rc, section, line, err);
	if (rc->sec == SEC_AGENT) {
		static const struct {
			const char *name;
			size_t off;
		} keys[] = {
		    {"interval", offsetof(struct raw_conf, interval)},
		    {"policy", offsetof(struct raw_conf, policy)},
		    {"enforce", offsetof(struct raw_conf, enforce)},
		    {"cgroup_root", offsetof(struct raw_conf, cgroup_root)},
		    {"on_exit", offsetof(struct raw_conf, on_exit)},
		    {"socket", offsetof(struct raw_conf, socket)},
		    {"state_dir", offsetof(struct raw_conf, state_dir)},
		    {"metrics_file", offsetof(struct raw_conf, metrics_file)},
		    {"sampler", offsetof(struct raw_conf, sampler)},
		    {"bpf_wait", offsetof(struct raw_conf, bpf_wait)},
		    {"backend", offsetof(struct raw_conf, backend)},
		};

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strcmp(name, keys[i].name) == 0)
				return set_value(rc, (struct raw_value *)((char *)rc + keys[i].off),
						 name, value, line, err);
		return conf_error_set(err, -EINVAL, rc->path, line, "unknown key '%s' in [agent]",
				      name);
	}
	if (rc->sec == SEC_RESOURCES) {
		if (strcmp(name, "cpu") == 0)
			return set_value(rc, &rc->cpu, name, value, line, err);
		if (strcmp(name, "memory") == 0)
			return set_value(rc, &rc->memory, name, value, line, err);
		if (strcmp(name, "memory_reserve") == 0)
			return set_value(rc, &rc->memory_reserve, name, value, line, err);
		if (strcmp(name, "net") == 0)
			return set_value(rc, &rc->net, name, value, line, err);
		if (strncmp(name, "io.", 3) == 0) {
			struct raw_disk *d;

			if (!valid_name(name + 3))
				return conf_error_set(
				    err, -EINVAL, rc->path, line,
				    "bad disk name '%s' (letters, digits, '_', '-')", name + 3);
			for (size_t i = 0; i < rc->n_disks; i++)
				if (strcmp(rc->disks[i].name, name + 3) == 0)
					return set_value(rc, &rc->disks[i].v, name, value, line,
							 err);
			if (rc->n_disks == FS_MAX_DISKS)
				return conf_error_set(err, -E2BIG, rc->path, line,
						      "too many io.* disks (at most %d)",
						      FS_MAX_DISKS);
			d = &rc->disks[rc->n_disks++];
			memset(d, 0, sizeof(*d));
			snprintf(d->name, sizeof(d->name), "%s", name + 3);
			return set_value(rc, &d->v, name, value, line, err);
		}
		return conf_error_set(err, -EINVAL, rc->path, line,
				      "unknown key '%s' in [resources]", name);
	}
	if (rc->sec == SEC_FLEET)
		return fs_fleet_raw_key(&rc->fleet, rc->path, name, value, line, err);
	if (rc->sec == SEC_TENANT) {
		struct raw_tenant *t = &rc->tenants[rc->n_tenants - 1];

		if (strcmp(name, "cgroup") == 0)
			return set_value(rc, &t->cgroup, name, value, line, err);
		if (strcmp(name, "weight") == 0)
			return set_value(rc, &t->weight, name, value, line, err);
		if (strcmp(name, "demand") == 0)
			return set_value(rc, &t->demand, name, value, line, err);
		if (strcmp(name, "min") == 0)
			return set_value(rc, &t->min, name, value, line, err);
		if (strcmp(name, "max") == 0)
			return set_value(rc, &t->max, name, value, line, err);
		return conf_error_set(err, -EINVAL, rc->path, line,
				      "unknown key '%s' in [tenant.%s]", name, t->name);
	}
	if (rc->sec == SEC_TEMPLATE)
		return template_key(rc, name, value, line, err);
	return conf_error_set(err, -EINVAL, rc->path, line, "key '%s' outside of any section",
			      name);
}

/* ---- pass 2: resolve and validate ---------------------------------------- */

static int copy_path(const char *path, const struct raw_value *v, const char *key, char *out,
		     size_t len, const char *def, bool optional, struct conf_error *err)
{
	const char *s = v->text ? v->text : def;

	if (!s) {
		out[0] = '\0';
		return 0;
	}
	if (optional && !*s) {
		out[0] = '\0';
		return 0;
	}
	if (s[0] != '/')
		return conf_error_set(err, -EINVAL, path, v->line, "%s must be an absolute path",
				      key);
	if (strlen(s) >= len)
		return conf_error_set(err, -ENAMETOOLONG, path, v->line, "%s is too long", key);
	snprintf(out, len, "%s", s);
	return 0;
}

/* Keywords of the [agent] enums, in the enums' order; the first is the default. */
static const char *const policy_names[] = {"psdsf", "njc"};
static const char *const on_exit_names[] = {"restore", "keep"};
static const char *const sampler_names[] = {"auto", "bpf", "cgroupfs"};
static const char *const bpf_wait_names[] = {"exact", "approx"};
/* enum fs_backend_mode's order */
static const char *const backend_names[] = {"auto", "systemd", "cgroupfs"};

#define N_NAMES(names) ((int)(sizeof(names) / sizeof(names[0])))

/*
 * The index in names of the keyword v holds (0, the default, when the key
 * is absent), or -EINVAL "unknown KEY 'text' (a, b or c)".
 */
static int parse_keyword(const struct raw_conf *rc, const struct raw_value *v, const char *key,
			 const char *const *names, int n, struct conf_error *err)
{
	char choices[128] = "";
	size_t used = 0;

	if (!v->text)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(v->text, names[i]) == 0)
			return i;
	for (int i = 0; i < n && used < sizeof(choices); i++) {
		const char *sep = i + 1 < n ? ", " : " or ";

		used += (size_t)snprintf(choices + used, sizeof(choices) - used, "%s%s",
					 i ? sep : "", names[i]);
	}
	return conf_error_set(err, -EINVAL, rc->path, v->line, "unknown %s '%s' (%s)", key, v->text,
			      choices);
}

static int resolve_agent(const struct raw_conf *rc, struct fs_conf *c, struct conf_error *err)
{
	struct fs_conf_agent *a = &c->agent;
	int r;

	a->interval_us = 1000000;
	if (rc->interval.text) {
		if (fs_parse_duration(rc->interval.text, &a->interval_us) < 0)
			return conf_error_set(err, -EINVAL, rc->path, rc->interval.line,
					      "bad interval '%s' (e.g. 1s, 500ms)",
					      rc->interval.text);
		if (a->interval_us < 100000 || a->interval_us > 600000000)
			return conf_error_set(err, -EINVAL, rc->path, rc->interval.line,
					      "interval '%s' out of range (100ms to 10m)",
					      rc->interval.text);
	}
	r = parse_keyword(rc, &rc->policy, "policy", policy_names, N_NAMES(policy_names), err);
	if (r < 0)
		return r;
	a->policy = (enum fs_conf_policy)r;
	r = parse_keyword(rc, &rc->enforce, "enforce", fs_enforce_names, FS_ENFORCE_COUNT, err);
	if (r < 0)
		return r;
	a->enforce = (enum fs_enforce)r;
	r = parse_keyword(rc, &rc->on_exit, "on_exit", on_exit_names, N_NAMES(on_exit_names), err);
	if (r < 0)
		return r;
	a->on_exit = (enum fs_conf_on_exit)r;
	r = parse_keyword(rc, &rc->sampler, "sampler", sampler_names, N_NAMES(sampler_names), err);
	if (r < 0)
		return r;
	a->sampler = (enum fs_conf_sampler)r;
	r = parse_keyword(rc, &rc->bpf_wait, "bpf_wait", bpf_wait_names, N_NAMES(bpf_wait_names),
			  err);
	if (r < 0)
		return r;
	a->bpf_wait = (enum fs_conf_bpf_wait)r;
	r = parse_keyword(rc, &rc->backend, "backend", backend_names, N_NAMES(backend_names), err);
	if (r < 0)
		return r;
	a->backend = (enum fs_backend_mode)r;
	r = copy_path(rc->path, &rc->cgroup_root, "cgroup_root", a->cgroup_root,
		      sizeof(a->cgroup_root), FS_DEFAULT_CGROUP_ROOT, false, err);
	if (r == 0)
		r = copy_path(rc->path, &rc->socket, "socket", a->socket, sizeof(a->socket),
			      FS_DEFAULT_SOCKET, false, err);
	if (r == 0)
		r = copy_path(rc->path, &rc->state_dir, "state_dir", a->state_dir,
			      sizeof(a->state_dir), FS_DEFAULT_RUN_DIR, false, err);
	if (r == 0)
		r = copy_path(rc->path, &rc->metrics_file, "metrics_file", a->metrics_file,
			      sizeof(a->metrics_file), NULL, true, err);
	return r;
}

static int read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int auto_cpus(const char *cgroup_root, const struct fs_conf_env *env, double *out)
{
	char buf[4096];
	unsigned n;
	long sc;

	if (env && env->read_cgroup_root &&
	    env->read_cgroup_root(cgroup_root, "cpuset.cpus.effective", buf, sizeof(buf)) == 0 &&
	    fs_parse_cpu_list_count(buf, &n) == 0 && n > 0) {
		*out = n;
		return 0;
	}
	sc = env && env->ncpus_fallback > 0 ? env->ncpus_fallback : sysconf(_SC_NPROCESSORS_ONLN);
	if (sc <= 0)
		return -ENODEV;
	*out = (double)sc;
	return 0;
}

static int auto_memory(const struct fs_conf_env *env, uint64_t *out)
{
	const char *proc = env && env->procfs_root ? env->procfs_root : FS_DEFAULT_PROCFS_ROOT;
	char path[PATH_MAX], buf[8192];
	const char *p;
	unsigned long long kb;
	int r;

	snprintf(path, sizeof(path), "%s/meminfo", proc);
	r = read_small_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	p = strstr(buf, "MemTotal:");
	if (!p || sscanf(p, "MemTotal: %llu kB", &kb) != 1 || kb == 0)
		return -EINVAL;
	*out = (uint64_t)kb * 1024;
	return 0;
}

/* Capacities were checked > 0 when parsed, and FS_MAX_RES counts every
 * resource [resources] can declare, so this cannot fail. */
static int add_resource(struct fs_conf *c, const char *name, enum fs_res_kind kind, int disk,
			struct fs_devnum dev, double capacity)
{
	return fs_resources_add(&c->res, kind, name, capacity, disk, dev);
}

static char *next_field(char **p)
{
	char *s = *p, *start;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	start = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return start;
}

/* "8000iops" -> 8000: the IOPS budget of a shared disk, its unit written
 * out so that "DEVICE BPS IOPS" is never read as "DEVICE RBPS WBPS". */
static int parse_total_iops(const char *s, double *out)
{
	char num[64];
	size_t n = strlen(s);

	if (n <= 4 || n - 4 >= sizeof(num) || strcmp(s + n - 4, "iops") != 0)
		return -EINVAL;
	memcpy(num, s, n - 4);
	num[n - 4] = '\0';
	return fs_parse_iops(num, out);
}

/* DEVICE BPS [IOPSiops] (shared) or DEVICE RBPS WBPS [RIOPS WIOPS] (split). */
static int parse_disk_rates(const struct raw_conf *rc, const struct raw_disk *rd, char **f, int n,
			    struct fs_disk *d, struct conf_error *err)
{
	const char *const form = "expected DEVICE BPS [IOPSiops] (one budget for reads and "
				 "writes) or DEVICE RBPS WBPS [RIOPS WIOPS]";
	double *rate[2] = {&d->rbps, &d->wbps}, *ops[2] = {&d->riops, &d->wiops};
	int n_rates;

	d->shared = n == 2 || (n == 3 && parse_total_iops(f[2], &d->iops) == 0);
	if (d->shared && n == 3 && !(d->iops > 0))
		return conf_error_set(err, -EINVAL, rc->path, rd->v.line,
				      "io.%s: bad IOPS '%s' (e.g. 8000iops, 8Kiops)", rd->name,
				      f[2]);
	if (d->shared) {
		rate[0] = &d->bps;
	} else if (n != 3 && n != 5) {
		return conf_error_set(err, -EINVAL, rc->path, rd->v.line, "io.%s: %s", rd->name,
				      form);
	}
	n_rates = d->shared ? 1 : 2;
	for (int k = 0; k < n_rates; k++)
		if (fs_parse_io_rate(f[1 + k], rate[k]) < 0 || *rate[k] <= 0)
			return conf_error_set(err, -EINVAL, rc->path, rd->v.line,
					      "io.%s: bad %s rate '%s' (e.g. 200M, 1.5Gi)",
					      rd->name,
					      d->shared ? "total"
					      : k	? "write"
							: "read",
					      f[1 + k]);
	if (d->shared) /* iops, if given, was parsed above */
		return 0;
	for (int k = 0; n == 5 && k < 2; k++)
		if (fs_parse_iops(f[3 + k], ops[k]) < 0 || *ops[k] <= 0)
			return conf_error_set(err, -EINVAL, rc->path, rd->v.line,
					      "io.%s: bad %s IOPS '%s' (e.g. 20K)", rd->name,
					      k ? "write" : "read", f[3 + k]);
	return 0;
}

static int resolve_disk(const struct raw_conf *rc, const struct fs_conf_env *env,
			const struct raw_disk *rd, struct fs_disk *d, struct conf_error *err)
{
	char buf[256], msg[256];
	char *p = buf, *f[6];
	int n = 0, r;

	snprintf(buf, sizeof(buf), "%s", rd->v.text);
	while (n < 6 && (f[n] = next_field(&p)))
		n++;
	snprintf(d->name, sizeof(d->name), "%s", rd->name);
	snprintf(d->device, sizeof(d->device), "%s", n ? f[0] : "");
	d->line = rd->v.line;
	r = parse_disk_rates(rc, rd, f, n, d, err);
	if (r < 0)
		return r;
	r = fs_conf_resolve_disk(env ? env->sysfs_root : NULL, f[0], &d->dev, msg, sizeof(msg));
	if (r < 0)
		return conf_error_set(err, r, rc->path, rd->v.line, "io.%s: %s", rd->name, msg);
	return 0;
}

static int resolve_resources(const struct raw_conf *rc, const struct fs_conf_env *env,
			     struct fs_conf *c, struct conf_error *err)
{
	char name[FS_NAME_MAX + 8];
	int r;

	if (!rc->cpu.text || strcmp(rc->cpu.text, "auto") == 0) {
		c->cpu_auto = true;
		r = auto_cpus(c->agent.cgroup_root, env, &c->cpu_cores);
		if (r < 0)
			return conf_error_set(err, r, rc->path, rc->cpu.line,
					      "cpu = auto: cannot count CPUs; set cpu = N");
	} else if (fs_parse_number(rc->cpu.text, &c->cpu_cores) < 0 || c->cpu_cores <= 0) {
		return conf_error_set(err, -EINVAL, rc->path, rc->cpu.line,
				      "bad cpu '%s' (auto or a number of cores > 0)", rc->cpu.text);
	}
	if (!rc->memory.text || strcmp(rc->memory.text, "auto") == 0) {
		c->memory_auto = true;
		r = auto_memory(env, &c->memory_total);
		if (r < 0)
			return conf_error_set(
			    err, r, rc->path, rc->memory.line,
			    "memory = auto: cannot read MemTotal; set memory = SIZE");
	} else if (fs_parse_size(rc->memory.text, &c->memory_total) < 0 || c->memory_total == 0) {
		return conf_error_set(err, -EINVAL, rc->path, rc->memory.line,
				      "bad memory '%s' (auto or a size such as 16Gi)",
				      rc->memory.text);
	}
	if (rc->memory_reserve.text) {
		if (fs_parse_size(rc->memory_reserve.text, &c->memory_reserve) < 0)
			return conf_error_set(err, -EINVAL, rc->path, rc->memory_reserve.line,
					      "bad memory_reserve '%s' (a size such as 512Mi)",
					      rc->memory_reserve.text);
		if (c->memory_reserve >= c->memory_total)
			return conf_error_set(err, -EINVAL, rc->path, rc->memory_reserve.line,
					      "memory_reserve %s is not below memory (%llu bytes)",
					      rc->memory_reserve.text,
					      (unsigned long long)c->memory_total);
	}
	if (rc->net.text && (fs_parse_net_rate(rc->net.text, &c->net_rate) < 0 || c->net_rate <= 0))
		return conf_error_set(err, -EINVAL, rc->path, rc->net.line,
				      "bad net '%s' (a rate with bit or B, e.g. 10Gbit, 1.25GB)",
				      rc->net.text);

	c->res_cpu = add_resource(c, "cpu", FS_RES_CPU, -1, (struct fs_devnum){0, 0}, c->cpu_cores);
	c->res_memory = add_resource(c, "memory", FS_RES_MEMORY, -1, (struct fs_devnum){0, 0},
				     (double)(c->memory_total - c->memory_reserve));
	c->n_disks = rc->n_disks;
	for (size_t i = 0; i < rc->n_disks; i++) {
		struct fs_disk *d = &c->disks[i];

		r = resolve_disk(rc, env, &rc->disks[i], d, err);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (c->disks[j].dev.major == d->dev.major &&
			    c->disks[j].dev.minor == d->dev.minor)
				return conf_error_set(err, -EINVAL, rc->path, d->line,
						      "io.%s is the same disk (%u:%u) as io.%s",
						      d->name, d->dev.major, d->dev.minor,
						      c->disks[j].name);
		for (int k = 0; k < FS_DISK_KINDS; k++) {
			const double cap[FS_DISK_KINDS] = {d->rbps,  d->wbps, d->riops,
							   d->wiops, d->bps,  d->iops};
			enum fs_res_kind kind = (enum fs_res_kind)(FS_RES_IO_RBPS + k);

			d->res[k] = -1;
			if (cap[k] <= 0)
				continue;

			snprintf(name, sizeof(name), "io.%s.%s", d->name, fs_res_io_key(kind));
			d->res[k] = add_resource(c, name, kind, (int)i, d->dev, cap[k]);
		}
	}
	c->res_net = rc->net.text ? add_resource(c, "net", FS_RES_NET, -1, (struct fs_devnum){0, 0},
						 c->net_rate)
				  : -1;
	return 0;
}

/* Parses one amount of a vector entry into an absolute value. */
static int parse_amount(const struct fs_conf *c, int res, const char *s, double *out)
{
	double v;
	uint64_t u;

	if (fs_parse_percent(s, &v) == 0) {
		*out = v * c->res.capacity[res];
		return 0;
	}
	switch (c->res.kind[res]) {
	case FS_RES_CPU:
		return fs_parse_number(s, out);
	case FS_RES_MEMORY:
		if (fs_parse_size(s, &u) < 0)
			return -EINVAL;
		*out = (double)u;
		return 0;
	case FS_RES_IO_RBPS:
	case FS_RES_IO_WBPS:
	case FS_RES_IO_BPS:
		return fs_parse_io_rate(s, out);
	case FS_RES_IO_RIOPS:
	case FS_RES_IO_WIOPS:
	case FS_RES_IO_IOPS:
		return fs_parse_iops(s, out);
	case FS_RES_NET:
		return fs_parse_net_rate(s, out);
	}
	return -EINVAL;
}

/* "cpu 2, memory 4G, io.disk0 50M/20M" into vec[] (NAN = not given). */
static int parse_vector(const struct raw_conf *rc, const struct fs_conf *c, const char *key,
			const struct raw_value *v, double *vec, struct conf_error *err)
{
	char buf[256];
	char *save = NULL, *entry;
	bool seen[FS_MAX_RES] = {false};

	for (size_t i = 0; i < FS_MAX_RES; i++)
		vec[i] = NAN;
	if (!v->text)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v->text);
	for (entry = strtok_r(buf, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
		char *p = conf_trim(entry), *res, *amount;
		int idx[FS_IO__COUNT], n_idx = 0;
		bool shared = false;

		res = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = '\0';
		amount = conf_trim(p);
		if (!*res || !*amount)
			return conf_error_set(err, -EINVAL, rc->path, v->line,
					      "%s: expected 'RESOURCE AMOUNT' entries, got '%s'",
					      key, res);
		if (strcmp(res, "cpu") == 0) {
			idx[n_idx++] = c->res_cpu;
		} else if (strcmp(res, "memory") == 0) {
			idx[n_idx++] = c->res_memory;
		} else if (strcmp(res, "net") == 0) {
			if (c->res_net < 0)
				return conf_error_set(err, -EINVAL, rc->path, v->line,
						      "%s: net is not configured in [resources]",
						      key);
			idx[n_idx++] = c->res_net;
		} else if (strncmp(res, "io.", 3) == 0) {
			const struct fs_disk *d = NULL;

			for (size_t i = 0; i < c->n_disks; i++)
				if (strcmp(c->disks[i].name, res + 3) == 0)
					d = &c->disks[i];
			if (!d)
				return conf_error_set(err, -EINVAL, rc->path, v->line,
						      "%s: unknown disk '%s' (not in [resources])",
						      key, res);
			shared = d->shared;
			for (int k = shared ? FS_RES_IO_BPS - FS_RES_IO_RBPS : 0;
			     k < (shared ? FS_DISK_KINDS : FS_IO__COUNT); k++)
				idx[n_idx++] = d->res[k];
		} else {
			return conf_error_set(err, -EINVAL, rc->path, v->line,
					      "%s: unknown resource '%s'", key, res);
		}
		if (seen[idx[0]])
			return conf_error_set(err, -EINVAL, rc->path, v->line,
					      "%s: '%s' given twice", key, res);
		seen[idx[0]] = true;
		if (n_idx == 1) {
			if (parse_amount(c, idx[0], amount, &vec[idx[0]]) < 0)
				return conf_error_set(err, -EINVAL, rc->path, v->line,
						      "%s: bad amount '%s' for %s", key, amount,
						      res);
			continue;
		}
		{
			char *parts[FS_IO__COUNT + 1], whole[128];
			char *q = amount;
			int np = 0;

			snprintf(whole, sizeof(whole), "%s", amount); /* the split cuts it */
			while (np <= FS_IO__COUNT && q) {
				parts[np++] = q;
				q = strchr(q, '/');
				if (q)
					*q++ = '\0';
			}
			if (q || (shared ? np > 2 : np != 2 && np != 4))
				return conf_error_set(
				    err, -EINVAL, rc->path, v->line, "%s: %s wants %s, got '%s'",
				    key, res, shared ? "BPS[/IOPS]" : "READ/WRITE[/RIOPS/WIOPS]",
				    whole);
			for (int k = 0; k < np; k++) {
				char *part = conf_trim(parts[k]);

				if (strcmp(part, "-") == 0)
					continue;
				if (idx[k] < 0)
					return conf_error_set(
					    err, -EINVAL, rc->path, v->line,
					    "%s: %s has no IOPS capacity in [resources]", key, res);
				if (parse_amount(c, idx[k], part, &vec[idx[k]]) < 0)
					return conf_error_set(err, -EINVAL, rc->path, v->line,
							      "%s: bad amount '%s' for %s", key,
							      part, res);
			}
		}
	}
	return 0;
}

/* strcmp with '/' below every other byte: a cgroup's descendants then sort
 * right after it, so one nesting or shared pair, if any, is adjacent. */
static int cgroup_order(const void *a, const void *b)
{
	const unsigned char *x = *(const unsigned char *const *)a;
	const unsigned char *y = *(const unsigned char *const *)b;

	for (; *x && *x == *y; x++, y++)
		;
	return (*x == '/' ? 1 : *x ? *x + 1 : 0) - (*y == '/' ? 1 : *y ? *y + 1 : 0);
}

/* Whether any two of the tenants' cgroups nest or coincide, in O(n log n);
 * only then does resolve_tenants look for the first pair to name it. */
static int cgroups_overlap(const struct raw_conf *rc, bool *out)
{
	const char **v = calloc(rc->n_tenants ? rc->n_tenants : 1, sizeof(*v));
	size_t n = 0, size = 1, used = 0;
	char *norm;

	/* one buffer sized to the paths (normalising never lengthens one) */
	for (size_t i = 0; i < rc->n_tenants; i++)
		if (rc->tenants[i].cgroup.text)
			size += strlen(rc->tenants[i].cgroup.text) + 1;
	norm = malloc(size);
	*out = false;
	if (!norm || !v) {
		free(norm);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rc->n_tenants; i++) {
		const char *text = rc->tenants[i].cgroup.text;
		const size_t len = text ? strlen(text) + 1 : 0;

		if (text && fs_conf_normalize_cgroup(text, norm + used, len) == 0) {
			v[n++] = norm + used;
			used += strlen(norm + used) + 1;
		}
	}
	qsort(v, n, sizeof(*v), cgroup_order);
	for (size_t i = 1; i < n && !*out; i++)
		*out =
		    fs_conf_cgroup_within(v[i], v[i - 1]) || fs_conf_cgroup_within(v[i - 1], v[i]);
	free(norm);
	free(v);
	return 0;
}

/* ---- templates: their matches become tenants ------------------------------ */

struct expand {
	struct raw_conf *rc;
	struct fs_conf *c;
	size_t tmpl;  /* index in rc->templates */
	size_t first; /* the first tenant of this template in rc->tenants */
	struct conf_error *err;
};

static int dup_value(const struct raw_value *from, struct raw_value *to)
{
	to->line = from->line;
	to->text = NULL;
	if (!from->text)
		return 0;
	to->text = strdup(from->text);
	return to->text ? 0 : -ENOMEM;
}

/* The override KEY.name of template t, else the template's own value. */
static const struct raw_value *template_value(struct raw_template *t, const char *key,
					      const char *name, const struct raw_value *own)
{
	for (size_t k = 0; k < t->n_over; k++)
		if (!strcmp(t->over[k].key, key) && !strcmp(t->over[k].name, name)) {
			t->over[k].used = true;
			return &t->over[k].v;
		}
	return own;
}

static int expand_one(void *ctx, const char *rel)
{
	struct expand *x = ctx;
	struct raw_conf *rc = x->rc;
	struct raw_template *t = &rc->templates[x->tmpl];
	char norm[PATH_MAX], name[FS_NAME_MAX], login[FS_LOGIN_MAX];
	struct fs_conf_template *ct = &x->c->templates[x->tmpl];
	struct raw_tenant *nt;
	size_t *slot;

	ct->sig = fs_template_sig(ct->sig, rel);
	ct->n_matches++;
	if (fs_conf_normalize_cgroup(rel, norm, sizeof(norm)) < 0 ||
	    fs_template_name(norm, NULL, name, sizeof(name), login, sizeof(login)) < 0)
		return 0; /* not a name a tenant can have: left alone */
	/* explicit [tenant.X] sections win, then earlier templates (not this
	 * one's matches: a scan names each directory once, and comparing with
	 * them would cost 10^8 compares at 10,000 users) */
	for (size_t i = 0; i < x->first; i++) {
		const char *cg = rc->tenants[i].cgroup.text;
		char other[PATH_MAX];

		if (i >= rc->n_explicit) {
			if (strcmp(cg, norm) == 0)
				return 0;
			continue;
		}
		if (cg && fs_conf_normalize_cgroup(cg, other, sizeof(other)) == 0 &&
		    (fs_conf_cgroup_within(norm, other) || fs_conf_cgroup_within(other, norm)))
			return 0;
	}
	if (name_index_grow(rc) < 0)
		return conf_error_set(x->err, -ENOMEM, rc->path, t->line, "out of memory");
	slot = name_slot(rc, name);
	if (*slot) { /* the name is taken: NAME-TEMPLATE */
		char alt[FS_NAME_MAX * 2 + 2];

		snprintf(alt, sizeof(alt), "%s-%s", name, t->name);
		if (strlen(alt) >= FS_NAME_MAX)
			return 0;
		snprintf(name, sizeof(name), "%s", alt);
		slot = name_slot(rc, name);
		if (*slot)
			return 0;
	}
	if (rc->n_tenants == MAX_TENANTS)
		return conf_error_set(x->err, -E2BIG, rc->path, t->line,
				      "[template.%s]: too many tenants (at most %d)", t->name,
				      MAX_TENANTS);
	if (rc->n_tenants == rc->cap_tenants) {
		size_t cap = rc->cap_tenants ? rc->cap_tenants * 2 : 8;
		struct raw_tenant *g = realloc(rc->tenants, cap * sizeof(*g));

		if (!g)
			return conf_error_set(x->err, -ENOMEM, rc->path, t->line, "out of memory");
		rc->tenants = g;
		rc->cap_tenants = cap;
	}
	nt = &rc->tenants[rc->n_tenants++];
	memset(nt, 0, sizeof(*nt));
	snprintf(nt->name, sizeof(nt->name), "%s", name);
	snprintf(nt->login, sizeof(nt->login), "%s", login);
	nt->line = t->line;
	nt->template = (int)x->tmpl + 1;
	*slot = rc->n_tenants;
	nt->cgroup.line = t->match.line;
	nt->cgroup.text = strdup(norm);
	if (!nt->cgroup.text ||
	    dup_value(template_value(t, "weight", name, &t->weight), &nt->weight) < 0 ||
	    dup_value(template_value(t, "demand", name, &t->demand), &nt->demand) < 0 ||
	    dup_value(template_value(t, "min", name, &t->min), &nt->min) < 0 ||
	    dup_value(template_value(t, "max", name, &t->max), &nt->max) < 0)
		return conf_error_set(x->err, -ENOMEM, rc->path, t->line, "out of memory");
	return 0;
}

/* Adds a tenant for every cgroup a template matches now (file order). */
static int expand_templates(struct raw_conf *rc, struct fs_conf *c, struct conf_error *err)
{
	rc->n_explicit = rc->n_tenants;
	if (rc->n_templates == 0)
		return 0;
	c->templates = calloc(rc->n_templates, sizeof(*c->templates));
	if (!c->templates)
		return conf_error_set(err, -ENOMEM, rc->path, 0, "out of memory");
	c->n_templates = rc->n_templates;
	for (size_t i = 0; i < rc->n_templates; i++) {
		struct raw_template *t = &rc->templates[i];
		struct expand x = {rc, c, i, rc->n_tenants, err};
		int r;

		if (!t->match.text)
			return conf_error_set(err, -EINVAL, rc->path, t->line,
					      "[template.%s] has no match", t->name);
		if (!fs_template_match_ok(t->match.text) ||
		    strlen(t->match.text) >= sizeof(c->templates[i].match))
			return conf_error_set(err, -EINVAL, rc->path, t->match.line,
					      "bad match '%s' (a glob below cgroup_root, without "
					      "'.' or '..')",
					      t->match.text);
		snprintf(c->templates[i].match, sizeof(c->templates[i].match), "%s", t->match.text);
		snprintf(c->templates[i].name, sizeof(c->templates[i].name), "%s", t->name);
		c->templates[i].sig = FS_TEMPLATE_SIG_INIT;
		r = fs_template_scan(c->agent.cgroup_root, t->match.text, expand_one, &x);
		if (r < 0)
			return r == -ENOMEM && !err->msg[0]
				   ? conf_error_set(err, r, rc->path, t->line, "out of memory")
				   : r;
	}
	return 0;
}

static int resolve_tenants(const struct raw_conf *rc, struct fs_conf *c, struct conf_error *err)
{
	bool overlap;

	if (rc->n_tenants == 0 && rc->n_templates == 0)
		return conf_error_set(err, -EINVAL, rc->path, 0,
				      "no [tenant.NAME] or [template.NAME] section");
	c->tenants = calloc(rc->n_tenants ? rc->n_tenants : 1, sizeof(*c->tenants));
	if (!c->tenants || cgroups_overlap(rc, &overlap) < 0)
		return conf_error_set(err, -ENOMEM, rc->path, 0, "out of memory");
	c->n_tenants = rc->n_tenants;
	for (size_t i = 0; i < rc->n_tenants; i++) {
		const struct raw_tenant *rt = &rc->tenants[i];
		struct fs_conf_tenant *t = &c->tenants[i];
		int r;

		snprintf(t->name, sizeof(t->name), "%s", rt->name);
		t->line = rt->line;
		if (rt->template) {
			snprintf(t->template_name, sizeof(t->template_name), "%s",
				 rc->templates[rt->template - 1].name);
			snprintf(t->login, sizeof(t->login), "%s", rt->login);
		}
		if (!rt->cgroup.text)
			return conf_error_set(err, -EINVAL, rc->path, rt->line,
					      "[tenant.%s] has no cgroup", rt->name);
		/* sized to the path: normalising never makes it longer (a
		 * PATH_MAX array per tenant was 40 MiB at 10,000 tenants) */
		t->cgroup = malloc(strlen(rt->cgroup.text) + 1);
		if (!t->cgroup)
			return conf_error_set(err, -ENOMEM, rc->path, 0, "out of memory");
		if (fs_conf_normalize_cgroup(rt->cgroup.text, t->cgroup,
					     strlen(rt->cgroup.text) + 1) < 0)
			return conf_error_set(err, -EINVAL, rc->path, rt->cgroup.line,
					      "bad cgroup '%s' (a path below cgroup_root, without "
					      "'.' or '..')",
					      rt->cgroup.text);
		for (size_t j = 0; overlap && j < i; j++) {
			const struct fs_conf_tenant *o = &c->tenants[j];

			if (fs_conf_cgroup_within(t->cgroup, o->cgroup) ||
			    fs_conf_cgroup_within(o->cgroup, t->cgroup))
				return conf_error_set(
				    err, -EINVAL, rc->path, rt->cgroup.line,
				    strcmp(t->cgroup, o->cgroup) == 0
					? "cgroup '%s' is also tenant %s's (line %d)"
					: "cgroup '%s' overlaps tenant %s's (line %d); "
					  "tenants must not nest",
				    t->cgroup, o->name, rc->tenants[j].cgroup.line);
		}
		t->weight = 1;
		if (rt->weight.text && (fs_parse_number(rt->weight.text, &t->weight) < 0 ||
					!fs_conf_weight_ok(t->weight)))
			return conf_error_set(err, -EINVAL, rc->path, rt->weight.line,
					      "bad weight '%s' (a number from %g to %g)",
					      rt->weight.text, FS_CONF_WEIGHT_MIN,
					      FS_CONF_WEIGHT_MAX);
		t->has_demand = rt->demand.text != NULL;
		r = parse_vector(rc, c, "demand", &rt->demand, t->demand, err);
		if (r == 0)
			r = parse_vector(rc, c, "min", &rt->min, t->min, err);
		if (r == 0)
			r = parse_vector(rc, c, "max", &rt->max, t->max, err);
		if (r < 0)
			return r;
		for (size_t k = 0; k < c->res.n; k++) {
			const char *rn = c->res.name[k];

			if (!isnan(t->max[k]) && t->max[k] <= 0)
				return conf_error_set(err, -EINVAL, rc->path, rt->max.line,
						      "max: %s must be > 0", rn);
			if (!isnan(t->min[k]) && !isnan(t->max[k]) && t->min[k] > t->max[k])
				return conf_error_set(err, -EINVAL, rc->path, rt->min.line,
						      "min: %s is above its max (line %d)", rn,
						      rt->max.line);
			if (!isnan(t->min[k]) && t->min[k] > c->res.capacity[k])
				return conf_error_set(err, -EINVAL, rc->path, rt->min.line,
						      "min: %s is above the capacity (%g)", rn,
						      c->res.capacity[k]);
		}
	}
	/* Floors that cannot all be honoured at once are a config error. */
	for (size_t k = 0; k < c->res.n; k++) {
		double sum = 0;
		int line = 0;

		for (size_t i = 0; i < c->n_tenants; i++) {
			if (isnan(c->tenants[i].min[k]))
				continue;
			sum += c->tenants[i].min[k];
			line = rc->tenants[i].min.line;
			if (sum > c->res.capacity[k] * (1 + 1e-9))
				return conf_error_set(err, -EINVAL, rc->path, line,
						      "min: the tenants' minimums of %s add up to "
						      "more than its capacity (%g)",
						      c->res.name[k], c->res.capacity[k]);
		}
	}
	return 0;
}

int fs_conf_load(const char *path, const struct fs_conf_env *env, struct fs_conf **out, char *err,
		 size_t errlen)
{
	struct raw_conf rc = {.path = path};
	struct conf_error e = {{0}};
	struct fs_conf *c = NULL;
	int r;

	*out = NULL;
	r = ini_limits_parse(path, on_key, &rc, &e);
	if (r < 0)
		goto out;
	c = calloc(1, sizeof(*c));
	if (!c) {
		r = conf_error_set(&e, -ENOMEM, path, 0, "out of memory");
		goto out;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	r = resolve_agent(&rc, c, &e);
	if (r == 0)
		r = resolve_resources(&rc, env, c, &e);
	if (r == 0)
		r = expand_templates(&rc, c, &e);
	if (r == 0)
		r = resolve_tenants(&rc, c, &e);
	if (r == 0)
		r = fs_fleet_resolve(&rc.fleet, path, c->agent.interval_us,
				     c->agent.policy == FS_CONF_POLICY_PSDSF, &c->fleet, &e);
out:
	raw_free(&rc);
	if (r < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", e.msg);
		fs_conf_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void fs_conf_free(struct fs_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->tenants && i < c->n_tenants; i++)
		free(c->tenants[i].cgroup);
	free(c->tenants);
	free(c->templates);
	free(c);
}

int fs_conf_normalize_cgroup(const char *in, char *out, size_t len)
{
	size_t o = 0;
	const char *p = in;

	if (!in || len == 0)
		return -EINVAL;
	while (*p) {
		const char *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = p + strcspn(p, "/");
		n = (size_t)(end - p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return -EINVAL;
		if (o + n + (o ? 1 : 0) + 1 > len)
			return -ENAMETOOLONG;
		if (o)
			out[o++] = '/';
		memcpy(out + o, p, n);
		o += n;
		p = end;
	}
	if (o == 0)
		return -EINVAL; /* the root cgroup itself */
	out[o] = '\0';
	return 0;
}

bool fs_conf_cgroup_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

bool fs_conf_weight_ok(double w)
{
	return w >= FS_CONF_WEIGHT_MIN && w <= FS_CONF_WEIGHT_MAX; /* NaN fails */
}

int fs_conf_find_tenant(const struct fs_conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_tenants; i++)
		if (strcmp(c->tenants[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *fs_conf_policy_name(enum fs_conf_policy p)
{
	return p == FS_CONF_POLICY_NJC ? "njc" : "psdsf";
}

const char *fs_conf_sampler_name(enum fs_conf_sampler s)
{
	return (unsigned)s < N_NAMES(sampler_names) ? sampler_names[s] : "?";
}
