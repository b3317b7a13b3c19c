/* SPDX-License-Identifier: MIT */
/* The control socket server (see control.h). */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "control_request.h"

struct client {
	struct fsd_control *srv;
	struct client *next;
	int fd;
	struct fsd_control_peer peer;
	sd_event_source *io, *timer;
	char *in; /* max_line + 1 bytes */
	size_t in_len;
	char *out; /* pending answer(s) */
	size_t out_len, out_off;
	bool eof;	  /* the peer closed its writing side */
	bool close_after; /* close once out is sent (fatal request error, refusal) */
	bool draining;	  /* out sent, our side shut down: input read away until EOF */
	bool refused;	  /* accepted only to say why not (busy): no request is read */
};

struct fsd_control {
	sd_event *event;
	sd_event_source *listen;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct fsd_control_opts o;
	struct client *clients; /* served and refused ones */
	unsigned n_clients, n_refused;
};

/* How long a refused connection may take to read why. */
#define REFUSED_LINGER_US 1000000ULL
/* Reads of input drained per wakeup, so a client streaming input cannot
 * hold the event loop. */
#define DRAIN_READS 16

static uint64_t now_us(const struct fsd_control *c)
{
	uint64_t t = 0;

	if (sd_event_now(c->event, CLOCK_MONOTONIC, &t) < 0)
		t = fs_monotonic_us();
	return t;
}

static void client_free(struct client *cl)
{
	struct fsd_control *c = cl->srv;

	for (struct client **p = &c->clients; *p; p = &(*p)->next)
		if (*p == cl) {
			*p = cl->next;
			break;
		}
	if (cl->refused)
		c->n_refused--;
	else
		c->n_clients--;
	sd_event_source_disable_unref(cl->io);
	sd_event_source_disable_unref(cl->timer);
	if (cl->fd >= 0)
		close(cl->fd);
	free(cl->in);
	free(cl->out);
	free(cl);
}

/* Appends one JSON line to the pending output. */
static int queue_json(struct client *cl, struct json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	char *nb;

	if (!s)
		return -ENOMEM;
	if (cl->out_len + len + 1 > FSD_CONTROL_MAX_RESPONSE)
		return -E2BIG;
	nb = realloc(cl->out, cl->out_len + len + 1);
	if (!nb)
		return -ENOMEM;
	memcpy(nb + cl->out_len, s, len);
	nb[cl->out_len + len] = '\n';
	cl->out = nb;
	cl->out_len += len + 1;
	return 0;
}

static void queue_error(struct client *cl, const char *code, const char *msg)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return;
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "code", json_object_new_string(code));
	json_object_object_add(o, "error", json_object_new_string(msg));
	queue_json(cl, o);
	json_object_put(o);
}

static const struct fsd_control_cmd *find_cmd(const struct fsd_control *c, const char *name)
{
	for (size_t i = 0; i < c->o.n_cmds; i++)
		if (!strcmp(c->o.cmds[i].name, name))
			return &c->o.cmds[i];
	return NULL;
}

static const char *code_of(int r)
{
	switch (r) {
	case -EINVAL:
		return FSD_CODE_BAD_REQUEST;
	case -ENOENT:
		return FSD_CODE_NOT_FOUND;
	case -EPERM:
	case -EACCES:
		return FSD_CODE_PERMISSION;
	default:
		return FSD_CODE_FAILED;
	}
}

/* One request line (NUL-terminated, without its newline). */
static void handle_line(struct client *cl, const char *line, size_t len)
{
	struct fsd_control *c = cl->srv;
	struct json_object *req = NULL, *resp = NULL;
	const struct fsd_control_cmd *cmd;
	const char *name;
	char err[512] = "";
	int r;

	r = fsd_control_parse_request(line, len, &req, &name, err, sizeof(err));
	if (r < 0) {
		queue_error(cl, r == -EINVAL ? FSD_CODE_BAD_REQUEST : FSD_CODE_FAILED, err);
		return;
	}
	cmd = find_cmd(c, name);
	if (!cmd) {
		snprintf(err, sizeof(err), "unknown command \"%.64s\"", name);
		queue_error(cl, FSD_CODE_UNKNOWN_COMMAND, err);
		goto out;
	}
	if (cmd->privileged && cl->peer.uid != 0) {
		snprintf(err, sizeof(err), "\"%s\" needs root (peer uid %u)", cmd->name,
			 (unsigned)cl->peer.uid);
		queue_error(cl, FSD_CODE_PERMISSION, err);
		goto out;
	}
	resp = json_object_new_object();
	if (!resp) {
		queue_error(cl, FSD_CODE_FAILED, "out of memory");
		goto out;
	}
	json_object_object_add(resp, "ok", json_object_new_boolean(1));
	r = cmd->run(c->o.ctx, &cl->peer, req, resp, err, sizeof(err));
	if (r < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s: %s", cmd->name, strerror(-r));
		queue_error(cl, code_of(r), err);
		goto out;
	}
	r = queue_json(cl, resp);
	if (r < 0)
		queue_error(cl, FSD_CODE_FAILED,
			    r == -E2BIG ? "answer too large" : "out of memory");
out:
	json_object_put(resp);
	json_object_put(req);
}

static int update_events(struct client *cl)
{
	uint32_t ev = 0;

	if (cl->out_off < cl->out_len)
		ev |= EPOLLOUT;
	else if (cl->draining || (!cl->eof && !cl->close_after))
		ev |= EPOLLIN;
	return sd_event_source_set_io_events(cl->io, ev);
}

/* Runs the complete lines in the input buffer while no answer is pending. */
static void process_input(struct client *cl)
{
	while (!cl->close_after && cl->out_off >= cl->out_len) {
		char *nl = memchr(cl->in, '\n', cl->in_len);
		size_t len;

		if (!nl) {
			if (cl->in_len >= cl->srv->o.max_line) {
				char msg[96];

				snprintf(msg, sizeof(msg), "request longer than %zu bytes",
					 cl->srv->o.max_line);
				queue_error(cl, FSD_CODE_TOO_LONG, msg);
				cl->close_after = true;
			} else if (cl->eof && cl->in_len) {
				/* a last request without newline (printf ... | nc -U) */
				cl->in[cl->in_len] = '\0';
				handle_line(cl, cl->in, cl->in_len);
				cl->in_len = 0;
			}
			return;
		}
		len = (size_t)(nl - cl->in);
		*nl = '\0';
		if (len && nl[-1] == '\r')
			nl[-1] = '\0', len--;
		if (len)
			handle_line(cl, cl->in, len);
		cl->in_len -= (size_t)(nl + 1 - cl->in);
		memmove(cl->in, nl + 1, cl->in_len);
		/* a new request: a fresh deadline */
		sd_event_source_set_time(cl->timer, now_us(cl->srv) + cl->srv->o.timeout_us);
	}
}

/*
 * Sends what is pending. After the last answer (close_after) our side is shut
 * down and the client's further input drained: closing with unread input
 * would reset the connection, and the client would see EPIPE on its send or
 * ECONNRESET on its read instead of the answer ("busy", "too long"). 0, or
 * -errno: drop the client.
 */
static int flush(struct client *cl)
{
	while (cl->out_off < cl->out_len) {
		ssize_t n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		cl->out_off += (size_t)n;
	}
	cl->out_off = cl->out_len = 0;
	if (cl->close_after && !cl->draining) {
		if (shutdown(cl->fd, SHUT_WR) < 0)
			return -errno;
		cl->draining = true;
	}
	return 0;
}

/* Reads input away: 1 when more may come, 0 when the peer closed, -errno. */
static int drain(struct client *cl)
{
	char buf[4096];

	for (int i = 0; i < DRAIN_READS; i++) {
		ssize_t n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0)
			return 0;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 1 : -errno;
	}
	return 1;
}

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct client *cl = userdata;

	(void)s;
	if (revents & EPOLLOUT && flush(cl) < 0)
		goto drop;
	if (cl->draining) {
		if (cl->eof || (revents & (EPOLLIN | EPOLLHUP | EPOLLERR) && drain(cl) <= 0))
			goto drop;
		goto events;
	}
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR) && cl->out_off >= cl->out_len && !cl->eof &&
	    !cl->close_after) {
		size_t room = cl->srv->o.max_line - cl->in_len;
		ssize_t n = room ? recv(fd, cl->in + cl->in_len, room, MSG_DONTWAIT) : 0;

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto drop;
		if (n == 0 && room)
			cl->eof = true;
		if (n > 0)
			cl->in_len += (size_t)n;
	}
	if (!cl->refused)
		process_input(cl);
	if (cl->out_off < cl->out_len && !(revents & EPOLLOUT)) {
		/* try at once; most answers fit the socket buffer */
		return on_client(s, fd, EPOLLOUT, userdata);
	}
	if (cl->out_off >= cl->out_len && cl->eof)
		goto drop;
events:
	if (update_events(cl) < 0)
		goto drop;
	return 0;
drop:
	client_free(cl);
	return 0;
}

static int on_client_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct client *cl = userdata;
	char msg[96];

	(void)s;
	(void)usec;
	if (cl->close_after) {
		/* its last answer is out or on the way: it had its time to read */
		client_free(cl);
		return 0;
	}
	/* best effort: tell the client why, without waiting for it to read */
	snprintf(msg, sizeof(msg), "no complete request within %llu ms",
		 (unsigned long long)(cl->srv->o.timeout_us / 1000));
	if (cl->out_off >= cl->out_len) {
		cl->out_off = cl->out_len = 0;
		queue_error(cl, FSD_CODE_TIMEOUT, msg);
		if (cl->out_len) {
			ssize_t n = send(cl->fd, cl->out, cl->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)n;
		}
	}
	client_free(cl);
	return 0;
}

/*
 * A client for connection fd (refused: to say why not only). 0, or -errno
 * with fd left open.
 */
static int client_new(struct fsd_control *c, int fd, const struct fsd_control_peer *peer,
		      bool refused, struct client **out)
{
	uint64_t timeout = c->o.timeout_us;
	struct client *cl = calloc(1, sizeof(*cl));
	int r;

	if (!cl || (!refused && !(cl->in = malloc(c->o.max_line + 1)))) {
		free(cl);
		return -ENOMEM;
	}
	cl->srv = c;
	cl->fd = fd;
	cl->peer = *peer;
	cl->refused = refused;
	cl->next = c->clients;
	c->clients = cl;
	if (refused) {
		c->n_refused++;
		timeout = timeout < REFUSED_LINGER_US ? timeout : REFUSED_LINGER_US;
	} else {
		c->n_clients++;
	}
	r = sd_event_add_io(c->event, &cl->io, fd, EPOLLIN, on_client, cl);
	if (r >= 0)
		r = sd_event_add_time(c->event, &cl->timer, CLOCK_MONOTONIC, now_us(c) + timeout,
				      10000, on_client_timeout, cl);
	if (r < 0) {
		cl->fd = -1;
		client_free(cl);
		return r;
	}
	*out = cl;
	return 0;
}

/*
 * Tells a connection that is not served why, and closes it as after a fatal
 * request error, so the client reads the reason. At most max_clients such
 * connections at once, each for at most REFUSED_LINGER_US; beyond that (a
 * flood) the reason is sent best effort and the connection closed at once.
 */
static void refuse(struct fsd_control *c, int fd, const struct fsd_control_peer *peer,
		   const char *code, const char *msg)
{
	struct client *cl;
	char line[256];
	int n;

	if (c->n_refused < c->o.max_clients && client_new(c, fd, peer, true, &cl) == 0) {
		queue_error(cl, code, msg);
		cl->close_after = true;
		if (update_events(cl) < 0)
			client_free(cl);
		return;
	}
	n = snprintf(line, sizeof(line), "{\"ok\":false,\"code\":\"%s\",\"error\":\"%s\"}\n", code,
		     msg);
	if (n > 0 && send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client is gone already: nothing to tell */
	}
	close(fd);
}

/* Why peer may not connect now (its own limit or root's reserve), or NULL. */
static const char *no_room(const struct fsd_control *c, const struct fsd_control_peer *peer,
			   char *buf, size_t len)
{
	unsigned same = 0;

	if (c->n_clients >= c->o.max_clients)
		return "too many control connections, try again";
	if (peer->uid == 0)
		return NULL;
	if (c->n_clients >= c->o.max_clients - c->o.root_reserved)
		return "the remaining control connections are kept for root, try again";
	for (const struct client *cl = c->clients; cl; cl = cl->next)
		same += !cl->refused && cl->peer.uid == peer->uid;
	if (same < c->o.max_per_uid)
		return NULL;
	snprintf(buf, len, "uid %u has %u control connections open, the most one user may",
		 (unsigned)peer->uid, same);
	return buf;
}

int fsd_control_peercred(int fd, struct fsd_control_peer *peer)
{
	struct ucred uc;
	socklen_t ul = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0)
		return -errno;
	*peer = (struct fsd_control_peer){uc.pid, uc.uid, uc.gid};
	return 0;
}

static int on_accept(sd_event_source *s, int lfd, uint32_t revents, void *userdata)
{
	struct fsd_control *c = userdata;
	struct fsd_control_peer peer = {0};
	struct client *cl;
	const char *why;
	char msg[128];
	int fd;

	(void)s;
	(void)revents;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return 0; /* EAGAIN, ECONNABORTED, EMFILE: try again next time */
	if (c->o.peer_cred(fd, &peer) < 0) {
		refuse(c, fd, &peer, FSD_CODE_FAILED, "cannot read peer credentials");
		return 0;
	}
	why = no_room(c, &peer, msg, sizeof(msg));
	if (why)
		refuse(c, fd, &peer, FSD_CODE_BUSY, why);
	else if (client_new(c, fd, &peer, false, &cl) < 0)
		refuse(c, fd, &peer, FSD_CODE_FAILED, "out of memory");
	return 0;
}

static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A socket file nobody listens on is stale (a crashed daemon's). */
static int clear_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r = 0;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		r = -EADDRINUSE;
	else if (errno == ECONNREFUSED && unlink(sa->sun_path) < 0 && errno != ENOENT)
		r = -errno;
	close(fd);
	return r;
}

int fsd_control_open(struct fsd_control **out, sd_event *e, const struct fsd_control_opts *o,
		     char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct fsd_control *c;
	const char *what = "";
	struct group *g;
	int r;

	*out = NULL;
	if (!o->path || !o->path[0] || strlen(o->path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path empty or longer than %zu bytes",
			 o->path ? o->path : "(null)", sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", o->path);
		return -ENOMEM;
	}
	c->fd = -1;
	c->o = *o;
	if (!c->o.max_clients)
		c->o.max_clients = FSD_CONTROL_MAX_CLIENTS;
	if (!c->o.root_reserved)
		c->o.root_reserved = FSD_CONTROL_ROOT_RESERVED;
	if (c->o.root_reserved >= c->o.max_clients)
		c->o.root_reserved = c->o.max_clients - 1;
	if (!c->o.max_per_uid)
		c->o.max_per_uid = (c->o.max_clients - c->o.root_reserved + 1) / 2;
	if (!c->o.max_line)
		c->o.max_line = FSD_CONTROL_MAX_LINE;
	if (!c->o.timeout_us)
		c->o.timeout_us = FSD_CONTROL_TIMEOUT_US;
	if (!c->o.mode)
		c->o.mode = 0660;
	if (!c->o.peer_cred)
		c->o.peer_cred = fsd_control_peercred;
	c->event = sd_event_ref(e);
	strcpy(sa.sun_path, o->path);
	r = make_parent(o->path);
	if (r < 0) {
		what = "creating its directory";
		goto fail;
	}
	r = clear_stale(&sa);
	if (r < 0) {
		what = r == -EADDRINUSE ? "another fairshared is listening there"
		       : r == -EEXIST	? "exists and is not a socket"
					: "removing the stale socket";
		goto fail;
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		what = "socket";
		goto fail;
	}
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		what = "bind";
		goto fail;
	}
	snprintf(c->path, sizeof(c->path), "%s", o->path);
	/* chmod after bind: the umask must not widen or narrow the mode */
	if (chmod(c->path, c->o.mode) < 0) {
		r = -errno;
		what = "chmod";
		goto fail;
	}
	g = getgrnam(o->group ? o->group : FSD_CONTROL_DEFAULT_GROUP);
	if (g && chown(c->path, (uid_t)-1, g->gr_gid) < 0) {
		r = -errno;
		what = "chgrp";
		goto fail;
	}
	if (listen(c->fd, 64) < 0) {
		r = -errno;
		what = "listen";
		goto fail;
	}
	r = sd_event_add_io(e, &c->listen, c->fd, EPOLLIN, on_accept, c);
	if (r < 0) {
		what = "adding to the event loop";
		goto fail;
	}
	*out = c;
	return 0;
fail:
	snprintf(err, errlen, "control socket %s: %s: %s", o->path, what, strerror(-r));
	fsd_control_free(c);
	return r;
}

void fsd_control_free(struct fsd_control *c)
{
	if (!c)
		return;
	while (c->clients)
		client_free(c->clients);
	sd_event_source_disable_unref(c->listen);
	if (c->fd >= 0)
		close(c->fd);
	if (c->path[0])
		unlink(c->path);
	sd_event_unref(c->event);
	free(c);
}

unsigned fsd_control_clients(const struct fsd_control *c)
{
	return c ? c->n_clients : 0;
}
