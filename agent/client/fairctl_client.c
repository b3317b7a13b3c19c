/* SPDX-License-Identifier: MIT */
/* fairctl's control socket client (see fairctl_client.h). */
#include "fairctl_client.h"
#include "fairctl.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The answer grows with the daemon's tenants, which have no fixed limit, so
 * the buffer may grow up to what json_tokener_parse accepts (INT32_MAX bytes,
 * plus our '\0'); a daemon that never ends its line runs into the deadline. */
#define MAX_ANSWER ((size_t)INT32_MAX + 1)

const char *fctl_socket_path(const char *opt)
{
	const char *e = getenv(FAIRCTL_SOCKET_ENV);

	if (opt && opt[0])
		return opt;
	return e && e[0] ? e : FAIRCTL_DEFAULT_SOCKET;
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_to(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	r = -errno;
	close(fd);
	switch (r) {
	case -ENOENT:
		snprintf(err, errlen,
			 "cannot reach fairshared: %s does not exist (is fairshared running? "
			 "systemctl status fairshared; or give --socket PATH)",
			 path);
		break;
	case -ECONNREFUSED:
		snprintf(err, errlen,
			 "cannot reach fairshared: nobody listens on %s (fairshared is not "
			 "running; the socket is stale)",
			 path);
		break;
	case -EACCES:
	case -EPERM:
		r = -EACCES;
		snprintf(err, errlen,
			 "cannot reach fairshared: permission denied on %s (run as root or as "
			 "a member of group fairshare)",
			 path);
		break;
	default:
		snprintf(err, errlen, "cannot reach fairshared at %s: %s", path, strerror(-r));
	}
	return r;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one line (the answer) into a malloc'd string. */
static int read_line(int fd, char **out, char *err, size_t errlen)
{
	long long deadline = ms_now() + FAIRCTL_TIMEOUT_MS;
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long long left = deadline - ms_now();
		char *nl;
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			snprintf(err, errlen, "fairshared did not answer within %d s",
				 FAIRCTL_TIMEOUT_MS / 1000);
			free(buf);
			return -ETIMEDOUT;
		}
		if (len + 1 >= cap) {
			char *nb = cap < MAX_ANSWER ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				r = cap < MAX_ANSWER ? -ENOMEM : -EPROTO;
				snprintf(err, errlen, "%s after %zu bytes of the answer",
					 r == -ENOMEM ? "out of memory" : "answer too large", len);
				free(buf);
				return r;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen,
				 "fairshared closed the connection without answering%s%s",
				 n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			free(buf);
			return -EPROTO;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			*out = buf;
			return 0;
		}
	}
}

int fctl_request(const char *socket_path, const char *command, struct json_object *extra,
		 struct json_object **resp, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *ans = NULL, *v;
	char *line = NULL;
	const char *s;
	int fd = -1, r;

	*resp = NULL;
	if (!req)
		return -ENOMEM;
	json_object_object_add(req, "command", json_object_new_string(command));
	if (extra) {
		json_object_object_foreach(extra, key, val)
		    json_object_object_add(req, key, json_object_get(val));
	}
	fd = connect_to(socket_path, err, errlen);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	r = send_all(fd, s, strlen(s));
	if (r == 0)
		r = send_all(fd, "\n", 1);
	if (r < 0) {
		snprintf(err, errlen, "sending to fairshared: %s", strerror(-r));
		goto out;
	}
	r = read_line(fd, &line, err, errlen);
	if (r < 0)
		goto out;
	ans = json_tokener_parse(line);
	if (!ans || !json_object_is_type(ans, json_type_object) ||
	    !json_object_object_get_ex(ans, "ok", &v)) {
		snprintf(err, errlen, "fairshared sent an answer that is not a JSON object");
		r = -EPROTO;
		goto out;
	}
	if (!json_object_get_boolean(v)) {
		struct json_object *code = NULL, *msg = NULL;

		json_object_object_get_ex(ans, "code", &code);
		json_object_object_get_ex(ans, "error", &msg);
		r = code && !strcmp(json_object_get_string(code), "permission") ? -EPERM
										: -EREMOTEIO;
		snprintf(err, errlen, "%s%s", r == -EPERM ? "permission denied: " : "",
			 msg ? json_object_get_string(msg) : "fairshared reported an error");
		goto out;
	}
	*resp = ans;
	ans = NULL;
	r = 0;
out:
	json_object_put(ans);
	json_object_put(req);
	free(line);
	if (fd >= 0)
		close(fd);
	return r;
}

int fctl_view_options(int argc, char **argv, void (*usage)(FILE *out), bool *json,
		      const char **sock)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "js:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 's':
			*sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return FAIRCTL_EXIT_OK;
		default:
			usage(stderr);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	return -1;
}

void fctl_print_answer(struct json_object *resp)
{
	json_object_object_del(resp, "ok");
	printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_SPACED));
}
