/* SPDX-License-Identifier: MIT */
/*
 * The JSON of etcd's v3 HTTP/JSON gateway (grpc-gateway, /v3/...): request
 * bodies and response parsing, without any I/O so that it is unit-tested on
 * its own. The gateway wants keys and values base64-encoded (protobuf bytes)
 * and sends int64 fields as JSON strings; proto3 leaves out fields at their
 * default (a failed txn has no "succeeded", an empty range no "kvs").
 */
#ifndef FAIRSHARE_ETCD_CODEC_H
#define FAIRSHARE_ETCD_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Standard base64 with padding. Returns a malloc'd NUL-terminated string. */
char *etcd_b64_encode(const void *data, size_t len);
/* Decodes into a malloc'd buffer (NUL-terminated for convenience, *len
 * without it). Returns 0, -EINVAL for bad input, -ENOMEM. */
int etcd_b64_decode(const char *s, char **out, size_t *len);

/* The range_end that selects every key starting with prefix (etcd's
 * "prefix + 1" rule); "\0" (all keys) when every byte is 0xff. malloc'd,
 * *end_len its length. Returns 0 or -ENOMEM. */
int etcd_prefix_end(const char *prefix, size_t len, char **end, size_t *end_len);

/* One key-value of a range response; key and value are decoded and
 * NUL-terminated. */
struct etcd_kv {
	char *key, *value;
	size_t key_len, value_len;
	int64_t create_revision, mod_revision, version, lease;
};

struct etcd_kvs {
	int64_t revision; /* the response header's: the store revision read */
	struct etcd_kv *kv;
	size_t n;
	bool more;
};

void etcd_kvs_free(struct etcd_kvs *kvs);

/* --- request bodies (malloc'd JSON text) ----------------------------------- */

char *etcd_req_put(const char *key, const void *value, size_t value_len, int64_t lease);
/* prefix: every key starting with key; revision 0: the latest. */
char *etcd_req_range(const char *key, bool prefix, int64_t revision);
/* The same, serializable: the member answers from its own store without
 * asking the raft leader (no quorum round; may lag a little). */
char *etcd_req_range_local(const char *key, bool prefix, int64_t revision);
char *etcd_req_delete(const char *key, bool prefix);
char *etcd_req_lease_grant(int64_t ttl);
char *etcd_req_lease_id(int64_t id); /* keepalive, revoke */
char *etcd_req_auth(const char *user, const char *password);

/*
 * A txn: compare the key's create_revision (when if_mod_revision < 0) or
 * mod_revision to expect; on success put value (with lease, 0: none); on
 * failure read the key. expect 0 with create_revision means "the key does
 * not exist" (acquire a leader key); with mod_revision it is a
 * compare-and-swap on the version last read.
 */
enum etcd_cmp_target { ETCD_CMP_CREATE, ETCD_CMP_MOD };
char *etcd_req_txn_put(const char *key, enum etcd_cmp_target target, int64_t expect,
		       const void *value, size_t value_len, int64_t lease);
/* The same with the compare on another key (cmp_key): put key only while
 * cmp_key is as expected (a leader's write guarded by its leader key); the
 * failure branch reads key. */
char *etcd_req_txn_put_if(const char *cmp_key, enum etcd_cmp_target target, int64_t expect,
			  const char *key, const void *value, size_t value_len, int64_t lease);

/* One operation of a multi-key txn: a put (with lease, 0: none) or, when
 * del, a delete of the one key. */
struct etcd_op {
	const char *key;
	const void *value;
	size_t len;
	int64_t lease;
	bool del;
};

/* ops[0..n) in one txn, only while cmp_key is as expected (else nothing).
 * etcd caps a txn's ops (--max-txn-ops, default 128): callers split. */
char *etcd_req_txn_ops(const char *cmp_key, enum etcd_cmp_target target, int64_t expect,
		       const struct etcd_op *ops, size_t n);

/* --- responses ----------------------------------------------------------------
 * Each returns 0, -EPROTO for a body that is not what the gateway sends (the
 * message in err, up to errlen), or the gateway's own error: -EIO with its
 * "error"/"message" text in err (e.g. "etcdserver: requested lease not found"
 * maps to -ENOENT, "etcdserver: mvcc: required revision has been compacted" to
 * -ESTALE, "etcdserver: user name is empty"/"invalid auth token" to -EACCES). */

/* header.revision of any response. */
int etcd_parse_header(const char *body, int64_t *revision, char *err, size_t errlen);
int etcd_parse_range(const char *body, struct etcd_kvs *out, char *err, size_t errlen);
int etcd_parse_lease_grant(const char *body, int64_t *id, int64_t *ttl, char *err, size_t errlen);
/* Keepalive answers {"result": {...}}; ttl 0 (or absent) means the lease is
 * gone. */
int etcd_parse_keepalive(const char *body, int64_t *ttl, char *err, size_t errlen);
/* succeeded, the revision, and on failure the key as read (holder->key NULL
 * when it does not exist). holder may be NULL. */
int etcd_parse_txn(const char *body, bool *succeeded, int64_t *revision, struct etcd_kv *holder,
		   char *err, size_t errlen);
int etcd_parse_auth(const char *body, char **token, char *err, size_t errlen);

void etcd_kv_free(struct etcd_kv *kv);

#endif /* FAIRSHARE_ETCD_CODEC_H */
