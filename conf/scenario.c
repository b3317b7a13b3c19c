/* SPDX-License-Identifier: MIT */
/*
 * Scenario file parser. Two passes: inih (through ini_limits_parse, which
 * gives line numbers) collects the raw sections and keys, then resolve()
 * checks them against each other, because [scenario] resources and the pool
 * list may come after the sections that depend on them.
 */
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum sect_kind { SECT_SCENARIO, SECT_POOL, SECT_TENANT, SECT_CAPS };

enum key_id {
	KEY_RESOURCES,
	KEY_POLICY,
	KEY_ALPHA,
	KEY_CAPACITY,
	KEY_DEMAND,
	KEY_WEIGHT,
	KEY_MAX_TASKS,
	KEY_POOLS,
	KEY__COUNT
};

static const struct {
	const char *name;
	enum sect_kind sect;
} key_defs[KEY__COUNT] = {
    [KEY_RESOURCES] = {"resources", SECT_SCENARIO}, [KEY_POLICY] = {"policy", SECT_SCENARIO},
    [KEY_ALPHA] = {"alpha", SECT_SCENARIO},	    [KEY_CAPACITY] = {"capacity", SECT_POOL},
    [KEY_DEMAND] = {"demand", SECT_TENANT},	    [KEY_WEIGHT] = {"weight", SECT_TENANT},
    [KEY_MAX_TASKS] = {"max_tasks", SECT_TENANT},   [KEY_POOLS] = {"pools", SECT_TENANT},
};

struct raw_section {
	enum sect_kind kind;
	char *name;		/* as written, e.g. "pool.s1" */
	const char *short_name; /* after the prefix, e.g. "s1" */
	int line;
	char *value[KEY__COUNT];
	int value_line[KEY__COUNT];
	/* "pools =" may be repeated (the lists add up, like systemd's list
	 * settings): a tenant eligible on many pools would not fit one line. */
	struct more_pools {
		char *value;
		int line;
	} * more_pools;
	size_t n_more_pools;
	/* [caps.POOL]: "TENANT = CAP[, ALLOC]" lines, keys are tenant names. */
	struct caps_entry {
		char *tenant, *value;
		int line;
	} * caps;
	size_t n_caps;
};

struct loader {
	const char *path;
	struct raw_section *sects;
	size_t n, cap;
};

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SCENARIO_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-") ==
	       n;
}

static int bad_name(struct conf_error *err, const char *path, int line, const char *what,
		    const char *name)
{
	return conf_error_set(err, -EINVAL, path, line,
			      "bad %s name '%s': use 1-%d characters of A-Z a-z 0-9 _ . : @ -",
			      what, name, SCENARIO_NAME_MAX);
}

static int open_section(struct loader *ld, const char *section, int line, struct conf_error *err)
{
	struct raw_section *s;
	enum sect_kind kind;
	const char *short_name = NULL;

	if (!strcmp(section, "scenario")) {
		kind = SECT_SCENARIO;
	} else if (!strncmp(section, "pool.", 5)) {
		kind = SECT_POOL;
		short_name = section + 5;
	} else if (!strncmp(section, "tenant.", 7)) {
		kind = SECT_TENANT;
		short_name = section + 7;
	} else if (!strncmp(section, "caps.", 5)) {
		kind = SECT_CAPS;
		short_name = section + 5;
	} else {
		return conf_error_set(err, -EINVAL, ld->path, line,
				      "unknown section [%s] (expected [scenario], [pool.NAME], "
				      "[tenant.NAME] or [caps.NAME])",
				      section);
	}
	if (short_name && !valid_name(short_name))
		return bad_name(err, ld->path, line, kind == SECT_TENANT ? "tenant" : "pool",
				short_name);
	for (size_t i = 0; i < ld->n; i++)
		if (!strcmp(ld->sects[i].name, section))
			return conf_error_set(err, -EINVAL, ld->path, line,
					      "duplicate section [%s] (first at line %d)", section,
					      ld->sects[i].line);
	if (ld->n == ld->cap) {
		size_t cap = ld->cap ? 2 * ld->cap : 8;
		struct raw_section *ns = realloc(ld->sects, cap * sizeof(*ns));

		if (!ns)
			return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
		ld->sects = ns;
		ld->cap = cap;
	}
	s = &ld->sects[ld->n];
	memset(s, 0, sizeof(*s));
	s->name = strdup(section);
	if (!s->name)
		return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
	ld->n++;
	s->kind = kind;
	s->short_name = short_name ? s->name + (short_name - section) : s->name;
	s->line = line;
	return 0;
}

static int add_more_pools(struct loader *ld, struct raw_section *s, const char *value, int line,
			  struct conf_error *err)
{
	struct more_pools *m = realloc(s->more_pools, (s->n_more_pools + 1) * sizeof(*m));

	if (!m)
		return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
	s->more_pools = m;
	m[s->n_more_pools].value = strdup(value);
	if (!m[s->n_more_pools].value)
		return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
	m[s->n_more_pools++].line = line;
	return 0;
}

static int add_caps_entry(struct loader *ld, struct raw_section *s, const char *tenant,
			  const char *value, int line, struct conf_error *err)
{
	struct caps_entry *c = realloc(s->caps, (s->n_caps + 1) * sizeof(*c));

	if (!c)
		return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
	s->caps = c;
	c += s->n_caps;
	c->tenant = strdup(tenant);
	c->value = strdup(value);
	c->line = line;
	s->n_caps++;
	if (!c->tenant || !c->value)
		return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
	return 0;
}

static int on_entry(void *user, const char *section, const char *name, const char *value, int line,
		    struct conf_error *err)
{
	struct loader *ld = user;
	struct raw_section *s;

	if (!name)
		return open_section(ld, section, line, err);
	if (ld->n == 0)
		return conf_error_set(err, -EINVAL, ld->path, line, "key '%s' outside any section",
				      name);
	/* inih reports keys of the section opened last, which is ours. */
	s = &ld->sects[ld->n - 1];
	if (s->kind == SECT_CAPS)
		return add_caps_entry(ld, s, name, value, line, err);
	for (int k = 0; k < KEY__COUNT; k++) {
		if (key_defs[k].sect != s->kind || strcmp(key_defs[k].name, name))
			continue;
		if (s->value[k] && k == KEY_POOLS)
			return add_more_pools(ld, s, value, line, err);
		if (s->value[k])
			return conf_error_set(err, -EINVAL, ld->path, line,
					      "duplicate key '%s' in [%s] (first at line %d)", name,
					      s->name, s->value_line[k]);
		s->value[k] = strdup(value);
		if (!s->value[k])
			return conf_error_set(err, -ENOMEM, ld->path, line, "out of memory");
		s->value_line[k] = line;
		return 0;
	}
	return conf_error_set(err, -EINVAL, ld->path, line, "unknown key '%s' in [%s]", name,
			      s->name);
}

/* A comma-separated list: a private copy and pointers into it. */
struct list {
	char *buf;
	char **item;
	size_t n;
};

static void list_free(struct list *l)
{
	free(l->buf);
	free(l->item);
	memset(l, 0, sizeof(*l));
}

static int split_list(struct list *l, const char *value, const char *path, int line,
		      const char *key, struct conf_error *err)
{
	size_t n = 1;
	char *p;

	memset(l, 0, sizeof(*l));
	for (const char *q = value; *q; q++)
		n += *q == ',';
	l->buf = strdup(value);
	l->item = calloc(n, sizeof(*l->item));
	if (!l->buf || !l->item)
		return conf_error_set(err, -ENOMEM, path, line, "out of memory");
	p = l->buf;
	for (size_t i = 0; i < n; i++) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		l->item[i] = conf_trim(p);
		if (!*l->item[i])
			return conf_error_set(err, -EINVAL, path, line,
					      n == 1 ? "'%s' has no value"
						     : "'%s' has an empty item in its list",
					      key);
		p = comma ? comma + 1 : p + strlen(p);
	}
	l->n = n;
	return 0;
}

/*
 * Decimal number, nothing else: strtod alone would also take hex, "nan",
 * "infinity" and leading blanks. "inf" is accepted only when allow_inf.
 */
static int parse_number(const char *s, bool allow_inf, double *out)
{
	char *end;

	if (allow_inf && !strcasecmp(s, "inf")) {
		*out = INFINITY;
		return 0;
	}
	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || end == s || errno == ERANGE || !isfinite(*out))
		return -EINVAL;
	return 0;
}

/* One number per resource, each >= 0, into out[M]. */
static int parse_vector(const struct scenario *sc, const struct raw_section *s, enum key_id k,
			double *out, struct conf_error *err)
{
	const char *path = sc->path, *key = key_defs[k].name;
	int line = s->value_line[k];
	struct list l;
	int r;

	r = split_list(&l, s->value[k], path, line, key, err);
	if (r < 0)
		goto out;
	if (l.n != sc->n_resources) {
		r = conf_error_set(err, -EINVAL, path, line,
				   "%s has %zu value%s, expected %zu (one per resource)", key, l.n,
				   l.n == 1 ? "" : "s", sc->n_resources);
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (parse_number(l.item[i], false, &out[i]) < 0) {
			r = conf_error_set(err, -EINVAL, path, line, "bad number '%s' in %s",
					   l.item[i], key);
			goto out;
		}
		if (out[i] < 0) {
			r = conf_error_set(err, -EINVAL, path, line,
					   "%s of resource %s is negative (%s)", key,
					   sc->resource_names[i], l.item[i]);
			goto out;
		}
	}
out:
	list_free(&l);
	return r;
}

/* A single number, > 0 (and >= min), or "inf" when allowed. */
static int parse_scalar(const struct scenario *sc, const struct raw_section *s, enum key_id k,
			bool allow_inf, double min, double *out, struct conf_error *err)
{
	const char *v = s->value[k], *key = key_defs[k].name;
	int line = s->value_line[k];

	if (strchr(v, ','))
		return conf_error_set(err, -EINVAL, sc->path, line, "%s takes one value, got '%s'",
				      key, v);
	if (parse_number(v, allow_inf, out) < 0)
		return conf_error_set(err, -EINVAL, sc->path, line, "bad number '%s' in %s%s", v,
				      key, allow_inf ? " (a number or inf)" : "");
	if (*out <= 0 || *out < min) {
		if (min > 0)
			return conf_error_set(err, -EINVAL, sc->path, line,
					      "%s must be >= %g%s, got %s", key, min,
					      allow_inf ? " or inf" : "", v);
		return conf_error_set(err, -EINVAL, sc->path, line, "%s must be > 0, got %s", key,
				      v);
	}
	return 0;
}

static int parse_resources(struct scenario *sc, const struct raw_section *s, struct conf_error *err)
{
	int line = s->value_line[KEY_RESOURCES];
	struct list l;
	int r;

	r = split_list(&l, s->value[KEY_RESOURCES], sc->path, line, "resources", err);
	if (r < 0)
		goto out;
	sc->resource_names = calloc(l.n, sizeof(char *));
	if (!sc->resource_names) {
		r = conf_error_set(err, -ENOMEM, sc->path, line, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (!valid_name(l.item[i])) {
			r = bad_name(err, sc->path, line, "resource", l.item[i]);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(l.item[i], l.item[j])) {
				r = conf_error_set(err, -EINVAL, sc->path, line,
						   "resource '%s' listed twice", l.item[i]);
				goto out;
			}
		sc->resource_names[i] = strdup(l.item[i]);
		sc->n_resources = i + 1; /* what scenario_free() releases */
		if (!sc->resource_names[i]) {
			r = conf_error_set(err, -ENOMEM, sc->path, line, "out of memory");
			goto out;
		}
	}
out:
	list_free(&l);
	return r;
}

static int parse_scenario_section(struct scenario *sc, const struct raw_section *s,
				  struct conf_error *err)
{
	int r;

	if (!s->value[KEY_RESOURCES])
		return conf_error_set(err, -EINVAL, sc->path, s->line,
				      "[scenario] needs 'resources = NAME, ...'");
	r = parse_resources(sc, s, err);
	if (r < 0)
		return r;
	if (s->value[KEY_POLICY]) {
		sc->policy = strdup(s->value[KEY_POLICY]);
		if (!sc->policy)
			return conf_error_set(err, -ENOMEM, sc->path, s->line, "out of memory");
		sc->policy_line = s->value_line[KEY_POLICY];
	}
	if (s->value[KEY_ALPHA]) {
		r = parse_scalar(sc, s, KEY_ALPHA, true, 1, &sc->alpha, err);
		if (r < 0)
			return r;
		sc->alpha_line = s->value_line[KEY_ALPHA];
	}
	return 0;
}

static int parse_pool(struct scenario *sc, const struct raw_section *s, size_t k,
		      struct conf_error *err)
{
	sc->pool_names[k] = strdup(s->short_name);
	if (!sc->pool_names[k])
		return conf_error_set(err, -ENOMEM, sc->path, s->line, "out of memory");
	if (!s->value[KEY_CAPACITY])
		return conf_error_set(err, -EINVAL, sc->path, s->line,
				      "[%s] needs 'capacity = ...' (one number per resource)",
				      s->name);
	return parse_vector(sc, s, KEY_CAPACITY, &sc->capacity[k * sc->n_resources], err);
}

/* One "pools =" line of [tenant.X]: marks its pools in row. */
static int add_eligible(struct scenario *sc, bool *row, const char *value, int line,
			struct conf_error *err)
{
	struct list l;
	int r;

	r = split_list(&l, value, sc->path, line, "pools", err);
	for (size_t i = 0; r == 0 && i < l.n; i++) {
		int k = scenario_pool_index(sc, l.item[i]);

		if (k < 0)
			r = conf_error_set(err, -EINVAL, sc->path, line,
					   "unknown pool '%s' in pools", l.item[i]);
		else if (row[k])
			r = conf_error_set(err, -EINVAL, sc->path, line,
					   "pool '%s' listed twice in pools", l.item[i]);
		else
			row[k] = true;
	}
	list_free(&l);
	return r;
}

static int parse_eligibility(struct scenario *sc, const struct raw_section *s, size_t n,
			     struct conf_error *err)
{
	bool *row = &sc->eligible[n * sc->n_pools];
	int r;

	for (size_t k = 0; k < sc->n_pools; k++)
		row[k] = false;
	r = add_eligible(sc, row, s->value[KEY_POOLS], s->value_line[KEY_POOLS], err);
	for (size_t i = 0; r == 0 && i < s->n_more_pools; i++)
		r = add_eligible(sc, row, s->more_pools[i].value, s->more_pools[i].line, err);
	return r;
}

static int parse_tenant(struct scenario *sc, const struct raw_section *s, size_t n,
			struct conf_error *err)
{
	double *d = &sc->demand[n * sc->n_resources];
	bool any = false;
	int r;

	sc->tenant_names[n] = strdup(s->short_name);
	if (!sc->tenant_names[n])
		return conf_error_set(err, -ENOMEM, sc->path, s->line, "out of memory");
	if (!s->value[KEY_DEMAND])
		return conf_error_set(err, -EINVAL, sc->path, s->line,
				      "[%s] needs 'demand = ...' (one number per resource)",
				      s->name);
	r = parse_vector(sc, s, KEY_DEMAND, d, err);
	if (r < 0)
		return r;
	for (size_t m = 0; m < sc->n_resources; m++)
		any |= d[m] > 0;
	if (!any)
		return conf_error_set(err, -EINVAL, sc->path, s->value_line[KEY_DEMAND],
				      "demand of [%s] is all zero", s->name);
	sc->weight[n] = 1;
	if (s->value[KEY_WEIGHT]) {
		r = parse_scalar(sc, s, KEY_WEIGHT, false, 0, &sc->weight[n], err);
		if (r < 0)
			return r;
	}
	sc->max_tasks[n] = INFINITY;
	if (s->value[KEY_MAX_TASKS]) {
		r = parse_scalar(sc, s, KEY_MAX_TASKS, true, 0, &sc->max_tasks[n], err);
		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < sc->n_pools; k++)
		sc->eligible[n * sc->n_pools + k] = true;
	if (s->value[KEY_POOLS])
		return parse_eligibility(sc, s, n, err);
	return 0;
}

/* One "TENANT = CAP[, ALLOC]" line of [caps.POOL k]. */
static int parse_caps_entry(struct scenario *sc, const struct caps_entry *e, size_t k, bool *seen,
			    struct conf_error *err)
{
	int n = scenario_tenant_index(sc, e->tenant);
	size_t K = sc->n_pools;
	struct list l;
	double v[2] = {0, 0};
	int r;

	if (n < 0)
		return conf_error_set(err, -EINVAL, sc->path, e->line,
				      "unknown tenant '%s' in [caps.%s]", e->tenant,
				      sc->pool_names[k]);
	if (seen[n])
		return conf_error_set(err, -EINVAL, sc->path, e->line,
				      "tenant '%s' listed twice in [caps.%s]", e->tenant,
				      sc->pool_names[k]);
	seen[n] = true;
	r = split_list(&l, e->value, sc->path, e->line, e->tenant, err);
	if (r == 0 && l.n > 2)
		r = conf_error_set(err, -EINVAL, sc->path, e->line,
				   "%s: expected CAP or CAP, ALLOC, got %zu values", e->tenant,
				   l.n);
	for (size_t i = 0; r == 0 && i < l.n; i++)
		if (parse_number(l.item[i], i == 0, &v[i]) < 0 || v[i] < 0)
			r = conf_error_set(
			    err, -EINVAL, sc->path, e->line, "bad %s '%s' for %s (a number >= 0%s)",
			    i ? "allocation" : "cap", l.item[i], e->tenant, i ? "" : ", or inf");
	if (r == 0) {
		sc->cap[(size_t)n * K + k] = v[0];
		if (l.n == 2) {
			sc->alloc[(size_t)n * K + k] = v[1];
			sc->has_alloc = true;
		}
	}
	list_free(&l);
	return r;
}

/*
 * [caps.POOL] sections: per-pool caps (a fleet host's local demands). A pool
 * with such a section caps its unlisted tenants at 0; one without it leaves
 * them uncapped. An allocation, when any line gives one, must cover every
 * pool (a fleet dump lists every host).
 */
static int parse_all_caps(struct scenario *sc, const struct loader *ld, struct conf_error *err)
{
	size_t N = sc->n_tenants, K = sc->n_pools;
	bool *has_section = NULL, *seen = NULL;
	int r = 0;

	for (size_t i = 0; i < ld->n && !sc->cap; i++)
		if (ld->sects[i].kind == SECT_CAPS) {
			sc->cap = malloc(N * K * sizeof(double));
			sc->alloc = calloc(N * K, sizeof(double));
			if (!sc->cap || !sc->alloc)
				return conf_error_set(err, -ENOMEM, sc->path, 0, "out of memory");
		}
	if (!sc->cap)
		return 0;
	has_section = calloc(K, sizeof(bool));
	seen = calloc(N, sizeof(bool));
	if (!has_section || !seen) {
		r = conf_error_set(err, -ENOMEM, sc->path, 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < N * K; i++)
		sc->cap[i] = INFINITY;
	for (size_t i = 0; i < ld->n && r == 0; i++) {
		const struct raw_section *s = &ld->sects[i];
		int k = s->kind == SECT_CAPS ? scenario_pool_index(sc, s->short_name) : -1;

		if (s->kind != SECT_CAPS)
			continue;
		if (k < 0) {
			r = conf_error_set(err, -EINVAL, sc->path, s->line,
					   "[%s] names no [pool.%s]", s->name, s->short_name);
			break;
		}
		has_section[k] = true;
		memset(seen, 0, N * sizeof(bool));
		for (size_t n = 0; n < N; n++)
			sc->cap[n * K + (size_t)k] = 0;
		for (size_t e = 0; e < s->n_caps && r == 0; e++)
			r = parse_caps_entry(sc, &s->caps[e], (size_t)k, seen, err);
	}
	for (size_t k = 0; k < K && r == 0 && sc->has_alloc; k++)
		if (!has_section[k])
			r = conf_error_set(err, -EINVAL, sc->path, 0,
					   "allocations are given but pool '%s' has no [caps.%s]",
					   sc->pool_names[k], sc->pool_names[k]);
out:
	free(has_section);
	free(seen);
	return r;
}

static int resolve(struct scenario *sc, const struct loader *ld, struct conf_error *err)
{
	const struct raw_section *scen = NULL;
	size_t k = 0, n = 0;
	int r;

	for (size_t i = 0; i < ld->n; i++) {
		switch (ld->sects[i].kind) {
		case SECT_SCENARIO:
			scen = &ld->sects[i];
			break;
		case SECT_POOL:
			sc->n_pools++;
			break;
		case SECT_TENANT:
			sc->n_tenants++;
			break;
		case SECT_CAPS:
			break;
		}
	}
	if (!scen)
		return conf_error_set(err, -EINVAL, sc->path, 0,
				      "no [scenario] section (it names the resources)");
	if (!sc->n_pools)
		return conf_error_set(err, -EINVAL, sc->path, 0, "no [pool.NAME] section");
	if (!sc->n_tenants)
		return conf_error_set(err, -EINVAL, sc->path, 0, "no [tenant.NAME] section");
	r = parse_scenario_section(sc, scen, err);
	if (r < 0)
		return r;

	sc->pool_names = calloc(sc->n_pools, sizeof(char *));
	sc->tenant_names = calloc(sc->n_tenants, sizeof(char *));
	sc->capacity = calloc(sc->n_pools * sc->n_resources, sizeof(double));
	sc->demand = calloc(sc->n_tenants * sc->n_resources, sizeof(double));
	sc->max_tasks = calloc(sc->n_tenants, sizeof(double));
	sc->weight = calloc(sc->n_tenants, sizeof(double));
	sc->eligible = calloc(sc->n_tenants * sc->n_pools, sizeof(bool));
	if (!sc->pool_names || !sc->tenant_names || !sc->capacity || !sc->demand ||
	    !sc->max_tasks || !sc->weight || !sc->eligible)
		return conf_error_set(err, -ENOMEM, sc->path, 0, "out of memory");

	/* Pools first: tenants' "pools =" refers to them. */
	for (size_t i = 0; i < ld->n; i++)
		if (ld->sects[i].kind == SECT_POOL) {
			r = parse_pool(sc, &ld->sects[i], k++, err);
			if (r < 0)
				return r;
		}
	for (size_t i = 0; i < ld->n; i++)
		if (ld->sects[i].kind == SECT_TENANT) {
			r = parse_tenant(sc, &ld->sects[i], n++, err);
			if (r < 0)
				return r;
		}
	return parse_all_caps(sc, ld, err);
}

int scenario_load(const char *path, struct scenario *sc, struct conf_error *err)
{
	struct loader ld = {.path = path};
	int r;

	memset(sc, 0, sizeof(*sc));
	sc->alpha = NAN;
	sc->path = strdup(path);
	if (!sc->path)
		return conf_error_set(err, -ENOMEM, path, 0, "out of memory");
	r = ini_limits_parse(path, on_entry, &ld, err);
	if (r == 0)
		r = resolve(sc, &ld, err);

	for (size_t i = 0; i < ld.n; i++) {
		free(ld.sects[i].name);
		for (int k = 0; k < KEY__COUNT; k++)
			free(ld.sects[i].value[k]);
		for (size_t m = 0; m < ld.sects[i].n_more_pools; m++)
			free(ld.sects[i].more_pools[m].value);
		free(ld.sects[i].more_pools);
		for (size_t c = 0; c < ld.sects[i].n_caps; c++) {
			free(ld.sects[i].caps[c].tenant);
			free(ld.sects[i].caps[c].value);
		}
		free(ld.sects[i].caps);
	}
	free(ld.sects);
	return r;
}

static void free_names(char **names, size_t n)
{
	if (!names)
		return;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void scenario_free(struct scenario *sc)
{
	free(sc->path);
	free_names(sc->resource_names, sc->n_resources);
	free_names(sc->pool_names, sc->n_pools);
	free_names(sc->tenant_names, sc->n_tenants);
	free(sc->capacity);
	free(sc->demand);
	free(sc->max_tasks);
	free(sc->weight);
	free(sc->eligible);
	free(sc->cap);
	free(sc->alloc);
	free(sc->policy);
	memset(sc, 0, sizeof(*sc));
}

void scenario_problem(const struct scenario *sc, struct fs_problem *p)
{
	*p = (struct fs_problem){
	    .n_tenants = sc->n_tenants,
	    .n_pools = sc->n_pools,
	    .n_resources = sc->n_resources,
	    .capacity = sc->capacity,
	    .demand = sc->demand,
	    .max_tasks = sc->max_tasks,
	    .weight = sc->weight,
	    .eligible = sc->eligible,
	    .tenant_names = (const char *const *)sc->tenant_names,
	    .pool_names = (const char *const *)sc->pool_names,
	    .resource_names = (const char *const *)sc->resource_names,
	};
}

static int find_name(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names && names[i] && !strcmp(names[i], name))
			return (int)i;
	return -1;
}

int scenario_pool_index(const struct scenario *sc, const char *name)
{
	return find_name(sc->pool_names, sc->n_pools, name);
}

int scenario_tenant_index(const struct scenario *sc, const char *name)
{
	return find_name(sc->tenant_names, sc->n_tenants, name);
}
