/* SPDX-License-Identifier: MIT */
/*
 * fairshared's control socket: a Unix stream socket in the daemon's sd-event
 * loop. One JSON object per line in, one per line out:
 *     {"command": "status"}                  -> {"ok": true, ...}
 *     {"command": "explain", "tenant": "a"}  -> {"ok": true, ...}
 *     anything wrong                         -> {"ok": false, "code": "...", "error": "..."}
 * The server knows nothing about fair sharing: the caller hands it a table
 * of commands; a privileged command runs only for a peer with uid 0
 * (SO_PEERCRED, read at accept time).
 *
 * Why it cannot stall the daemon: every socket is non-blocking and driven by
 * sd-event; a request line is at most max_line bytes (longer: an error and
 * the connection is closed, see below); a client gets timeout_us to send a request and
 * read the answer, measured from the connection or its previous answer (so a
 * trickling or silent client is dropped); at most max_clients connections,
 * further ones get an error and are closed; while an answer is unread the
 * client's further input is not read (back-pressure, bounded memory).
 *
 * A connection closed with an error ("too-long", "busy") is shut down after
 * the error and its input read away until the client closes (at most
 * timeout_us; a refused one 1 s): a close with input unread would reset it,
 * and the client would get EPIPE or ECONNRESET instead of the reason.
 *
 * Why no user can lock root out: the last root_reserved connections are for
 * uid 0 only (fairctl reload/release must get through), and one uid holds at
 * most max_per_uid (so one member of the group cannot lock out the others).
 */
#ifndef FAIRSHARE_AGENT_CONTROL_H
#define FAIRSHARE_AGENT_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#define FSD_CONTROL_DEFAULT_GROUP "fairshare"
#define FSD_CONTROL_MAX_LINE	  4096
#define FSD_CONTROL_MAX_CLIENTS	  16
#define FSD_CONTROL_TIMEOUT_US	  (5 * 1000000ULL)
#define FSD_CONTROL_ROOT_RESERVED 2
/* an answer larger than this is an error: status is ~600 bytes a tenant, so
 * this covers some 100,000 tenants */
#define FSD_CONTROL_MAX_RESPONSE (64u << 20)

/* Error codes in "code" (stable; fairctl maps them to messages). */
#define FSD_CODE_BAD_REQUEST	 "bad-request"
#define FSD_CODE_UNKNOWN_COMMAND "unknown-command"
#define FSD_CODE_PERMISSION	 "permission"
#define FSD_CODE_NOT_FOUND	 "not-found"
#define FSD_CODE_TOO_LONG	 "too-long"
#define FSD_CODE_TIMEOUT	 "timeout"
#define FSD_CODE_BUSY		 "busy"
#define FSD_CODE_FAILED		 "failed"

struct fsd_control_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/*
 * A command: fills resp (an object; "ok" is added by the server) and returns
 * 0, or a negative errno with err filled: -EINVAL = bad request,
 * -ENOENT = not found, -EPERM = permission, anything else = failed.
 */
typedef int (*fsd_control_fn)(void *ctx, const struct fsd_control_peer *peer,
			      struct json_object *req, struct json_object *resp, char *err,
			      size_t errlen);

struct fsd_control_cmd {
	const char *name;
	bool privileged; /* uid 0 only */
	fsd_control_fn run;
};

struct fsd_control_opts {
	const char *path;     /* socket path; its directory is created (0755) if missing */
	mode_t mode;	      /* 0: 0660 */
	const char *group;    /* chgrp to this group when it exists; NULL: "fairshare" */
	unsigned max_clients; /* 0: FSD_CONTROL_MAX_CLIENTS */
	/* of them for uid 0 only; 0: FSD_CONTROL_ROOT_RESERVED (fewer than
	 * max_clients) */
	unsigned root_reserved;
	unsigned max_per_uid; /* connections of one other uid; 0: half the rest */
	size_t max_line;      /* 0: FSD_CONTROL_MAX_LINE */
	uint64_t timeout_us;  /* 0: FSD_CONTROL_TIMEOUT_US */
	const struct fsd_control_cmd *cmds;
	size_t n_cmds;
	void *ctx; /* passed to every command */
	/* who connected; NULL: fsd_control_peercred. Tests inject peers of
	 * other uids here, root or not, whoever runs them. */
	int (*peer_cred)(int fd, struct fsd_control_peer *peer);
};

/* The peer's credentials at connect time (SO_PEERCRED). 0 or -errno. */
int fsd_control_peercred(int fd, struct fsd_control_peer *peer);

struct fsd_control;

/*
 * Binds the socket and adds it to e. A stale socket file (nobody answers) is
 * replaced; a live one is -EADDRINUSE (another daemon runs). 0 or -errno
 * with err filled ("PATH: reason").
 */
int fsd_control_open(struct fsd_control **out, sd_event *e, const struct fsd_control_opts *o,
		     char *err, size_t errlen);
/* Closes every connection and removes the socket file. NULL is fine. */
void fsd_control_free(struct fsd_control *c);

/* Connections open now (for tests and status). */
unsigned fsd_control_clients(const struct fsd_control *c);

#endif /* FAIRSHARE_AGENT_CONTROL_H */
