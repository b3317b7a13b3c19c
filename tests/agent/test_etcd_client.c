/* SPDX-License-Identifier: MIT */
/*
 * The etcd client (agent/fleet/etcd_client.h) against a real etcd on
 * loopback ports (etcd_testutil.h): put and range by prefix at a revision,
 * leases (keepalive, revoke, expiry), the lease-bound leader key and
 * compare-and-swap by txn, fail-over between endpoints, a 3-member cluster
 * losing one member and then its quorum, and user/password auth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "etcd_client.h"
#include "etcd_testutil.h"

static struct etcd_cluster one;

static int setup(void **state)
{
	(void)state;
	int r = etcd_cluster_start(&one, 1);

	if (r < 0)
		fprintf(stderr, "cannot start etcd (%s): install etcd-server\n", strerror(-r));
	return r < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	etcd_cluster_stop(&one);
	return 0;
}

static void connect_to(struct etcd_client *c, const char *endpoints)
{
	struct etcd_options o = {.endpoints = endpoints, .timeout_ms = 2000};

	assert_int_equal(etcd_client_init(c, &o), 0);
}

static void put_range_revision(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_kvs kvs;
	int64_t rev1, rev2;

	connect_to(&c, one.endpoints);
	assert_int_equal(etcd_put(&c, "/t/a", "1", 1, 0, &rev1), 0);
	assert_int_equal(etcd_put(&c, "/t/b", "two", 3, 0, NULL), 0);
	assert_int_equal(etcd_put(&c, "/u/c", "3", 1, 0, NULL), 0);
	assert_int_equal(etcd_put(&c, "/t/a", "10", 2, 0, &rev2), 0);
	assert_true(rev2 > rev1);

	assert_int_equal(etcd_range(&c, "/t/", true, 0, &kvs), 0);
	assert_int_equal(kvs.n, 2);
	assert_int_equal(kvs.revision, rev2);
	assert_string_equal(kvs.kv[0].key, "/t/a");
	assert_string_equal(kvs.kv[0].value, "10");
	assert_string_equal(kvs.kv[1].value, "two");
	etcd_kvs_free(&kvs);

	/* One consistent snapshot: the prefix as it was at rev1. */
	assert_int_equal(etcd_range(&c, "/t/", true, rev1, &kvs), 0);
	assert_int_equal(kvs.n, 1);
	assert_string_equal(kvs.kv[0].value, "1");
	etcd_kvs_free(&kvs);

	assert_int_equal(etcd_range(&c, "/t/b", false, 0, &kvs), 0);
	assert_int_equal(kvs.n, 1);
	etcd_kvs_free(&kvs);
	assert_int_equal(etcd_delete(&c, "/t/", true, NULL), 0);
	assert_int_equal(etcd_range(&c, "/t/", true, 0, &kvs), 0);
	assert_int_equal(kvs.n, 0);
	etcd_kvs_free(&kvs);
	/* A future revision is the gateway's error, passed on with its text. */
	assert_int_equal(etcd_range(&c, "/u/", true, rev2 + 1000, &kvs), -EIO);
	assert_non_null(strstr(c.err, "future revision"));
	etcd_client_free(&c);
}

static void leases(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_kvs kvs;
	int64_t id, ttl;

	connect_to(&c, one.endpoints);
	assert_int_equal(etcd_lease_grant(&c, 5, &id), 0);
	assert_true(id != 0);
	assert_int_equal(etcd_put(&c, "/l/h1", "up", 2, id, NULL), 0);
	assert_int_equal(etcd_lease_keepalive(&c, id, &ttl), 0);
	assert_true(ttl > 0 && ttl <= 5);
	assert_int_equal(etcd_range(&c, "/l/h1", false, 0, &kvs), 0);
	assert_int_equal(kvs.n, 1);
	assert_int_equal(kvs.kv[0].lease, id);
	etcd_kvs_free(&kvs);

	assert_int_equal(etcd_lease_revoke(&c, id), 0);
	assert_int_equal(etcd_range(&c, "/l/h1", false, 0, &kvs), 0);
	assert_int_equal(kvs.n, 0); /* went with its lease */
	etcd_kvs_free(&kvs);
	assert_int_equal(etcd_lease_keepalive(&c, id, &ttl), 0);
	assert_int_equal(ttl, 0); /* gone: the caller re-grants */
	assert_int_equal(etcd_put(&c, "/l/h1", "up", 2, id, NULL), -ENOENT);

	/* Expiry without keepalive (etcd's minimum TTL here is 1 s or more). */
	assert_int_equal(etcd_lease_grant(&c, 1, &id), 0);
	assert_int_equal(etcd_put(&c, "/l/h2", "up", 2, id, NULL), 0);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(etcd_range(&c, "/l/h2", false, 0, &kvs), 0);
		size_t n = kvs.n;
		etcd_kvs_free(&kvs);
		if (n == 0)
			break;
		usleep(100000);
	}
	assert_int_equal(etcd_range(&c, "/l/h2", false, 0, &kvs), 0);
	assert_int_equal(kvs.n, 0);
	etcd_kvs_free(&kvs);
	etcd_client_free(&c);
}

static void leader_and_cas(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_kv holder;
	int64_t l1, l2, rev, rev2;
	bool won;

	connect_to(&c, one.endpoints);
	assert_int_equal(etcd_lease_grant(&c, 10, &l1), 0);
	assert_int_equal(etcd_lease_grant(&c, 10, &l2), 0);
	assert_int_equal(
	    etcd_txn_put(&c, "/e/leader", ETCD_CMP_CREATE, 0, "h1", 2, l1, &won, &rev, &holder), 0);
	assert_true(won);
	assert_int_equal(
	    etcd_txn_put(&c, "/e/leader", ETCD_CMP_CREATE, 0, "h2", 2, l2, &won, &rev, &holder), 0);
	assert_false(won);
	assert_string_equal(holder.value, "h1");
	assert_int_equal(holder.lease, l1);
	etcd_kv_free(&holder);
	/* The leader's lease ends: the next campaign wins. */
	assert_int_equal(etcd_lease_revoke(&c, l1), 0);
	assert_int_equal(
	    etcd_txn_put(&c, "/e/leader", ETCD_CMP_CREATE, 0, "h2", 2, l2, &won, &rev, NULL), 0);
	assert_true(won);

	/* Compare-and-swap on the version last read. */
	assert_int_equal(etcd_put(&c, "/e/alloc", "v1", 2, 0, &rev), 0);
	assert_int_equal(
	    etcd_txn_put(&c, "/e/alloc", ETCD_CMP_MOD, rev, "v2", 2, 0, &won, &rev2, NULL), 0);
	assert_true(won);
	assert_int_equal(
	    etcd_txn_put(&c, "/e/alloc", ETCD_CMP_MOD, rev, "v3", 2, 0, &won, NULL, &holder), 0);
	assert_false(won); /* someone (we) wrote since rev */
	/* A write guarded by another key: the leader key of h2 as it is. */
	struct etcd_kvs lk;
	assert_int_equal(etcd_range(&c, "/e/leader", false, 0, &lk), 0);
	assert_int_equal(etcd_txn_put_if(&c, "/e/leader", ETCD_CMP_CREATE, lk.kv[0].create_revision,
					 "/e/out", "ok", 2, 0, &won, NULL, NULL),
			 0);
	assert_true(won);
	assert_int_equal(etcd_txn_put_if(&c, "/e/leader", ETCD_CMP_CREATE,
					 lk.kv[0].create_revision - 1, "/e/out", "no", 2, 0, &won,
					 NULL, NULL),
			 0);
	assert_false(won); /* a deposed leader's write does not land */
	etcd_kvs_free(&lk);
	assert_string_equal(holder.value, "v2");
	assert_int_equal(holder.mod_revision, rev2);
	etcd_kv_free(&holder);
	etcd_client_free(&c);
}

/* The leader's multi-key txn (puts and deletes, guarded by its leader key)
 * and a host's serializable read of its own key. */
static void txn_ops_and_local_read(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_kvs kvs, lk;
	int64_t lease;
	bool won;

	connect_to(&c, one.endpoints);
	assert_int_equal(etcd_lease_grant(&c, 10, &lease), 0);
	assert_int_equal(
	    etcd_txn_put(&c, "/m/leader", ETCD_CMP_CREATE, 0, "h1", 2, lease, &won, NULL, NULL), 0);
	assert_true(won);
	assert_int_equal(etcd_range(&c, "/m/leader", false, 0, &lk), 0);
	assert_int_equal(etcd_put(&c, "/m/alloc/gone", "x", 1, 0, NULL), 0);
	{
		const struct etcd_op ops[] = {
		    {.key = "/m/alloc/gone", .del = true},
		    {.key = "/m/alloc/h1", .value = "a1", .len = 2, .lease = lease},
		    {.key = "/m/alloc/h2", .value = "a2", .len = 2, .lease = lease},
		};

		assert_int_equal(etcd_txn_ops(&c, "/m/leader", ETCD_CMP_CREATE,
					      lk.kv[0].create_revision, ops, 3, &won, NULL),
				 0);
		assert_true(won);
		/* a deposed leader's txn changes nothing */
		assert_int_equal(etcd_txn_ops(&c, "/m/leader", ETCD_CMP_CREATE,
					      lk.kv[0].create_revision + 1, &ops[2], 1, &won, NULL),
				 0);
		assert_false(won);
	}
	assert_int_equal(etcd_range_local(&c, "/m/alloc/", true, 0, &kvs), 0);
	assert_int_equal(kvs.n, 2);
	assert_string_equal(kvs.kv[0].key, "/m/alloc/h1");
	assert_string_equal(kvs.kv[1].value, "a2");
	assert_int_equal(kvs.kv[1].lease, lease);
	etcd_kvs_free(&kvs);
	/* bound to the leader's lease: they go with it */
	assert_int_equal(etcd_lease_revoke(&c, lease), 0);
	assert_int_equal(etcd_range_local(&c, "/m/alloc/", true, 0, &kvs), 0);
	assert_int_equal(kvs.n, 0);
	etcd_kvs_free(&kvs);
	etcd_kvs_free(&lk);
	etcd_client_free(&c);
}

static void failover_and_unreachable(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_options o = {.endpoints = "http://127.0.0.1:1", .timeout_ms = 500};
	char eps[300];
	int64_t rev;

	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/f", "x", 1, 0, &rev), -ECONNREFUSED);
	assert_non_null(strstr(c.err, "127.0.0.1:1"));
	etcd_client_free(&c);

	snprintf(eps, sizeof(eps), "http://127.0.0.1:1,%s", one.endpoints);
	connect_to(&c, eps);
	assert_int_equal(etcd_put(&c, "/f", "x", 1, 0, &rev), 0);
	assert_int_equal(c.current, 1); /* stays on the one that answered */
	etcd_client_free(&c);

	o.endpoints = "tcp://127.0.0.1:2379";
	assert_int_equal(etcd_client_init(&c, &o), -EINVAL);
	o.endpoints = "";
	assert_int_equal(etcd_client_init(&c, &o), -EINVAL);
}

static void three_members(void **state)
{
	(void)state;
	struct etcd_cluster three;
	struct etcd_client c;
	struct etcd_options o = {.timeout_ms = 1000};
	struct etcd_kvs kvs;
	int64_t rev;

	assert_int_equal(etcd_cluster_start(&three, 3), 0);
	o.endpoints = three.endpoints;
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/3/a", "1", 1, 0, &rev), 0);
	/* Lose the member we talk to: the others answer. */
	etcd_cluster_kill(&three, c.current);
	int r = -1;
	for (int i = 0; i < 50 && r != 0; i++) { /* a new raft leader may take ~1 s */
		r = etcd_put(&c, "/3/a", "2", 1, 0, &rev);
		if (r)
			usleep(100000);
	}
	assert_int_equal(r, 0);
	assert_int_equal(etcd_range(&c, "/3/", true, 0, &kvs), 0);
	assert_string_equal(kvs.kv[0].value, "2");
	etcd_kvs_free(&kvs);
	/* Lose the quorum: requests fail within the timeout, not hang. */
	for (size_t i = 0; i < 3; i++)
		if (three.pid[i] > 0) {
			etcd_cluster_kill(&three, i);
			break;
		}
	r = etcd_put(&c, "/3/a", "3", 1, 0, &rev);
	assert_true(r < 0);
	etcd_client_free(&c);
	etcd_cluster_stop(&three);
}

static int etcdctl(const char *endpoints, const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "ETCDCTL_API=3 etcdctl --endpoints=%s %s >/dev/null 2>&1",
		 endpoints, args);
	return system(cmd);
}

/* Last: it turns auth on for the shared member. */
static void auth(void **state)
{
	(void)state;
	struct etcd_client c;
	struct etcd_options o = {.endpoints = one.endpoints, .timeout_ms = 2000};
	int64_t rev;

	assert_int_equal(etcdctl(one.endpoints, "user add root:sekrit"), 0);
	assert_int_equal(etcdctl(one.endpoints, "user grant-role root root"), 0);
	assert_int_equal(etcdctl(one.endpoints, "auth enable"), 0);

	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/a", "x", 1, 0, &rev), -EACCES);
	etcd_client_free(&c);
	o.user = "root";
	o.password = "wrong";
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/a", "x", 1, 0, &rev), -EACCES);
	etcd_client_free(&c);
	o.password = "sekrit";
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/a", "x", 1, 0, &rev), 0);
	assert_non_null(c.token);
	/* A token etcd no longer knows is replaced once, transparently. */
	free(c.token);
	c.token = strdup("bogus.1");
	assert_int_equal(etcd_put(&c, "/a", "y", 1, 0, &rev), 0);
	assert_string_not_equal(c.token, "bogus.1");
	etcd_client_free(&c);
}

/* TLS with client certificates: the options reach libcurl. */
static void tls(void **state)
{
	(void)state;
	struct etcd_cluster sec;
	struct etcd_client c;
	char dir[] = "/tmp/fs-etcd-tls.XXXXXX", ca[128], crt[128], key[128], cmd[160];
	struct etcd_options o = {.timeout_ms = 3000, .cacert = ca, .cert = crt, .key = key};
	int64_t rev;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(etcd_cluster_make_certs(dir), 0);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(crt, sizeof(crt), "%s/client.pem", dir);
	snprintf(key, sizeof(key), "%s/client.key", dir);
	assert_int_equal(etcd_cluster_start_tls(&sec, 1, dir), 0);
	o.endpoints = sec.endpoints;
	assert_non_null(strstr(sec.endpoints, "https://"));
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_int_equal(etcd_put(&c, "/tls", "x", 1, 0, &rev), 0);
	etcd_client_free(&c);
	/* Without the client certificate etcd refuses the handshake. */
	o.cert = o.key = NULL;
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_true(etcd_put(&c, "/tls", "y", 1, 0, &rev) < 0);
	etcd_client_free(&c);
	/* Without our CA the server is not trusted. */
	o.cert = crt;
	o.key = key;
	o.cacert = NULL;
	assert_int_equal(etcd_client_init(&c, &o), 0);
	assert_true(etcd_put(&c, "/tls", "z", 1, 0, &rev) < 0);
	etcd_client_free(&c);
	etcd_cluster_stop(&sec);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(put_range_revision),
	    cmocka_unit_test(leases),
	    cmocka_unit_test(leader_and_cas),
	    cmocka_unit_test(txn_ops_and_local_read),
	    cmocka_unit_test(failover_and_unreachable),
	    cmocka_unit_test(three_members),
	    cmocka_unit_test(tls),
	    cmocka_unit_test(auth),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
