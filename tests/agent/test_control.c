/* SPDX-License-Identifier: MIT */
/*
 * The control socket server (agent/control.c) in a forked child running its
 * own sd-event loop, with test commands: "echo" (read-only, answers the
 * request back), "poke" (privileged) and "missing" (fails with -ENOENT).
 * Limits are small so the tests are quick: 256-byte lines, 4 clients (1 for
 * root only, 2 a user), 1 s per request. Checks the answers to good,
 * malformed, oversized, unknown and NUL-carrying requests (raw or escaped
 * \u0000), of JSON that is no request object (null, trailing text), that a
 * silent client neither stalls others nor stays forever, the client cap with
 * root's reserve and the per-uid cap, the peer's uid (privileged refused for
 * uid nobody, allowed for root: uids injected, so this runs unprivileged; the
 * real SO_PEERCRED as root only), and stale/live socket handling at open.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "control.h"

#define MAX_LINE    256
#define MAX_CLIENTS 4
#define ROOT_SLOTS  1 /* of them for root only */
#define PER_UID	    2
#define TIMEOUT_US  1000000

struct fixture {
	char *dir;
	char sock[256];
	pid_t server;
};

static int cmd_echo(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		    struct json_object *resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	json_object_object_add(resp, "echo", json_object_get(req));
	json_object_object_add(resp, "uid", json_object_new_int((int)peer->uid));
	return 0;
}

static int cmd_poke(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		    struct json_object *resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)peer;
	(void)req;
	(void)err;
	(void)errlen;
	json_object_object_add(resp, "poked", json_object_new_boolean(1));
	return 0;
}

static int cmd_missing(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		       struct json_object *resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)peer;
	(void)req;
	(void)resp;
	snprintf(err, errlen, "nothing here");
	return -ENOENT;
}

static const struct fsd_control_cmd cmds[] = {
    {"echo", false, cmd_echo},
    {"poke", true, cmd_poke},
    {"missing", false, cmd_missing},
};

/*
 * The test's peers: a client bound to the abstract address
 * "\0" FAKE_UID_TAG "<uid>-..." (connect_as) is taken for that uid, so the
 * uid checks run whoever runs the test; any other client is who it is.
 */
#define FAKE_UID_TAG "fairshare-test-uid-"

static int fake_peer_cred(int fd, struct fsd_control_peer *peer)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa);
	unsigned uid;
	int r = fsd_control_peercred(fd, peer);

	if (r < 0)
		return r;
	memset(&sa, 0, sizeof(sa));
	if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0 &&
	    sl > offsetof(struct sockaddr_un, sun_path) + 1 && sa.sun_path[0] == '\0' &&
	    sscanf(sa.sun_path + 1, FAKE_UID_TAG "%u-", &uid) == 1)
		peer->uid = (uid_t)uid;
	return 0;
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
	(void)si;
	(void)u;
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void run_server(const char *path)
{
	struct fsd_control_opts o = {
	    .path = path,
	    .mode = 0666, /* the nobody test reaches the socket; SO_PEERCRED decides */
	    .max_clients = MAX_CLIENTS,
	    .root_reserved = ROOT_SLOTS,
	    .max_per_uid = PER_UID,
	    .max_line = MAX_LINE,
	    .timeout_us = TIMEOUT_US,
	    .cmds = cmds,
	    .n_cmds = sizeof(cmds) / sizeof(cmds[0]),
	    .peer_cred = fake_peer_cred,
	};
	struct fsd_control *c = NULL;
	sd_event *e = NULL;
	sigset_t ss;
	char err[512];
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (sd_event_new(&e) < 0 || sd_event_add_signal(e, NULL, SIGTERM, on_term, NULL) < 0)
		_exit(3);
	r = fsd_control_open(&c, e, &o, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		_exit(4);
	}
	r = sd_event_loop(e);
	fsd_control_free(c);
	sd_event_unref(e);
	_exit(r < 0 ? 5 : 0);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* A connection the server takes for uid's (fake_peer_cred). */
static int connect_as(const char *path, unsigned uid)
{
	static unsigned seq;
	struct sockaddr_un me = {.sun_family = AF_UNIX}, sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), n;

	if (fd < 0)
		return -errno;
	n = snprintf(me.sun_path + 1, sizeof(me.sun_path) - 1, FAKE_UID_TAG "%u-%d-%u", uid,
		     (int)getpid(), seq++);
	strcpy(sa.sun_path, path);
	if (bind(fd, (struct sockaddr *)&me,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct stat st;

	assert_non_null(f);
	f->dir = at_mkdtemp();
	chmod(f->dir, 0755); /* uid nobody must reach the socket */
	snprintf(f->sock, sizeof(f->sock), "%s/run/control.sock", f->dir);
	f->server = fork();
	assert_true(f->server >= 0);
	if (f->server == 0)
		run_server(f->sock);
	/* bound is not yet listening: wait until a connection works */
	for (int i = 0; i < 300; i++) {
		int fd = connect_to(f->sock);

		if (fd >= 0) {
			close(fd);
			break;
		}
		usleep(10000);
	}
	assert_int_equal(stat(f->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int status;

	kill(f->server, SIGTERM);
	assert_int_equal(waitpid(f->server, &status, 0), f->server);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static void send_bytes(int fd, const char *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void send_str(int fd, const char *s)
{
	send_bytes(fd, s, strlen(s));
}

/* One answer line within ms, parsed; NULL on EOF. Fails the test on timeout. */
static struct json_object *read_answer(int fd, int ms)
{
	static char buf[65536];
	size_t len = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		char *nl;

		if (poll(&p, 1, ms) != 1)
			fail_msg("no answer within %d ms", ms);
		n = recv(fd, buf + len, 1, 0); /* byte by byte: never eat the next line */
		if (n <= 0)
			return NULL;
		len += (size_t)n;
		assert_true(len < sizeof(buf));
		nl = memchr(buf, '\n', len);
		if (nl) {
			struct json_object *o;

			*nl = '\0';
			o = json_tokener_parse(buf);
			assert_non_null(o);
			return o;
		}
	}
}

static bool is_ok(struct json_object *o)
{
	struct json_object *v;

	return json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v);
}

static const char *code_of(struct json_object *o)
{
	struct json_object *v;

	return json_object_object_get_ex(o, "code", &v) ? json_object_get_string(v) : "";
}

/* The server closed the connection in order: EOF, not ECONNRESET. */
static void expect_eof(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	assert_int_equal(poll(&p, 1, 3000), 1);
	assert_int_equal(recv(fd, &c, 1, 0), 0);
}

static const char *error_of(struct json_object *o)
{
	struct json_object *v;

	return json_object_object_get_ex(o, "error", &v) ? json_object_get_string(v) : "";
}

/* The next answer on fd is ok. */
static void expect_ok(int fd)
{
	struct json_object *o = read_answer(fd, 3000);

	assert_non_null(o);
	if (!is_ok(o))
		fail_msg("not ok: %s", error_of(o));
	json_object_put(o);
}

/* Sends line to a fresh connection; checks the answer's "code" ("" = ok)
 * and that its error message contains msg (NULL: any). */
static void expect_error(const struct fixture *f, const char *line, const char *code,
			 const char *msg)
{
	int fd = connect_to(f->sock);
	struct json_object *o;

	assert_true(fd >= 0);
	send_str(fd, line);
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), code);
	assert_true(is_ok(o) == !code[0]);
	if (msg && !strstr(error_of(o), msg))
		fail_msg("%s: error \"%s\" lacks \"%s\"", line, error_of(o), msg);
	json_object_put(o);
	close(fd);
}

static void expect_code(const struct fixture *f, const char *line, const char *code)
{
	expect_error(f, line, code, NULL);
}

static void test_good_requests_pipelined(void **state)
{
	struct fixture *f = *state;
	int fd = connect_to(f->sock);
	struct json_object *o, *echo, *x;

	assert_true(fd >= 0);
	/* two requests in one write: two answers, in order */
	send_str(fd, "{\"command\":\"echo\",\"x\":1}\n{\"command\":\"echo\",\"x\":2}\r\n");
	for (int i = 1; i <= 2; i++) {
		o = read_answer(fd, 3000);
		assert_non_null(o);
		assert_true(is_ok(o));
		assert_true(json_object_object_get_ex(o, "echo", &echo));
		assert_true(json_object_object_get_ex(echo, "x", &x));
		assert_int_equal(json_object_get_int(x), i);
		json_object_put(o);
	}
	close(fd);
	expect_code(f, "{\"command\":\"missing\"}\n", FSD_CODE_NOT_FOUND);
}

static void test_malformed_keeps_connection(void **state)
{
	struct fixture *f = *state;
	int fd = connect_to(f->sock);
	struct json_object *o;

	assert_true(fd >= 0);
	send_str(fd, "{\"command\": \"echo\"\n");
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_BAD_REQUEST);
	json_object_put(o);
	/* the same connection still serves */
	send_str(fd, "{\"command\":\"echo\"}\n");
	expect_ok(fd);
	close(fd);

	expect_code(f, "[1, 2]\n", FSD_CODE_BAD_REQUEST);
	expect_code(f, "{\"command\": 5}\n", FSD_CODE_BAD_REQUEST);
	expect_code(f, "\"status\"\n", FSD_CODE_BAD_REQUEST);
	expect_code(f, "{\"cmd\":\"echo\"}\n", FSD_CODE_BAD_REQUEST);
	expect_code(f, "{\"command\":\"rm -rf\"}\n", FSD_CODE_UNKNOWN_COMMAND);
}

/* Well-formed JSON that is no request, and text after the request object. */
static void test_null_and_trailing_refused(void **state)
{
	struct fixture *f = *state;
	const char *shape = "a request is a JSON object";

	expect_error(f, "null\n", FSD_CODE_BAD_REQUEST, shape);
	expect_error(f, " null \n", FSD_CODE_BAD_REQUEST, shape);
	expect_error(f, "5\n", FSD_CODE_BAD_REQUEST, shape);
	expect_error(f, "true\n", FSD_CODE_BAD_REQUEST, shape);
	expect_error(f, "{\"command\":\"echo\"} junk\n", FSD_CODE_BAD_REQUEST, "after the request");
	expect_error(f, "{\"command\":\"echo\"}{\"command\":\"poke\"}\n", FSD_CODE_BAD_REQUEST,
		     "after the request");
	expect_error(f, "{\"command\":\"echo\"\n", FSD_CODE_BAD_REQUEST, "malformed JSON: ");
	expect_code(f, "{\"command\":\"echo\"} \t\n", "");
}

/* \u0000 would cut a string short in every C reader of the request. */
static void test_escaped_nul_refused(void **state)
{
	struct fixture *f = *state;
	const char *nul = "escaped NUL";

	expect_error(f, "{\"command\":\"echo\",\"tenant\":\"a\\u0000junk\"}\n",
		     FSD_CODE_BAD_REQUEST, nul);
	expect_error(f, "{\"command\":\"echo\\u0000poke\"}\n", FSD_CODE_BAD_REQUEST, nul);
	expect_error(f, "{\"command\":\"echo\",\"a\\u0000b\":1}\n", FSD_CODE_BAD_REQUEST, nul);
	expect_error(f, "{\"command\":\"echo\",\"t\":\"\\\\\\u0000\"}\n", FSD_CODE_BAD_REQUEST,
		     nul);
	/* an escaped backslash followed by the text u0000 is no NUL */
	expect_code(f, "{\"command\":\"echo\",\"t\":\"\\\\u0000\"}\n", "");
	expect_code(f, "{\"command\":\"echo\",\"t\":\"\\u0001\"}\n", "");
}

static void test_nul_byte_refused(void **state)
{
	struct fixture *f = *state;
	int fd = connect_to(f->sock);
	static const char line[] = "{\"command\":\"echo\"}\0{\"command\":\"poke\"}\n";
	struct json_object *o;

	assert_true(fd >= 0);
	send_bytes(fd, line, sizeof(line) - 1);
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_BAD_REQUEST);
	json_object_put(o);
	close(fd);
}

/* The client writes its whole oversized request (more than the socket
 * buffers hold) before it reads: its send must not fail, and it must read
 * why, then an orderly close. */
static void test_oversized_line_closes(void **state)
{
	struct fixture *f = *state;
	int fd = connect_to(f->sock);
	size_t len = 1u << 20; /* 5 times a Unix socket's send buffer */
	char *big = malloc(len);
	struct json_object *o;

	assert_true(fd >= 0);
	assert_non_null(big);
	memset(big, 'x', len);
	send_bytes(fd, big, len); /* no newline */
	free(big);
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_TOO_LONG);
	json_object_put(o);
	expect_eof(fd);
	close(fd);
	expect_code(f, "{\"command\":\"echo\"}\n", ""); /* the server is fine */
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void test_silent_client_does_not_stall(void **state)
{
	struct fixture *f = *state;
	int silent = connect_to(f->sock), partial = connect_to(f->sock);
	struct json_object *o;
	struct timespec t0;

	assert_true(silent >= 0 && partial >= 0);
	send_str(partial, "{\"command\":"); /* half a request, then nothing */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_code(f, "{\"command\":\"echo\"}\n", "");
	assert_true(ms_since(&t0) < TIMEOUT_US / 2000.0); /* not waiting for them */
	/* both are dropped after the timeout, with a reason */
	o = read_answer(silent, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_TIMEOUT);
	json_object_put(o);
	assert_null(read_answer(silent, 3000));
	o = read_answer(partial, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_TIMEOUT);
	json_object_put(o);
	assert_true(ms_since(&t0) >= TIMEOUT_US / 1000.0 * 0.9);
	close(silent);
	close(partial);
}

/* A connection of uid's that the server answers (accepted, not refused). */
static int served_as(const struct fixture *f, unsigned uid)
{
	int fd = connect_as(f->sock, uid);

	assert_true(fd >= 0);
	send_str(fd, "{\"command\":\"echo\"}\n");
	expect_ok(fd);
	return fd;
}

/*
 * A connection of uid's is refused as busy, with msg in the reason. The
 * client sends its request only once the refusal is there (as a client does
 * that connects, and writes a moment later): the send must not fail and the
 * reason must be read, then an orderly close.
 */
static void refused_as(const struct fixture *f, unsigned uid, const char *msg)
{
	int fd = connect_as(f->sock, uid);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct json_object *o;

	assert_true(fd >= 0);
	assert_int_equal(poll(&p, 1, 3000), 1);
	usleep(20000); /* the server is done with the connection */
	send_str(fd, "{\"command\":\"echo\"}\n");
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_BUSY);
	if (!strstr(error_of(o), msg))
		fail_msg("uid %u: \"%s\" lacks \"%s\"", uid, error_of(o), msg);
	json_object_put(o);
	expect_eof(fd);
	close(fd);
}

static void test_client_cap(void **state)
{
	struct fixture *f = *state;
	int fds[MAX_CLIENTS];

	for (int i = 0; i < MAX_CLIENTS; i++)
		fds[i] = served_as(f, 0); /* root may take every slot */
	refused_as(f, 0, "too many");
	close(fds[0]);
	usleep(100000); /* the server sees the close */
	expect_code(f, "{\"command\":\"echo\"}\n", "");
	for (int i = 1; i < MAX_CLIENTS; i++)
		close(fds[i]);
}

/* Users holding every connection they may cannot lock root out, nor one
 * user the others. */
static void test_root_keeps_a_slot(void **state)
{
	struct fixture *f = *state;
	int a[PER_UID], b, root;

	for (int i = 0; i < PER_UID; i++)
		a[i] = served_as(f, 1000);
	refused_as(f, 1000, "uid 1000 has 2 control connections open");
	b = served_as(f, 1001); /* user 1000 did not take everything */
	refused_as(f, 1001, "kept for root");
	refused_as(f, 1002, "kept for root");
	root = served_as(f, 0);
	send_str(root, "{\"command\":\"poke\"}\n");
	expect_ok(root);
	refused_as(f, 0, "too many");
	close(root);
	close(b);
	for (int i = 0; i < PER_UID; i++)
		close(a[i]);
}

/* Privileged commands: refused for uid nobody, allowed for root (peer uids
 * injected: runs unprivileged too). */
static void test_privileged_needs_root(void **state)
{
	struct fixture *f = *state;
	int fd = connect_as(f->sock, 65534), root = connect_as(f->sock, 0);
	struct json_object *o;

	assert_true(fd >= 0 && root >= 0);
	send_str(fd, "{\"command\":\"poke\"}\n{\"command\":\"echo\"}\n");
	o = read_answer(fd, 3000);
	assert_non_null(o);
	assert_string_equal(code_of(o), FSD_CODE_PERMISSION);
	assert_non_null(strstr(error_of(o), "peer uid 65534"));
	json_object_put(o);
	expect_ok(fd); /* read-only commands still work */
	send_str(root, "{\"command\":\"poke\"}\n");
	expect_ok(root);
	close(fd);
	close(root);
}

/* The real SO_PEERCRED path (no injected uid): needs root to become nobody. */
static void test_peercred_real_uid(void **state)
{
	struct fixture *f = *state;
	pid_t pid;
	int status;

	if (geteuid() != 0)
		skip();
	expect_code(f, "{\"command\":\"poke\"}\n", "");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct json_object *o;
		int fd, bad;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		fd = connect_to(f->sock);
		if (fd < 0)
			_exit(11);
		send_str(fd, "{\"command\":\"poke\"}\n");
		o = read_answer(fd, 3000);
		bad = !o || is_ok(o) || strcmp(code_of(o), FSD_CODE_PERMISSION);
		json_object_put(o);
		_exit(bad ? 12 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_open_live_and_stale(void **state)
{
	struct fixture *f = *state;
	struct fsd_control_opts o = {.cmds = cmds, .n_cmds = 1};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct fsd_control *c = NULL;
	char stale[300], err[512];
	sd_event *e = NULL;
	int fd;

	assert_true(sd_event_new(&e) >= 0);
	o.path = f->sock; /* the server child listens there */
	assert_int_equal(fsd_control_open(&c, e, &o, err, sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, "another fairshared"));
	assert_null(c);

	/* a socket file nobody listens on (a crashed daemon's) is replaced */
	snprintf(stale, sizeof(stale), "%s/stale.sock", f->dir);
	strcpy(sa.sun_path, stale);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	o.path = stale;
	assert_int_equal(fsd_control_open(&c, e, &o, err, sizeof(err)), 0);
	assert_int_equal(fsd_control_clients(c), 0);
	fsd_control_free(c);
	assert_int_equal(access(stale, F_OK), -1); /* removed on close */

	/* a regular file is not ours to remove */
	at_write(f->dir, "plain", "x");
	snprintf(stale, sizeof(stale), "%s/plain", f->dir);
	o.path = stale;
	assert_int_equal(fsd_control_open(&c, e, &o, err, sizeof(err)), -EEXIST);
	assert_int_equal(access(stale, F_OK), 0);
	sd_event_unref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_good_requests_pipelined, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed_keeps_connection, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_null_and_trailing_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_escaped_nul_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nul_byte_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_oversized_line_closes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_silent_client_does_not_stall, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_client_cap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_keeps_a_slot, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_privileged_needs_root, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_peercred_real_uid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_live_and_stale, setup, teardown),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
