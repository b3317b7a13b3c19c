/* SPDX-License-Identifier: MIT */
#include "etcd_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd_client.h"

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static const char *etcd_bin(void)
{
	const char *e = getenv("ETCD");

	if (e && *e)
		return e;
	if (access("/usr/bin/etcd", X_OK) == 0)
		return "/usr/bin/etcd";
	return "etcd";
}

const char *etcd_cluster_endpoint(const struct etcd_cluster *c, size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "%s://127.0.0.1:%d", c->tls[0] ? "https" : "http", c->client_port[i]);
	return buf;
}

static int spawn(struct etcd_cluster *c, size_t i, const char *state)
{
	char name[16], data[128], log[128], curl[64], purl[64], cluster[512] = "";
	size_t used = 0;
	pid_t pid;

	snprintf(name, sizeof(name), "m%zu", i);
	snprintf(data, sizeof(data), "%s/%s.data", c->dir, name);
	snprintf(log, sizeof(log), "%s/%s.log", c->dir, name);
	etcd_cluster_endpoint(c, i, curl, sizeof(curl));
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", c->peer_port[i]);
	for (size_t j = 0; j < c->n; j++)
		used += (size_t)snprintf(cluster + used, sizeof(cluster) - used,
					 "%sm%zu=http://127.0.0.1:%d", j ? "," : "", j,
					 c->peer_port[j]);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		char ca[192], crt[192], key[192];

		snprintf(ca, sizeof(ca), "%s/ca.pem", c->tls);
		snprintf(crt, sizeof(crt), "%s/server.pem", c->tls);
		snprintf(key, sizeof(key), "%s/server.key", c->tls);
		if (c->tls[0])
			execlp(etcd_bin(), etcd_bin(), "--name", name, "--data-dir", data,
			       "--listen-client-urls", curl, "--advertise-client-urls", curl,
			       "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
			       "--initial-cluster", cluster, "--initial-cluster-state", state,
			       "--initial-cluster-token", c->dir, "--cert-file", crt, "--key-file",
			       key, "--trusted-ca-file", ca, "--client-cert-auth", (char *)NULL);
		execlp(etcd_bin(), etcd_bin(), "--name", name, "--data-dir", data,
		       "--listen-client-urls", curl, "--advertise-client-urls", curl,
		       "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		       "--initial-cluster", cluster, "--initial-cluster-state", state,
		       "--initial-cluster-token", c->dir, "--heartbeat-interval", "50",
		       "--election-timeout", "500", (char *)NULL);
		_exit(127);
	}
	c->pid[i] = pid;
	return 0;
}

/* Member i answers a range (a linearizable read needs a quorum). */
static int wait_ready(struct etcd_cluster *c, size_t i, int timeout_ms)
{
	struct etcd_client cl;
	struct etcd_options o = {.timeout_ms = 300};
	char ep[64], ca[192], crt[192], key[192];

	snprintf(ca, sizeof(ca), "%s/ca.pem", c->tls);
	snprintf(crt, sizeof(crt), "%s/client.pem", c->tls);
	snprintf(key, sizeof(key), "%s/client.key", c->tls);
	if (c->tls[0]) {
		o.cacert = ca;
		o.cert = crt;
		o.key = key;
	}
	int r = -ETIMEDOUT;

	o.endpoints = etcd_cluster_endpoint(c, i, ep, sizeof(ep));
	if (etcd_client_init(&cl, &o) < 0)
		return -ENOMEM;
	for (int waited = 0; waited < timeout_ms; waited += 50) {
		struct etcd_kvs kvs;
		int status;

		if (waitpid(c->pid[i], &status, WNOHANG) == c->pid[i]) {
			c->pid[i] = 0;
			r = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -ECHILD;
			break;
		}
		if (etcd_range(&cl, "ready", false, 0, &kvs) == 0) {
			etcd_kvs_free(&kvs);
			r = 0;
			break;
		}
		usleep(50000);
	}
	etcd_client_free(&cl);
	return r;
}

int etcd_cluster_start(struct etcd_cluster *c, size_t n)
{
	return etcd_cluster_start_tls(c, n, NULL);
}

int etcd_cluster_make_certs(const char *dir)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; exec >openssl.log 2>&1; "
		 "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
		 "-subj /CN=fs-test-ca; "
		 /* etcd's gateway dials etcd with the server certificate: clientAuth too */
		 "printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' "
		 ">srv.ext; "
		 "printf 'extendedKeyUsage=clientAuth\n' >cli.ext; "
		 "for w in server client; do "
		 "openssl req -newkey rsa:2048 -nodes -keyout $w.key -out $w.csr -subj /CN=$w; "
		 "e=srv.ext; [ $w = client ] && e=cli.ext; "
		 "openssl x509 -req -in $w.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-out $w.pem -days 2 -extfile $e; done",
		 dir);
	return system(cmd) == 0 ? 0 : -EIO;
}

/* One attempt of etcd_cluster_start_tls; *failed: the member that exited. */
static int start_once(struct etcd_cluster *c, size_t n, const char *certs, size_t *failed)
{
	int r = 0;

	memset(c, 0, sizeof(*c));
	if (certs)
		snprintf(c->tls, sizeof(c->tls), "%s", certs);
	snprintf(c->dir, sizeof(c->dir), "/tmp/fs-etcd.XXXXXX");
	if (!mkdtemp(c->dir))
		return -errno;
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		c->client_port[i] = free_port();
		c->peer_port[i] = free_port();
		if (c->client_port[i] < 0 || c->peer_port[i] < 0)
			return -EADDRINUSE;
	}
	for (size_t i = 0; i < n && r == 0; i++)
		r = spawn(c, i, "new");
	for (size_t i = 0; i < n && r == 0; i++) {
		r = wait_ready(c, i, 20000);
		*failed = i;
	}
	for (size_t i = 0, used = 0; i < n; i++) {
		char ep[64];

		used += (size_t)snprintf(c->endpoints + used, sizeof(c->endpoints) - used, "%s%s",
					 i ? "," : "", etcd_cluster_endpoint(c, i, ep, sizeof(ep)));
	}
	return r;
}

/*
 * A member that exits while starting (-ECHILD) most often lost its port:
 * free_port's port is free when it looks, but until etcd binds it another
 * test running in parallel can take it, as the ephemeral port of an
 * outgoing connection (seen once in a CI run: three_members, "No child
 * processes"). Such a start is tried again, with new ports, twice.
 */
int etcd_cluster_start_tls(struct etcd_cluster *c, size_t n, const char *certs)
{
	int r = -ECHILD;

	for (int attempt = 0; attempt < 3 && r == -ECHILD; attempt++) {
		size_t failed = 0;

		r = start_once(c, n, certs, &failed);
		if (r < 0) {
			char cmd[256];

			fprintf(stderr, "etcd cluster in %s did not start: %s; member %zu's log:\n",
				c->dir, strerror(-r), failed);
			snprintf(cmd, sizeof(cmd), "tail -n 5 '%s/m%zu.log' >&2", c->dir, failed);
			if (system(cmd) != 0)
				fprintf(stderr, "(no log)\n");
			etcd_cluster_stop(c);
		}
	}
	return r;
}

void etcd_cluster_kill(struct etcd_cluster *c, size_t i)
{
	if (c->pid[i] > 0) {
		kill(c->pid[i], SIGKILL);
		waitpid(c->pid[i], NULL, 0);
	}
	c->pid[i] = 0;
}

int etcd_cluster_restart(struct etcd_cluster *c, size_t i)
{
	int r = spawn(c, i, "existing");

	return r < 0 ? r : wait_ready(c, i, 20000);
}

void etcd_cluster_stop(struct etcd_cluster *c)
{
	char cmd[128];

	for (size_t i = 0; i < c->n; i++)
		etcd_cluster_kill(c, i);
	if (c->dir[0] && !getenv("FS_KEEP_ETCD")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", c->dir);
	}
	c->dir[0] = '\0';
}
