/* SPDX-License-Identifier: MIT */
/* [fleet] of fairshare.conf (fleet_conf.h). */
#include "fleet_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_conf.h"
#include "units.h"

static const char *const key_names[FLEET_KEY__COUNT] = {
    [FLEET_KEY_ENDPOINTS] = "endpoints",
    [FLEET_KEY_PREFIX] = "prefix",
    [FLEET_KEY_HOST] = "host",
    [FLEET_KEY_LEASE_TTL] = "lease_ttl",
    [FLEET_KEY_MAX_AGE] = "max_age",
    [FLEET_KEY_TIMEOUT] = "timeout",
    [FLEET_KEY_CACERT] = "cacert",
    [FLEET_KEY_CERT] = "cert",
    [FLEET_KEY_KEY] = "key",
    [FLEET_KEY_USER] = "user",
    [FLEET_KEY_PASSWORD_FILE] = "password_file",
};

int fs_fleet_raw_key(struct fs_fleet_raw *raw, const char *path, const char *name,
		     const char *value, int line, struct conf_error *err)
{
	for (int k = 0; k < FLEET_KEY__COUNT; k++) {
		if (strcmp(name, key_names[k]) != 0)
			continue;
		if (raw->value[k])
			return conf_error_set(err, -EINVAL, path, line,
					      "duplicate key '%s' (first set on line %d)", name,
					      raw->value_line[k]);
		if (!*value)
			return conf_error_set(err, -EINVAL, path, line, "empty value for '%s'",
					      name);
		raw->value[k] = strdup(value);
		if (!raw->value[k])
			return conf_error_set(err, -ENOMEM, path, line, "out of memory");
		raw->value_line[k] = line;
		return 0;
	}
	return conf_error_set(err, -EINVAL, path, line, "unknown key '%s' in [fleet]", name);
}

void fs_fleet_raw_free(struct fs_fleet_raw *raw)
{
	for (int k = 0; k < FLEET_KEY__COUNT; k++)
		free(raw->value[k]);
	memset(raw, 0, sizeof(*raw));
}

static bool valid_host(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < FS_FLEET_HOST_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int copy_text(const struct fs_fleet_raw *raw, const char *path, enum fs_fleet_key k,
		     char *out, size_t len, bool absolute, struct conf_error *err)
{
	const char *v = raw->value[k];

	out[0] = '\0';
	if (!v)
		return 0;
	if (absolute && v[0] != '/')
		return conf_error_set(err, -EINVAL, path, raw->value_line[k],
				      "%s must be an absolute path", key_names[k]);
	if (strlen(v) >= len)
		return conf_error_set(err, -ENAMETOOLONG, path, raw->value_line[k],
				      "%s is too long", key_names[k]);
	snprintf(out, len, "%s", v);
	return 0;
}

static int duration(const struct fs_fleet_raw *raw, const char *path, enum fs_fleet_key k,
		    uint64_t *out, struct conf_error *err)
{
	if (!raw->value[k])
		return 0;
	if (fs_parse_duration(raw->value[k], out) < 0 || *out == 0)
		return conf_error_set(err, -EINVAL, path, raw->value_line[k],
				      "bad %s '%s' (e.g. 5s, 500ms)", key_names[k], raw->value[k]);
	return 0;
}

static int read_password(const struct fs_fleet_raw *raw, const char *path,
			 struct fs_conf_fleet *out, struct conf_error *err)
{
	const char *file = raw->value[FLEET_KEY_PASSWORD_FILE];
	int line = raw->value_line[FLEET_KEY_PASSWORD_FILE];
	FILE *f;
	size_t n;

	if (!file)
		return 0;
	if (!out->user[0])
		return conf_error_set(err, -EINVAL, path, line, "password_file needs user");
	f = fopen(file, "re");
	if (!f)
		return conf_error_set(err, -errno, path, line, "cannot read password_file %s: %s",
				      file, strerror(errno));
	n = fread(out->password, 1, sizeof(out->password) - 1, f);
	fclose(f);
	out->password[n] = '\0';
	out->password[strcspn(out->password, "\r\n")] = '\0';
	return 0;
}

int fs_fleet_resolve(const struct fs_fleet_raw *raw, const char *path, uint64_t interval_us,
		     bool policy_is_psdsf, struct fs_conf_fleet *out, struct conf_error *err)
{
	const char *prefix =
	    raw->value[FLEET_KEY_PREFIX] ? raw->value[FLEET_KEY_PREFIX] : "/fairshare/";
	uint64_t ttl_us = 5000000;
	int r;

	memset(out, 0, sizeof(*out));
	if (!raw->seen)
		return 0;
	out->line = raw->line;
	if (!raw->value[FLEET_KEY_ENDPOINTS])
		return conf_error_set(err, -EINVAL, path, raw->line,
				      "[fleet] needs endpoints = http://HOST:PORT, ...");
	if (!policy_is_psdsf)
		return conf_error_set(err, -EINVAL, path, raw->line,
				      "[fleet] needs policy = psdsf: the fleet shares by PS-DSF "
				      "across hosts, and njc is defined for one host");
	r = copy_text(raw, path, FLEET_KEY_ENDPOINTS, out->endpoints, sizeof(out->endpoints), false,
		      err);
	if (r < 0)
		return r;
	if (strlen(prefix) + 2 > sizeof(out->prefix) || prefix[0] != '/')
		return conf_error_set(err, -EINVAL, path, raw->value_line[FLEET_KEY_PREFIX],
				      "prefix must start with '/' and be at most %zu characters",
				      sizeof(out->prefix) - 2);
	snprintf(out->prefix, sizeof(out->prefix), "%s%s", prefix,
		 prefix[strlen(prefix) - 1] == '/' ? "" : "/");
	if (raw->value[FLEET_KEY_HOST]) {
		snprintf(out->host, sizeof(out->host), "%s", raw->value[FLEET_KEY_HOST]);
	} else if (gethostname(out->host, sizeof(out->host)) < 0) {
		out->host[0] = '\0';
	}
	out->host[sizeof(out->host) - 1] = '\0';
	if (!valid_host(out->host))
		return conf_error_set(
		    err, -EINVAL, path,
		    raw->value[FLEET_KEY_HOST] ? raw->value_line[FLEET_KEY_HOST] : raw->line,
		    "bad fleet host name '%s' (letters, digits, '_', '.', '-')", out->host);
	r = duration(raw, path, FLEET_KEY_LEASE_TTL, &ttl_us, err);
	if (r < 0)
		return r;
	if (ttl_us < 2000000 || ttl_us % 1000000)
		return conf_error_set(err, -EINVAL, path, raw->value_line[FLEET_KEY_LEASE_TTL],
				      "lease_ttl must be whole seconds, at least 2s (etcd leases "
				      "count in seconds)");
	out->lease_ttl_s = ttl_us / 1000000;
	out->max_age_us = 2 * interval_us;
	out->interval_us = interval_us;
	r = duration(raw, path, FLEET_KEY_MAX_AGE, &out->max_age_us, err);
	if (r < 0)
		return r;
	out->timeout_us = interval_us / 2 < 1000000 ? interval_us / 2 : 1000000;
	r = duration(raw, path, FLEET_KEY_TIMEOUT, &out->timeout_us, err);
	if (r == 0)
		r = copy_text(raw, path, FLEET_KEY_CACERT, out->cacert, sizeof(out->cacert), true,
			      err);
	if (r == 0)
		r = copy_text(raw, path, FLEET_KEY_CERT, out->cert, sizeof(out->cert), true, err);
	if (r == 0)
		r = copy_text(raw, path, FLEET_KEY_KEY, out->key, sizeof(out->key), true, err);
	if (r == 0)
		r = copy_text(raw, path, FLEET_KEY_USER, out->user, sizeof(out->user), false, err);
	if (r == 0)
		r = read_password(raw, path, out, err);
	if (r < 0)
		return r;
	out->enabled = true;
	return 0;
}

struct fleet_read {
	struct fs_fleet_raw raw;
	const char *path;
	bool in_fleet;
};

static int fleet_only(void *user, const char *section, const char *name, const char *value,
		      int line, struct conf_error *err)
{
	struct fleet_read *fr = user;

	if (!name) {
		fr->in_fleet = !strcmp(section, "fleet");
		if (fr->in_fleet && !fr->raw.seen) {
			fr->raw.seen = true;
			fr->raw.line = line;
		}
		return 0;
	}
	return fr->in_fleet ? fs_fleet_raw_key(&fr->raw, fr->path, name, value, line, err) : 0;
}

int fs_fleet_conf_read(const char *path, struct fs_conf_fleet *out, struct conf_error *err)
{
	struct fleet_read fr = {.path = path};
	int r = ini_limits_parse(path, fleet_only, &fr, err);

	memset(out, 0, sizeof(*out));
	if (r == 0 && !fr.raw.seen)
		r = conf_error_set(err, -ENOENT, path, 0, "no [fleet] section");
	if (r == 0)
		r = fs_fleet_resolve(&fr.raw, path, 1000000, true, out, err);
	fs_fleet_raw_free(&fr.raw);
	return r;
}

struct weights_read {
	const char *path;
	int (*fn)(void *ctx, const char *name, bool is_template, double weight);
	void *ctx;
	char name[128];
	bool is_template, open, has_weight;
	int line;
};

/* The section before this one: reported with weight 1 unless it had one. */
static int weights_flush(struct weights_read *wr)
{
	int r = 0;

	if (wr->open && !wr->has_weight)
		r = wr->fn(wr->ctx, wr->name, wr->is_template, 1);
	wr->open = false;
	return r;
}

static int weights_key(void *user, const char *section, const char *name, const char *value,
		       int line, struct conf_error *err)
{
	struct weights_read *wr = user;
	double w;
	int r;

	if (!name) {
		r = weights_flush(wr);
		if (r < 0)
			return conf_error_set(err, r, wr->path, wr->line, "cannot set weight of %s",
					      wr->name);
		wr->is_template = !strncmp(section, "template.", 9);
		wr->open = wr->is_template || !strncmp(section, "tenant.", 7);
		wr->has_weight = false;
		wr->line = line;
		snprintf(wr->name, sizeof(wr->name), "%s", section + (wr->is_template ? 9 : 7));
		return 0;
	}
	if (!wr->open || strcmp(name, "weight"))
		return 0;
	if (fs_parse_number(value, &w) < 0 || !fs_conf_weight_ok(w))
		return conf_error_set(err, -EINVAL, wr->path, line,
				      "bad weight '%s' (a number from %g to %g)", value,
				      FS_CONF_WEIGHT_MIN, FS_CONF_WEIGHT_MAX);
	wr->has_weight = true;
	r = wr->fn(wr->ctx, wr->name, wr->is_template, w);
	return r < 0 ? conf_error_set(err, r, wr->path, line, "cannot set weight of %s: %s",
				      wr->name, strerror(-r))
		     : 0;
}

int fs_fleet_weights_read(const char *path,
			  int (*fn)(void *ctx, const char *name, bool is_template, double weight),
			  void *ctx, struct conf_error *err)
{
	struct weights_read wr = {.path = path, .fn = fn, .ctx = ctx};
	int r = ini_limits_parse(path, weights_key, &wr, err);

	if (r == 0 && (r = weights_flush(&wr)) < 0)
		conf_error_set(err, r, path, wr.line, "cannot set weight of %s: %s", wr.name,
			       strerror(-r));
	return r;
}
