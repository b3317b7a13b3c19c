/* SPDX-License-Identifier: MIT */
/*
 * The etcd gateway codec (agent/fleet/etcd_codec.h): base64, prefix range
 * ends, request bodies, and responses as etcd 3.4's gateway sends them
 * (captured from a real etcd 3.4.23), errors included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "etcd_codec.h"

static void b64_roundtrip(void **state)
{
	(void)state;
	static const struct {
		const char *plain, *enc;
	} cases[] = {
	    {"", ""},
	    {"f", "Zg=="},
	    {"fo", "Zm8="},
	    {"foo", "Zm9v"},
	    {"foob", "Zm9vYg=="},
	    {"/fairshare/hosts/h1", "L2ZhaXJzaGFyZS9ob3N0cy9oMQ=="},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = etcd_b64_encode(cases[i].plain, strlen(cases[i].plain)), *d;
		size_t len;

		assert_string_equal(e, cases[i].enc);
		assert_int_equal(etcd_b64_decode(e, &d, &len), 0);
		assert_int_equal(len, strlen(cases[i].plain));
		assert_memory_equal(d, cases[i].plain, len);
		free(e);
		free(d);
	}
	/* Every byte value survives. */
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	char *e = etcd_b64_encode(all, sizeof(all)), *d;
	size_t len;
	assert_int_equal(etcd_b64_decode(e, &d, &len), 0);
	assert_int_equal(len, 256);
	assert_memory_equal(d, all, 256);
	free(e);
	free(d);
}

static void b64_bad(void **state)
{
	(void)state;
	const char *bad[] = {"Zm9", "Zm9v!", "Z===", "Zg=a", "=Zg=", "Zm9v Zm9v"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *d = (char *)1;
		size_t len;

		assert_int_equal(etcd_b64_decode(bad[i], &d, &len), -EINVAL);
		assert_null(d);
	}
}

static void prefix_end(void **state)
{
	(void)state;
	char *e;
	size_t n;

	assert_int_equal(etcd_prefix_end("/fs/", 4, &e, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(e, "/fs0", 4);
	free(e);
	assert_int_equal(etcd_prefix_end("a\xff\xff", 3, &e, &n), 0);
	assert_int_equal(n, 1);
	assert_memory_equal(e, "b", 1);
	free(e);
	assert_int_equal(etcd_prefix_end("\xff", 1, &e, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0], 0);
	free(e);
}

/* The request as JSON, and one field of it. */
static const char *field(struct json_object *o, const char *path)
{
	char buf[128], *save = NULL;
	struct json_object *cur = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(cur, json_type_array))
			cur = json_object_array_get_idx(cur, (size_t)atoi(p));
		else if (!json_object_object_get_ex(cur, p, &cur))
			return NULL;
	}
	return json_object_get_string(cur);
}

static void requests(void **state)
{
	(void)state;
	char *s = etcd_req_put("foo", "bar", 3, 42);
	struct json_object *o = json_tokener_parse(s);

	assert_string_equal(field(o, "key"), "Zm9v");
	assert_string_equal(field(o, "value"), "YmFy");
	assert_string_equal(field(o, "lease"), "42"); /* int64 as a string */
	json_object_put(o);
	free(s);

	s = etcd_req_put("k", "", 0, 0);
	o = json_tokener_parse(s);
	assert_string_equal(field(o, "value"), "");
	assert_null(field(o, "lease"));
	json_object_put(o);
	free(s);

	s = etcd_req_range("/fs/", true, 17);
	o = json_tokener_parse(s);
	assert_string_equal(field(o, "key"), "L2ZzLw==");
	assert_string_equal(field(o, "range_end"), "L2ZzMA=="); /* "/fs0" */
	assert_string_equal(field(o, "revision"), "17");
	json_object_put(o);
	free(s);

	s = etcd_req_range("one", false, 0);
	o = json_tokener_parse(s);
	assert_null(field(o, "range_end"));
	assert_null(field(o, "revision"));
	json_object_put(o);
	free(s);

	s = etcd_req_txn_put("leader", ETCD_CMP_CREATE, 0, "h1", 2, 7);
	o = json_tokener_parse(s);
	assert_string_equal(field(o, "compare.0.target"), "CREATE");
	assert_string_equal(field(o, "compare.0.create_revision"), "0");
	assert_string_equal(field(o, "compare.0.result"), "EQUAL");
	assert_string_equal(field(o, "success.0.request_put.value"), "aDE=");
	assert_string_equal(field(o, "success.0.request_put.lease"), "7");
	assert_string_equal(field(o, "failure.0.request_range.key"), "bGVhZGVy");
	json_object_put(o);
	free(s);

	s = etcd_req_txn_put("alloc", ETCD_CMP_MOD, 12, "x", 1, 0);
	o = json_tokener_parse(s);
	assert_string_equal(field(o, "compare.0.target"), "MOD");
	assert_string_equal(field(o, "compare.0.mod_revision"), "12");
	json_object_put(o);
	free(s);

	{
		const struct etcd_op ops[] = {
		    {.key = "gone", .del = true},
		    {.key = "k", .value = "v", .len = 1, .lease = 9},
		};

		s = etcd_req_txn_ops("leader", ETCD_CMP_CREATE, 5, ops, 2);
		o = json_tokener_parse(s);
		assert_string_equal(field(o, "compare.0.create_revision"), "5");
		assert_string_equal(field(o, "success.0.request_delete_range.key"), "Z29uZQ==");
		assert_null(field(o, "success.0.request_delete_range.range_end"));
		assert_string_equal(field(o, "success.1.request_put.value"), "dg==");
		assert_string_equal(field(o, "success.1.request_put.lease"), "9");
		assert_null(field(o, "failure"));
		json_object_put(o);
		free(s);
	}
	s = etcd_req_range_local("one", false, 0);
	o = json_tokener_parse(s);
	assert_string_equal(field(o, "serializable"), "true");
	json_object_put(o);
	free(s);

	s = etcd_req_lease_grant(6);
	assert_string_equal(s, "{\"TTL\":\"6\"}");
	free(s);
	s = etcd_req_lease_id(4111120230400464138);
	assert_string_equal(s, "{\"ID\":\"4111120230400464138\"}");
	free(s);
}

#define HDR                                                                                        \
	"\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":"                       \
	"\"13668033151171901709\",\"revision\":\"3\",\"raft_term\":\"2\"}"

static void parse_range(void **state)
{
	(void)state;
	struct etcd_kvs kvs;
	char err[256];

	assert_int_equal(
	    etcd_parse_range("{" HDR ",\"kvs\":[{\"key\":\"bGVhZGVy\",\"create_revision\":\"3\","
			     "\"mod_revision\":\"3\",\"version\":\"1\",\"value\":\"aDE=\","
			     "\"lease\":\"4111120230400464138\"}],\"count\":\"1\"}",
			     &kvs, err, sizeof(err)),
	    0);
	assert_int_equal(kvs.revision, 3);
	assert_int_equal(kvs.n, 1);
	assert_string_equal(kvs.kv[0].key, "leader");
	assert_string_equal(kvs.kv[0].value, "h1");
	assert_int_equal(kvs.kv[0].create_revision, 3);
	assert_int_equal(kvs.kv[0].lease, 4111120230400464138);
	etcd_kvs_free(&kvs);

	/* Nothing found: no "kvs" at all. */
	assert_int_equal(etcd_parse_range("{" HDR "}", &kvs, err, sizeof(err)), 0);
	assert_int_equal(kvs.n, 0);
	assert_int_equal(kvs.revision, 3);
	etcd_kvs_free(&kvs);

	/* Gateway errors. */
	assert_int_equal(etcd_parse_range("{\"error\":\"etcdserver: mvcc: required revision has "
					  "been compacted\",\"message\":\"etcdserver: mvcc: "
					  "required revision has been compacted\",\"code\":11}",
					  &kvs, err, sizeof(err)),
			 -ESTALE);
	assert_non_null(strstr(err, "compacted"));
	assert_int_equal(etcd_parse_range("{\"error\":\"illegal base64 data at input byte 0\","
					  "\"code\":3}",
					  &kvs, err, sizeof(err)),
			 -EIO);
	assert_int_equal(etcd_parse_range("<html>", &kvs, err, sizeof(err)), -EPROTO);
	assert_int_equal(etcd_parse_range("{}", &kvs, err, sizeof(err)), -EPROTO); /* no header */
	assert_int_equal(
	    etcd_parse_range("{" HDR ",\"kvs\":[{\"key\":\"!!\"}]}", &kvs, err, sizeof(err)),
	    -EPROTO);
}

static void parse_lease(void **state)
{
	(void)state;
	int64_t id, ttl;
	char err[256];

	assert_int_equal(etcd_parse_lease_grant("{" HDR ",\"ID\":\"4111120230400464135\","
						"\"TTL\":\"5\"}",
						&id, &ttl, err, sizeof(err)),
			 0);
	assert_int_equal(id, 4111120230400464135);
	assert_int_equal(ttl, 5);
	assert_int_equal(etcd_parse_keepalive("{\"result\":{" HDR ",\"ID\":\"41\",\"TTL\":\"5\"}}",
					      &ttl, err, sizeof(err)),
			 0);
	assert_int_equal(ttl, 5);
	/* An expired lease: the result has no TTL. */
	assert_int_equal(
	    etcd_parse_keepalive("{\"result\":{" HDR ",\"ID\":\"123\"}}", &ttl, err, sizeof(err)),
	    0);
	assert_int_equal(ttl, 0);
	assert_int_equal(etcd_parse_keepalive("{\"error\":{\"grpc_code\":5,\"http_code\":404,"
					      "\"message\":\"etcdserver: requested lease not "
					      "found\"}}",
					      &ttl, err, sizeof(err)),
			 -ENOENT);
}

static void parse_txn(void **state)
{
	(void)state;
	struct etcd_kv holder;
	bool ok;
	int64_t rev;
	char err[256];

	assert_int_equal(etcd_parse_txn("{" HDR ",\"succeeded\":true,\"responses\":[{"
					"\"response_put\":{\"header\":{\"revision\":\"3\"}}}]}",
					&ok, &rev, &holder, err, sizeof(err)),
			 0);
	assert_true(ok);
	assert_int_equal(rev, 3);
	assert_null(holder.key);
	/* A failed compare: no "succeeded", the failure branch's range. */
	assert_int_equal(etcd_parse_txn("{" HDR ",\"responses\":[{\"response_range\":{\"header\":"
					"{\"revision\":\"3\"},\"kvs\":[{\"key\":\"bGVhZGVy\","
					"\"create_revision\":\"3\",\"mod_revision\":\"3\","
					"\"version\":\"1\",\"value\":\"aDE=\",\"lease\":\"9\"}],"
					"\"count\":\"1\"}}]}",
					&ok, &rev, &holder, err, sizeof(err)),
			 0);
	assert_false(ok);
	assert_string_equal(holder.value, "h1");
	assert_int_equal(holder.lease, 9);
	etcd_kv_free(&holder);
}

static void parse_auth(void **state)
{
	(void)state;
	char *tok, err[256];

	assert_int_equal(etcd_parse_auth("{" HDR ",\"token\":\"abc.42\"}", &tok, err, sizeof(err)),
			 0);
	assert_string_equal(tok, "abc.42");
	free(tok);
	assert_int_equal(etcd_parse_auth("{\"error\":\"etcdserver: authentication failed, invalid "
					 "user ID or password\",\"code\":3}",
					 &tok, err, sizeof(err)),
			 -EACCES);
	assert_null(tok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(b64_roundtrip), cmocka_unit_test(b64_bad),
	    cmocka_unit_test(prefix_end),    cmocka_unit_test(requests),
	    cmocka_unit_test(parse_range),   cmocka_unit_test(parse_lease),
	    cmocka_unit_test(parse_txn),     cmocka_unit_test(parse_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
