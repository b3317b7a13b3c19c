/* SPDX-License-Identifier: MIT */
/* etcd v3 gateway JSON (etcd_codec.h). */
#include "etcd_codec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *etcd_b64_encode(const void *data, size_t len)
{
	const unsigned char *in = data;
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int etcd_b64_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s), o = 0;
	char *buf;

	*out = NULL;
	*len = 0;
	if (n % 4)
		return -EINVAL;
	buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		int pad = 0;

		for (int j = 0; j < 4; j++) {
			if (s[i + j] == '=' && i + 4 == n && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			v[j] = pad ? -1 : b64_value(s[i + j]);
			if (v[j] < 0) {
				free(buf);
				return -EINVAL;
			}
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		buf[o++] = (char)(w >> 16);
		if (pad < 2)
			buf[o++] = (char)(w >> 8 & 255);
		if (pad < 1)
			buf[o++] = (char)(w & 255);
	}
	buf[o] = '\0';
	*out = buf;
	*len = o;
	return 0;
}

int etcd_prefix_end(const char *prefix, size_t len, char **end, size_t *end_len)
{
	char *e = malloc(len + 1);

	if (!e)
		return -ENOMEM;
	memcpy(e, prefix, len);
	for (size_t i = len; i-- > 0;) {
		if ((unsigned char)e[i] < 0xff) {
			e[i]++;
			e[i + 1] = '\0';
			*end = e;
			*end_len = i + 1;
			return 0;
		}
	}
	/* All 0xff (or empty): every key from prefix on, etcd's "\0". */
	e[0] = '\0';
	*end = e;
	*end_len = 1;
	return 0;
}

void etcd_kv_free(struct etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void etcd_kvs_free(struct etcd_kvs *kvs)
{
	for (size_t i = 0; i < kvs->n; i++)
		etcd_kv_free(&kvs->kv[i]);
	free(kvs->kv);
	memset(kvs, 0, sizeof(*kvs));
}

/* --- requests ---------------------------------------------------------------- */

static int add_b64(struct json_object *o, const char *name, const void *data, size_t len)
{
	char *e = etcd_b64_encode(data, len);

	if (!e)
		return -ENOMEM;
	json_object_object_add(o, name, json_object_new_string(e));
	free(e);
	return 0;
}

static void add_i64(struct json_object *o, const char *name, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	json_object_object_add(o, name, json_object_new_string(buf));
}

/* Serialises and releases o; NULL when building it failed (ok false). */
static char *finish(struct json_object *o, bool ok)
{
	char *s = NULL;

	if (o && ok)
		s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

static struct json_object *put_object(const char *key, const void *value, size_t value_len,
				      int64_t lease, bool *ok)
{
	struct json_object *o = json_object_new_object();

	*ok = o && add_b64(o, "key", key, strlen(key)) == 0 &&
	      add_b64(o, "value", value, value_len) == 0;
	if (o && lease)
		add_i64(o, "lease", lease);
	return o;
}

char *etcd_req_put(const char *key, const void *value, size_t value_len, int64_t lease)
{
	bool ok;
	struct json_object *o = put_object(key, value, value_len, lease, &ok);

	return finish(o, ok);
}

static struct json_object *key_object(const char *key, bool prefix, bool *ok)
{
	struct json_object *o = json_object_new_object();
	size_t len = strlen(key);

	*ok = o && add_b64(o, "key", key, len) == 0;
	if (*ok && prefix) {
		char *end;
		size_t end_len;

		*ok = etcd_prefix_end(key, len, &end, &end_len) == 0;
		if (*ok) {
			*ok = add_b64(o, "range_end", end, end_len) == 0;
			free(end);
		}
	}
	return o;
}

char *etcd_req_range(const char *key, bool prefix, int64_t revision)
{
	bool ok;
	struct json_object *o = key_object(key, prefix, &ok);

	if (ok && revision > 0)
		add_i64(o, "revision", revision);
	return finish(o, ok);
}

char *etcd_req_range_local(const char *key, bool prefix, int64_t revision)
{
	bool ok;
	struct json_object *o = key_object(key, prefix, &ok);

	if (ok && revision > 0)
		add_i64(o, "revision", revision);
	if (ok)
		json_object_object_add(o, "serializable", json_object_new_boolean(true));
	return finish(o, ok);
}

char *etcd_req_delete(const char *key, bool prefix)
{
	bool ok;
	struct json_object *o = key_object(key, prefix, &ok);

	return finish(o, ok);
}

char *etcd_req_lease_grant(int64_t ttl)
{
	struct json_object *o = json_object_new_object();

	if (o)
		add_i64(o, "TTL", ttl);
	return finish(o, o != NULL);
}

char *etcd_req_lease_id(int64_t id)
{
	struct json_object *o = json_object_new_object();

	if (o)
		add_i64(o, "ID", id);
	return finish(o, o != NULL);
}

char *etcd_req_auth(const char *user, const char *password)
{
	struct json_object *o = json_object_new_object();

	if (o) {
		json_object_object_add(o, "name", json_object_new_string(user));
		json_object_object_add(o, "password", json_object_new_string(password));
	}
	return finish(o, o != NULL);
}

/* A txn's one comparison (cmp_key's create or mod revision equals expect)
 * into o's "compare"; cmp and cmps are owned by o from here. */
static bool add_compare(struct json_object *o, struct json_object *cmps, struct json_object *cmp,
			const char *cmp_key, enum etcd_cmp_target target, int64_t expect)
{
	bool ok = add_b64(cmp, "key", cmp_key, strlen(cmp_key)) == 0;

	json_object_object_add(
	    cmp, "target", json_object_new_string(target == ETCD_CMP_CREATE ? "CREATE" : "MOD"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	add_i64(cmp, target == ETCD_CMP_CREATE ? "create_revision" : "mod_revision", expect);
	json_object_array_add(cmps, cmp);
	json_object_object_add(o, "compare", cmps);
	return ok;
}

char *etcd_req_txn_put(const char *key, enum etcd_cmp_target target, int64_t expect,
		       const void *value, size_t value_len, int64_t lease)
{
	return etcd_req_txn_put_if(key, target, expect, key, value, value_len, lease);
}

char *etcd_req_txn_put_if(const char *cmp_key, enum etcd_cmp_target target, int64_t expect,
			  const char *key, const void *value, size_t value_len, int64_t lease)
{
	struct json_object *o = json_object_new_object();
	struct json_object *cmp = json_object_new_object(), *cmps = json_object_new_array();
	struct json_object *succ = json_object_new_array(), *fail = json_object_new_array();
	struct json_object *op_put = json_object_new_object(), *op_get = json_object_new_object();
	struct json_object *put, *get;
	bool ok = o && cmp && cmps && succ && fail && op_put && op_get;
	bool ok2 = false, ok3 = false;

	if (!ok) {
		json_object_put(cmp);
		json_object_put(cmps);
		json_object_put(succ);
		json_object_put(fail);
		json_object_put(op_put);
		json_object_put(op_get);
		return finish(o, false);
	}
	ok = add_compare(o, cmps, cmp, cmp_key, target, expect);

	put = put_object(key, value, value_len, lease, &ok2);
	json_object_object_add(op_put, "request_put", put);
	json_object_array_add(succ, op_put);
	json_object_object_add(o, "success", succ);

	get = key_object(key, false, &ok3);
	json_object_object_add(op_get, "request_range", get);
	json_object_array_add(fail, op_get);
	json_object_object_add(o, "failure", fail);
	return finish(o, ok && ok2 && ok3);
}

char *etcd_req_txn_ops(const char *cmp_key, enum etcd_cmp_target target, int64_t expect,
		       const struct etcd_op *ops, size_t n)
{
	struct json_object *o = json_object_new_object(), *cmp = json_object_new_object();
	struct json_object *cmps = json_object_new_array(), *succ = json_object_new_array();
	bool ok = o && cmp && cmps && succ;

	if (!ok) {
		json_object_put(cmp);
		json_object_put(cmps);
		json_object_put(succ);
		return finish(o, false);
	}
	ok = add_compare(o, cmps, cmp, cmp_key, target, expect);
	for (size_t i = 0; i < n && ok; i++) {
		struct json_object *op = json_object_new_object(), *req;
		bool ok2 = false;

		if (ops[i].del)
			req = key_object(ops[i].key, false, &ok2);
		else
			req = put_object(ops[i].key, ops[i].value, ops[i].len, ops[i].lease, &ok2);
		ok = op && ok2;
		json_object_object_add(op, ops[i].del ? "request_delete_range" : "request_put",
				       req);
		json_object_array_add(succ, op);
	}
	json_object_object_add(o, "success", succ);
	return finish(o, ok);
}

/* --- responses --------------------------------------------------------------- */

static int seterr(char *err, size_t errlen, int code, const char *fmt, const char *arg)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, arg);
	return code;
}

/* The gateway's error object, mapped to an errno. */
static int gateway_error(struct json_object *root, char *err, size_t errlen)
{
	struct json_object *e, *m;
	const char *msg;

	if (!json_object_object_get_ex(root, "error", &e))
		return 0;
	/* Streaming calls (keepalive) wrap it: {"error": {"message": ...}}. */
	if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "message", &m))
		e = m;
	else if (json_object_object_get_ex(root, "message", &m))
		e = m;
	msg = json_object_get_string(e);
	if (!msg)
		msg = "(no message)";
	if (strstr(msg, "lease not found"))
		return seterr(err, errlen, -ENOENT, "%s", msg);
	if (strstr(msg, "compacted"))
		return seterr(err, errlen, -ESTALE, "%s", msg);
	if (strstr(msg, "auth") || strstr(msg, "user name") || strstr(msg, "permission denied"))
		return seterr(err, errlen, -EACCES, "%s", msg);
	return seterr(err, errlen, -EIO, "%s", msg);
}

static int parse_root(const char *body, struct json_object **root, char *err, size_t errlen)
{
	int r;

	*root = json_tokener_parse(body);
	if (!*root || !json_object_is_type(*root, json_type_object)) {
		json_object_put(*root);
		*root = NULL;
		return seterr(err, errlen, -EPROTO, "not a JSON object: %.80s", body);
	}
	r = gateway_error(*root, err, errlen);
	if (r < 0) {
		json_object_put(*root);
		*root = NULL;
	}
	return r;
}

/* An int64 sent as a string (or, defensively, a number); absent: 0. */
static int get_i64(struct json_object *o, const char *name, int64_t *out)
{
	struct json_object *v;
	const char *s;
	char *end;

	*out = 0;
	if (!o || !json_object_object_get_ex(o, name, &v))
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return 0;
	}
	s = json_object_get_string(v);
	if (!s || !*s)
		return -EPROTO;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return *end || errno ? -EPROTO : 0;
}

static int header_revision(struct json_object *o, int64_t *rev, char *err, size_t errlen)
{
	struct json_object *h;

	if (!json_object_object_get_ex(o, "header", &h))
		return seterr(err, errlen, -EPROTO, "%s", "response without a header");
	if (get_i64(h, "revision", rev) < 0)
		return seterr(err, errlen, -EPROTO, "%s", "bad header revision");
	return 0;
}

int etcd_parse_header(const char *body, int64_t *revision, char *err, size_t errlen)
{
	struct json_object *root;
	int r = parse_root(body, &root, err, errlen);

	if (r == 0)
		r = header_revision(root, revision, err, errlen);
	json_object_put(root);
	return r;
}

static int decode_field(struct json_object *o, const char *name, char **out, size_t *len)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v)) {
		*out = strdup("");
		*len = 0;
		return *out ? 0 : -ENOMEM;
	}
	return etcd_b64_decode(json_object_get_string(v), out, len);
}

static int parse_kv(struct json_object *o, struct etcd_kv *kv)
{
	int r;

	memset(kv, 0, sizeof(*kv));
	r = decode_field(o, "key", &kv->key, &kv->key_len);
	if (r == 0)
		r = decode_field(o, "value", &kv->value, &kv->value_len);
	if (r == 0 &&
	    (get_i64(o, "create_revision", &kv->create_revision) < 0 ||
	     get_i64(o, "mod_revision", &kv->mod_revision) < 0 ||
	     get_i64(o, "version", &kv->version) < 0 || get_i64(o, "lease", &kv->lease) < 0))
		r = -EPROTO;
	if (r < 0)
		etcd_kv_free(kv);
	return r == -EINVAL ? -EPROTO : r;
}

/* A RangeResponse object (top level, or inside a txn's response_range). */
static int range_object(struct json_object *o, struct etcd_kvs *out, char *err, size_t errlen)
{
	struct json_object *kvs, *more;
	size_t n;
	int r = 0;

	if (!json_object_object_get_ex(o, "kvs", &kvs))
		return 0;
	if (!json_object_is_type(kvs, json_type_array))
		return seterr(err, errlen, -EPROTO, "%s", "kvs is not an array");
	n = json_object_array_length(kvs);
	out->kv = calloc(n ? n : 1, sizeof(*out->kv));
	if (!out->kv)
		return seterr(err, errlen, -ENOMEM, "%s", "out of memory");
	for (size_t i = 0; i < n && r == 0; i++) {
		r = parse_kv(json_object_array_get_idx(kvs, i), &out->kv[i]);
		if (r == 0)
			out->n++;
	}
	if (r < 0)
		return seterr(err, errlen, r, "%s", "bad key-value in a range response");
	out->more = json_object_object_get_ex(o, "more", &more) && json_object_get_boolean(more);
	return 0;
}

int etcd_parse_range(const char *body, struct etcd_kvs *out, char *err, size_t errlen)
{
	struct json_object *root;
	int r;

	memset(out, 0, sizeof(*out));
	r = parse_root(body, &root, err, errlen);
	if (r == 0)
		r = header_revision(root, &out->revision, err, errlen);
	if (r == 0)
		r = range_object(root, out, err, errlen);
	if (r < 0)
		etcd_kvs_free(out);
	json_object_put(root);
	return r;
}

int etcd_parse_lease_grant(const char *body, int64_t *id, int64_t *ttl, char *err, size_t errlen)
{
	struct json_object *root;
	int r = parse_root(body, &root, err, errlen);

	if (r == 0 && (get_i64(root, "ID", id) < 0 || get_i64(root, "TTL", ttl) < 0 || *id == 0))
		r = seterr(err, errlen, -EPROTO, "%s", "lease grant without an ID");
	json_object_put(root);
	return r;
}

int etcd_parse_keepalive(const char *body, int64_t *ttl, char *err, size_t errlen)
{
	struct json_object *root, *res;
	int r = parse_root(body, &root, err, errlen);

	if (r == 0 && !json_object_object_get_ex(root, "result", &res))
		r = seterr(err, errlen, -EPROTO, "%s", "keepalive without a result");
	if (r == 0 && get_i64(res, "TTL", ttl) < 0)
		r = seterr(err, errlen, -EPROTO, "%s", "bad keepalive TTL");
	json_object_put(root);
	return r;
}

int etcd_parse_txn(const char *body, bool *succeeded, int64_t *revision, struct etcd_kv *holder,
		   char *err, size_t errlen)
{
	struct json_object *root, *v, *resp, *rr;
	int r = parse_root(body, &root, err, errlen);

	if (holder)
		memset(holder, 0, sizeof(*holder));
	if (r == 0)
		r = header_revision(root, revision, err, errlen);
	if (r < 0)
		goto out;
	*succeeded = json_object_object_get_ex(root, "succeeded", &v) && json_object_get_boolean(v);
	if (*succeeded || !holder)
		goto out;
	/* The failure branch's range: the key as it is. */
	if (json_object_object_get_ex(root, "responses", &resp) &&
	    json_object_is_type(resp, json_type_array) && json_object_array_length(resp) > 0 &&
	    json_object_object_get_ex(json_object_array_get_idx(resp, 0), "response_range", &rr)) {
		struct etcd_kvs kvs = {0};

		r = range_object(rr, &kvs, err, errlen);
		if (r == 0 && kvs.n > 0) {
			*holder = kvs.kv[0];
			memset(&kvs.kv[0], 0, sizeof(kvs.kv[0]));
		}
		etcd_kvs_free(&kvs);
	}
out:
	json_object_put(root);
	return r;
}

int etcd_parse_auth(const char *body, char **token, char *err, size_t errlen)
{
	struct json_object *root, *t;
	int r = parse_root(body, &root, err, errlen);

	*token = NULL;
	if (r == 0 && !json_object_object_get_ex(root, "token", &t))
		r = seterr(err, errlen, -EPROTO, "%s", "authenticate without a token");
	if (r == 0) {
		*token = strdup(json_object_get_string(t));
		if (!*token)
			r = -ENOMEM;
	}
	json_object_put(root);
	return r;
}
