/* SPDX-License-Identifier: MIT */
/* A real etcd cluster on loopback ports in a temp dir, for the fleet tests. */
#ifndef FAIRSHARE_ETCD_TESTUTIL_H
#define FAIRSHARE_ETCD_TESTUTIL_H

#include <stddef.h>
#include <sys/types.h>

#define ETCD_TEST_MAX 5

struct etcd_cluster {
	size_t n;
	pid_t pid[ETCD_TEST_MAX];
	int client_port[ETCD_TEST_MAX], peer_port[ETCD_TEST_MAX];
	char dir[64];
	char endpoints[256]; /* every member, comma-separated */
	char tls[128];	     /* "": plain http; else a dir with ca.pem, server.pem/.key,
				client.pem/.key: https with client certificates */
};

/*
 * Starts n members (etcd from $ETCD, else PATH) and waits until each answers.
 * Returns 0, -ENOENT when there is no etcd binary (the test then fails: CI
 * installs etcd-server), or -ETIMEDOUT.
 */
int etcd_cluster_start(struct etcd_cluster *c, size_t n);
/* The same over https with client certificates; certs as in tls above
 * (etcd_cluster_make_certs writes them with openssl). */
int etcd_cluster_start_tls(struct etcd_cluster *c, size_t n, const char *certs);
int etcd_cluster_make_certs(const char *dir);
/* The endpoint URL of member i. */
const char *etcd_cluster_endpoint(const struct etcd_cluster *c, size_t i, char *buf, size_t len);
void etcd_cluster_kill(struct etcd_cluster *c, size_t i);   /* SIGKILL, wait */
int etcd_cluster_restart(struct etcd_cluster *c, size_t i); /* same data dir */
void etcd_cluster_stop(struct etcd_cluster *c);		    /* kill all, rm -rf */

#endif
