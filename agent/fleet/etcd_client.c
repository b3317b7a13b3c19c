/* SPDX-License-Identifier: MIT */
/* etcd v3 over the HTTP/JSON gateway with libcurl (etcd_client.h). */
#include "etcd_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

struct body {
	char *data;
	size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct body *b = user;
	size_t n = size * nmemb;
	char *d = realloc(b->data, b->len + n + 1);

	if (!d)
		return 0;
	memcpy(d + b->len, ptr, n);
	b->len += n;
	d[b->len] = '\0';
	b->data = d;
	return n;
}

static char *dup_opt(const char *s, bool *ok)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	*ok = *ok && d;
	return d;
}

int etcd_client_init(struct etcd_client *c, const struct etcd_options *opt)
{
	static bool global_done;
	bool ok = true;
	char *list, *save = NULL;

	memset(c, 0, sizeof(*c));
	if (!global_done) {
		/* Once per process, before any thread (fairshared has none). */
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		global_done = true;
	}
	if (!opt->endpoints || !*opt->endpoints) {
		snprintf(c->err, sizeof(c->err), "no etcd endpoints");
		return -EINVAL;
	}
	list = strdup(opt->endpoints);
	if (!list)
		return -ENOMEM;
	for (char *e = strtok_r(list, ", ", &save); e; e = strtok_r(NULL, ", ", &save)) {
		size_t n = strlen(e);

		if (strncmp(e, "http://", 7) && strncmp(e, "https://", 8)) {
			snprintf(c->err, sizeof(c->err),
				 "etcd endpoint '%s': expected http://HOST:PORT or https://...", e);
			free(list);
			etcd_client_free(c);
			return -EINVAL;
		}
		if (c->n_endpoints == ETCD_MAX_ENDPOINTS) {
			snprintf(c->err, sizeof(c->err), "more than %d etcd endpoints",
				 ETCD_MAX_ENDPOINTS);
			free(list);
			etcd_client_free(c);
			return -EINVAL;
		}
		while (n > 0 && e[n - 1] == '/')
			e[--n] = '\0';
		c->endpoint[c->n_endpoints] = strdup(e);
		ok = ok && c->endpoint[c->n_endpoints];
		c->n_endpoints++;
	}
	free(list);
	c->cacert = dup_opt(opt->cacert, &ok);
	c->cert = dup_opt(opt->cert, &ok);
	c->key = dup_opt(opt->key, &ok);
	c->user = dup_opt(opt->user, &ok);
	c->password = dup_opt(opt->password, &ok);
	c->timeout_ms = opt->timeout_ms > 0 ? opt->timeout_ms : 1000;
	c->curl = curl_easy_init();
	if (!ok || !c->curl || !c->n_endpoints) {
		if (!c->n_endpoints)
			snprintf(c->err, sizeof(c->err), "no etcd endpoints");
		etcd_client_free(c);
		return ok && c->curl ? -EINVAL : -ENOMEM;
	}
	return 0;
}

void etcd_client_free(struct etcd_client *c)
{
	for (size_t i = 0; i < c->n_endpoints; i++)
		free(c->endpoint[i]);
	free(c->cacert);
	free(c->cert);
	free(c->key);
	free(c->user);
	free(c->password);
	free(c->token);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	c->n_endpoints = 0;
	c->cacert = c->cert = c->key = c->user = c->password = c->token = NULL;
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* One POST to one endpoint; *body receives the answer (any HTTP status:
 * the gateway's errors are JSON too). */
static int post_one(struct etcd_client *c, const char *url, const char *json, bool with_token,
		    struct body *body)
{
	CURL *h = c->curl;
	struct curl_slist *hdr = NULL, *h2;
	char auth[1024];
	CURLcode cc;

	curl_easy_reset(h);
	hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (hdr && with_token && c->token) {
		snprintf(auth, sizeof(auth), "Authorization: %s", c->token);
		h2 = curl_slist_append(hdr, auth);
		if (h2)
			hdr = h2;
	}
	if (!hdr)
		return -ENOMEM;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (c->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
	if (c->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	cc = curl_easy_perform(h);
	curl_slist_free_all(hdr);
	c->requests++;
	c->bytes_sent += strlen(json);
	if (cc != CURLE_OK) {
		snprintf(c->err, sizeof(c->err), "%s: %s", url, curl_easy_strerror(cc));
		return curl_errno(cc);
	}
	c->bytes_received += body->len;
	if (!body->data) {
		snprintf(c->err, sizeof(c->err), "%s: empty answer", url);
		return -EPROTO;
	}
	return 0;
}

/* POST path on the current endpoint, failing over to the others in turn. */
static int post_any(struct etcd_client *c, const char *path, const char *json, bool with_token,
		    char **answer)
{
	int r = -EIO;

	*answer = NULL;
	for (size_t i = 0; i < c->n_endpoints; i++) {
		size_t e = (c->current + i) % c->n_endpoints;
		char url[512];
		struct body b = {0};

		snprintf(url, sizeof(url), "%s%s", c->endpoint[e], path);
		r = post_one(c, url, json, with_token, &b);
		if (r == 0) {
			c->current = e;
			*answer = b.data;
			return 0;
		}
		free(b.data);
	}
	return r;
}

static int authenticate(struct etcd_client *c)
{
	char *req = etcd_req_auth(c->user, c->password), *ans = NULL;
	int r;

	if (!req)
		return -ENOMEM;
	free(c->token);
	c->token = NULL;
	r = post_any(c, "/v3/auth/authenticate", req, false, &ans);
	if (r == 0)
		r = etcd_parse_auth(ans, &c->token, c->err, sizeof(c->err));
	free(req);
	free(ans);
	return r;
}

/*
 * A request with auth: authenticate first when a user is set and there is no
 * token yet, and once more when the token was refused (etcd expires them).
 * parse turns the answer into the result; it returns -EACCES for auth errors.
 */
typedef int (*parse_fn)(const char *ans, void *out, char *err, size_t errlen);

static int call(struct etcd_client *c, const char *path, char *req, parse_fn parse, void *out)
{
	int r = -ENOMEM;

	if (!req) {
		snprintf(c->err, sizeof(c->err), "out of memory building %s", path);
		return -ENOMEM;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		char *ans = NULL;

		if (c->user && !c->token) {
			r = authenticate(c);
			if (r < 0)
				break;
		}
		r = post_any(c, path, req, true, &ans);
		if (r == 0)
			r = parse(ans, out, c->err, sizeof(c->err));
		free(ans);
		if (r != -EACCES || !c->user)
			break;
		free(c->token);
		c->token = NULL;
	}
	free(req);
	return r;
}

static int parse_header_cb(const char *ans, void *out, char *err, size_t errlen)
{
	int64_t rev = 0, *dst = out;
	int r = etcd_parse_header(ans, &rev, err, errlen);

	if (dst)
		*dst = rev;
	return r;
}

int etcd_put(struct etcd_client *c, const char *key, const void *value, size_t len, int64_t lease,
	     int64_t *revision)
{
	return call(c, "/v3/kv/put", etcd_req_put(key, value, len, lease), parse_header_cb,
		    revision);
}

static int parse_range_cb(const char *ans, void *out, char *err, size_t errlen)
{
	return etcd_parse_range(ans, out, err, errlen);
}

int etcd_range(struct etcd_client *c, const char *key, bool prefix, int64_t revision,
	       struct etcd_kvs *out)
{
	memset(out, 0, sizeof(*out));
	return call(c, "/v3/kv/range", etcd_req_range(key, prefix, revision), parse_range_cb, out);
}

int etcd_range_local(struct etcd_client *c, const char *key, bool prefix, int64_t revision,
		     struct etcd_kvs *out)
{
	memset(out, 0, sizeof(*out));
	return call(c, "/v3/kv/range", etcd_req_range_local(key, prefix, revision), parse_range_cb,
		    out);
}

int etcd_delete(struct etcd_client *c, const char *key, bool prefix, int64_t *revision)
{
	return call(c, "/v3/kv/deleterange", etcd_req_delete(key, prefix), parse_header_cb,
		    revision);
}

struct lease_out {
	int64_t id, ttl;
};

static int parse_grant_cb(const char *ans, void *out, char *err, size_t errlen)
{
	struct lease_out *l = out;

	return etcd_parse_lease_grant(ans, &l->id, &l->ttl, err, errlen);
}

int etcd_lease_grant(struct etcd_client *c, int64_t ttl, int64_t *id)
{
	struct lease_out l = {0};
	int r = call(c, "/v3/lease/grant", etcd_req_lease_grant(ttl), parse_grant_cb, &l);

	*id = r == 0 ? l.id : 0;
	return r;
}

static int parse_keepalive_cb(const char *ans, void *out, char *err, size_t errlen)
{
	return etcd_parse_keepalive(ans, out, err, errlen);
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl)
{
	return call(c, "/v3/lease/keepalive", etcd_req_lease_id(id), parse_keepalive_cb, ttl);
}

int etcd_lease_revoke(struct etcd_client *c, int64_t id)
{
	return call(c, "/v3/lease/revoke", etcd_req_lease_id(id), parse_header_cb, NULL);
}

struct txn_out {
	bool succeeded;
	int64_t revision;
	struct etcd_kv *holder;
};

static int parse_txn_cb(const char *ans, void *out, char *err, size_t errlen)
{
	struct txn_out *t = out;

	return etcd_parse_txn(ans, &t->succeeded, &t->revision, t->holder, err, errlen);
}

int etcd_txn_put(struct etcd_client *c, const char *key, enum etcd_cmp_target target,
		 int64_t expect, const void *value, size_t len, int64_t lease, bool *succeeded,
		 int64_t *revision, struct etcd_kv *holder)
{
	return etcd_txn_put_if(c, key, target, expect, key, value, len, lease, succeeded, revision,
			       holder);
}

int etcd_txn_put_if(struct etcd_client *c, const char *cmp_key, enum etcd_cmp_target target,
		    int64_t expect, const char *key, const void *value, size_t len, int64_t lease,
		    bool *succeeded, int64_t *revision, struct etcd_kv *holder)
{
	struct txn_out t = {.holder = holder};
	int r = call(c, "/v3/kv/txn",
		     etcd_req_txn_put_if(cmp_key, target, expect, key, value, len, lease),
		     parse_txn_cb, &t);

	*succeeded = r == 0 && t.succeeded;
	if (revision)
		*revision = t.revision;
	return r;
}

int etcd_txn_ops(struct etcd_client *c, const char *cmp_key, enum etcd_cmp_target target,
		 int64_t expect, const struct etcd_op *ops, size_t n, bool *succeeded,
		 int64_t *revision)
{
	struct txn_out t = {0};
	int r = call(c, "/v3/kv/txn", etcd_req_txn_ops(cmp_key, target, expect, ops, n),
		     parse_txn_cb, &t);

	*succeeded = r == 0 && t.succeeded;
	if (revision)
		*revision = t.revision;
	return r;
}
