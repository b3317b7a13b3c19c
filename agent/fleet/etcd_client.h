/* SPDX-License-Identifier: MIT */
/*
 * A small etcd v3 client over the HTTP/JSON gateway (POST /v3/...), with
 * libcurl. Blocking calls with a per-request timeout; on a connection error
 * the next endpoint is tried, so a cluster with one member down still
 * answers. TLS (CA, client certificate and key) and user/password auth are
 * passed through to curl and to etcd's /v3/auth/authenticate.
 */
#ifndef FAIRSHARE_ETCD_CLIENT_H
#define FAIRSHARE_ETCD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd_codec.h"

#define ETCD_MAX_ENDPOINTS 8
#define ETCD_ERR_MAX	   1024

struct etcd_options {
	const char *endpoints;		 /* "http://127.0.0.1:2379,https://h2:2379" */
	const char *cacert, *cert, *key; /* PEM paths, or NULL */
	const char *user, *password;	 /* NULL: no auth */
	long timeout_ms;		 /* per request; <= 0: 1000 */
};

struct etcd_client {
	char *endpoint[ETCD_MAX_ENDPOINTS];
	size_t n_endpoints, current;
	char *cacert, *cert, *key, *user, *password;
	char *token; /* auth token, after the first authenticate */
	long timeout_ms;
	void *curl;				       /* CURL *, reused (keeps the connection) */
	char err[ETCD_ERR_MAX];			       /* the last failure, with the endpoint */
	uint64_t requests, bytes_sent, bytes_received; /* counters (status, scale harness) */
};

/* 0, -EINVAL (no or too many endpoints, bad URL scheme), -ENOMEM. */
int etcd_client_init(struct etcd_client *c, const struct etcd_options *opt);
void etcd_client_free(struct etcd_client *c);

/*
 * Every call returns 0 or a negative errno, with c->err saying why:
 * -ECONNREFUSED/-ETIMEDOUT/-EHOSTUNREACH when no endpoint answered, or the
 * codec's errors for what the gateway said.
 */
int etcd_put(struct etcd_client *c, const char *key, const void *value, size_t len, int64_t lease,
	     int64_t *revision);
/* Every key under prefix (prefix true) or the one key, at revision (0: now). */
int etcd_range(struct etcd_client *c, const char *key, bool prefix, int64_t revision,
	       struct etcd_kvs *out);
/* Serializable (etcd_req_range_local): answered by the member alone. */
int etcd_range_local(struct etcd_client *c, const char *key, bool prefix, int64_t revision,
		     struct etcd_kvs *out);
int etcd_delete(struct etcd_client *c, const char *key, bool prefix, int64_t *revision);
int etcd_lease_grant(struct etcd_client *c, int64_t ttl, int64_t *id);
/* *ttl 0: the lease expired (or never was); re-grant. */
int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl);
int etcd_lease_revoke(struct etcd_client *c, int64_t id);
/* See etcd_req_txn_put. holder (may be NULL) gets the key as read on failure. */
int etcd_txn_put(struct etcd_client *c, const char *key, enum etcd_cmp_target target,
		 int64_t expect, const void *value, size_t len, int64_t lease, bool *succeeded,
		 int64_t *revision, struct etcd_kv *holder);
/* See etcd_req_txn_put_if. */
int etcd_txn_put_if(struct etcd_client *c, const char *cmp_key, enum etcd_cmp_target target,
		    int64_t expect, const char *key, const void *value, size_t len, int64_t lease,
		    bool *succeeded, int64_t *revision, struct etcd_kv *holder);

/* See etcd_req_txn_ops: *succeeded false when the compare failed. */
int etcd_txn_ops(struct etcd_client *c, const char *cmp_key, enum etcd_cmp_target target,
		 int64_t expect, const struct etcd_op *ops, size_t n, bool *succeeded,
		 int64_t *revision);

#endif /* FAIRSHARE_ETCD_CLIENT_H */
