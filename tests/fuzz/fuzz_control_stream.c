/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the control server (publish/control.c) as a client sees
 * it: the input is sent over a real connection in chunks (the first byte
 * picks their size), then the client shuts down its side and reads until the
 * server closes. Covers the line framing (partial, pipelined, CR, NUL,
 * overlong lines), the answers, and the closing after a fatal error
 * (shutdown and drain). Every answer must be a JSON object with "ok", and
 * the server must close each connection and free its slot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "clock.h"
#include "fuzz_input.h"

static int cmd_echo(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		    struct json_object *resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)peer;
	(void)err;
	(void)errlen;
	json_object_object_add(resp, "echo", json_object_get(req));
	return 0;
}

static int cmd_fail(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		    struct json_object *resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)peer;
	(void)req;
	(void)resp;
	snprintf(err, errlen, "fails");
	return -ENOENT;
}

static const struct fsd_control_cmd cmds[] = {
    {"echo", false, cmd_echo}, {"poke", true, cmd_echo}, {"fail", false, cmd_fail}};

static sd_event *event;
static struct fsd_control *server;
static struct sockaddr_un addr = {.sun_family = AF_UNIX};
static char dir[] = "/tmp/fairshare-fuzz-ctl-XXXXXX";

static void stop(void)
{
	fsd_control_free(server);
	sd_event_unref(event);
	rmdir(dir);
}

static void start(void)
{
	struct fsd_control_opts o = {
	    .path = addr.sun_path,
	    .max_line = 256, /* overlong lines within the fuzzer's reach */
	    .timeout_us = 5000000,
	    .cmds = cmds,
	    .n_cmds = sizeof(cmds) / sizeof(cmds[0]),
	};
	char err[512];

	if (!mkdtemp(dir) || sd_event_new(&event) < 0)
		abort();
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/control.sock", dir);
	if (fsd_control_open(&server, event, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	atexit(stop);
}

/* Checks the complete answer lines in buf[0..*len) and drops them. */
static void check_answers(char *buf, size_t *len)
{
	char *nl;

	while ((nl = memchr(buf, '\n', *len))) {
		struct json_object *o, *ok;

		*nl = '\0';
		o = json_tokener_parse(buf);
		if (!o || !json_object_object_get_ex(o, "ok", &ok))
			abort(); /* the server answered something that is no answer */
		json_object_put(o);
		*len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char answers[1 << 16];
	size_t sent = 0, chunk, alen = 0;
	uint64_t deadline;
	bool shut = false;
	int fd;

	if (size < 1)
		return 0;
	if (!server)
		start();
	chunk = 1 + data[0] % 128u;
	data++, size--;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		abort();
	deadline = fs_monotonic_us() + 20000000; /* a hang is a finding */
	for (;;) {
		ssize_t n;

		if (sent < size) {
			size_t want = size - sent < chunk ? size - sent : chunk;

			n = send(fd, data + sent, want, MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
			else if (errno != EAGAIN)
				abort(); /* EPIPE/ECONNRESET: the server closed on input unread */
		} else if (!shut) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
		n = recv(fd, answers + alen, sizeof(answers) - 1 - alen, 0);
		if (n == 0)
			break; /* closed in order */
		if (n < 0 && errno != EAGAIN)
			abort(); /* reset: answers may be lost */
		if (n > 0) {
			alen += (size_t)n;
			check_answers(answers, &alen);
			if (alen >= sizeof(answers) - 1)
				abort(); /* an answer line longer than any should be */
		}
		if (sd_event_run(event, 0) < 0 || fs_monotonic_us() > deadline)
			abort();
	}
	close(fd);
	if (alen)
		abort(); /* the last answer lacks its newline */
	/* the server sees the close: its slot must come back */
	while (fsd_control_clients(server))
		if (sd_event_run(event, 0) < 0 || fs_monotonic_us() > deadline)
			abort();
	return 0;
}
