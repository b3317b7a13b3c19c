/* SPDX-License-Identifier: MIT */
/*
 * fairshared end to end over a fake cgroupfs tree (mkdtemp): --once output,
 * READY=1/STATUS= over our own NOTIFY_SOCKET, dry-run writes nothing, a real
 * run writes the planned values and restores the originals on SIGTERM,
 * SIGHUP with a broken config keeps running, --release after a crash
 * restores, a bad config exits 78.
 *
 * The counters in the fake tree do not move, so usage is 0 and the tenants'
 * demands come from their declared `demand` (cpu 3 and cpu 2 of 4 cores):
 * PS-DSF on one pool (= weighted DRF): 0.75 x_a = 0.5 x_b and
 * 3 x_a + 2 x_b = 4 give x_a = 2/3, x_b = 1: 2 cores each, cpu the only
 * bottleneck -> hard limits "200000 100000", everything else lifted.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
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

#ifndef FAIRSHARED_PATH
#error "FAIRSHARED_PATH must name the fairshared binary"
#endif

struct fixture {
	char *dir;
	char disk[32]; /* "MAJ:MIN" of the fake sysfs's disk */
	char sysroot[600];
	char cg[512], conf[512], state[512], notify[512], log[512], out[512];
	int notify_fd;
};

/* The fixture's NOTIFY_SOCKET, drained while waiting for an exit: the
 * daemon sends STATUS= every period, and once 10 datagrams are unread
 * (net.unix.max_dgram_qlen) its sd_notify blocks and it never sees SIGTERM.
 * A loaded machine (slow test, many periods) made that a flaky failure. */
static int notify_fd = -1;

static const char *const tenants[] = {"a.slice", "b.slice"};

static void fake_cgroup(const char *root, const char *name)
{
	static const struct {
		const char *file, *text;
	} files[] = {
	    {"cpu.stat", "usage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 0\n"
			 "nr_throttled 0\nthrottled_usec 0\n"},
	    {"cpu.max", "max 100000\n"},
	    {"cpu.weight", "50\n"},
	    {"memory.current", "104857600\n"},
	    {"memory.stat", "anon 52428800\nfile 52428800\nactive_anon 0\ninactive_anon 0\n"
			    "active_file 0\ninactive_file 0\n"},
	    {"memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"},
	    {"memory.high", "max\n"},
	    {"memory.max", "max\n"},
	    {"io.stat", ""},
	    {"io.max", ""},
	    {"io.weight", "default 100\n"},
	    {"cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
			     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
	    {"memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
				"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
	    {"io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
			    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
	    {"cgroup.procs", ""},
	};
	char rel[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", name, files[i].file);
		at_write(root, rel, files[i].text);
	}
}

/* io.NAME resolves its disk in sysfs: a fake one (fairshared --sysfs-root),
 * so the test does not depend on the host's disks. */
static void fake_disk(struct fixture *f)
{
	char sys[600];

	snprintf(sys, sizeof(sys), "%s/sys", f->dir);
	at_write(sys, "devices/virtual/block/vda/dev", "254:0\n");
	at_write(sys, "devices/virtual/block/vda/queue/scheduler", "[mq-deadline] none\n");
	at_write(sys, "devices/virtual/block/vda/stat", "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	at_symlink(sys, "dev/block/254:0", "../../devices/virtual/block/vda");
	snprintf(f->disk, sizeof(f->disk), "254:0");
}

static void write_conf(struct fixture *f, const char *extra_agent, const char *b_demand)
{
	char text[2048], io[96] = "";

	if (f->disk[0])
		snprintf(io, sizeof(io), "io.disk0 = %s 100M 50M\n", f->disk);

	snprintf(text, sizeof(text),
		 "[agent]\n"
		 "interval = 100ms\n"
		 "policy = psdsf\n"
		 "cgroup_root = %s\n"
		 "state_dir = %s\n"
		 "socket = %s/control.sock\n"
		 "on_exit = restore\n"
		 /* a fake tree: eBPF would only cost a load per daemon */
		 "sampler = cgroupfs\n"
		 "%s"
		 "\n[resources]\n"
		 "cpu = 4\n"
		 "memory = 8G\n"
		 "%s"
		 "\n[tenant.a]\n"
		 "cgroup = a.slice\n"
		 "demand = cpu 3, memory 1G\n"
		 "\n[tenant.b]\n"
		 "cgroup = b.slice\n"
		 "demand = %s\n",
		 f->cg, f->state, f->state, extra_agent, io, b_demand);
	at_write(f->dir, "fairshare.conf", text);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	assert_non_null(f);
	f->dir = at_mkdtemp();
	snprintf(f->cg, sizeof(f->cg), "%s/cg", f->dir);
	snprintf(f->conf, sizeof(f->conf), "%s/fairshare.conf", f->dir);
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->notify, sizeof(f->notify), "%s/notify", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/daemon.log", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/daemon.out", f->dir);
	fake_disk(f);
	snprintf(f->sysroot, sizeof(f->sysroot), "%s/sys", f->dir);
	at_mkdir(f->dir, "cg");
	/* a cgroup v2 root with the controllers on for its children */
	at_write(f->cg, "cgroup.controllers", "cpuset cpu io memory pids\n");
	at_write(f->cg, "cgroup.subtree_control", "cpu io memory\n");
	for (size_t i = 0; i < 2; i++)
		fake_cgroup(f->cg, tenants[i]);
	write_conf(f, "", "cpu 2, memory 1G");

	f->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->notify_fd >= 0);
	notify_fd = f->notify_fd;
	assert_true(strlen(f->notify) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, f->notify);
	assert_int_equal(bind(f->notify_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->notify_fd);
	notify_fd = -1;
	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static pid_t spawn(struct fixture *f, const char *const *args)
{
	const char *argv[14] = {FAIRSHARED_PATH, "--config", f->conf, "--sysfs-root", f->sysroot};
	size_t n = 5;
	pid_t pid;

	for (; *args && n < 13; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int out = open(f->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int err = open(f->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		setenv("NOTIFY_SOCKET", f->notify, 1);
		setenv("FAIRSHARED_LOG_LEVEL", "debug", 1);
		unsetenv("JOURNAL_STREAM");
		unsetenv("WATCHDOG_USEC");
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	char drop[4096];
	int st;

	for (int i = 0; i < 300; i++) { /* 30 s */
		while (notify_fd >= 0 && recv(notify_fd, drop, sizeof(drop), MSG_DONTWAIT) > 0)
			;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fail_msg("fairshared did not exit");
	return -1;
}

/* Reads notify datagrams until one contains want; returns it (static). */
static const char *wait_notify(struct fixture *f, const char *want)
{
	static char msg[4096];

	for (;;) {
		struct pollfd p = {.fd = f->notify_fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 20000) != 1)
			fail_msg("no \"%s\" on NOTIFY_SOCKET within 20 s", want);
		n = recv(f->notify_fd, msg, sizeof(msg) - 1, 0);
		assert_true(n >= 0);
		msg[n] = '\0';
		if (strstr(msg, want))
			return msg;
	}
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* An io.max line that limits nothing ("" or "MAJ:MIN rbps=max ..."). */
static bool all_max(const char *v)
{
	const char *eq;

	if (!v)
		return false;
	for (eq = strchr(v, '='); eq; eq = strchr(eq + 1, '='))
		if (strncmp(eq + 1, "max", 3))
			return false;
	return true;
}

/* Every file of the fake tree as one string, to see that nothing changed.
 * Trailing newlines are dropped: the kernel adds them on read, the writer
 * restores the value without. */
static char *snapshot(const struct fixture *f)
{
	static const char *const files[] = {"cpu.max",	  "cpu.weight", "memory.high",
					    "memory.max", "io.max",	"io.weight"};
	size_t cap = 8192, used = 0;
	char *s = calloc(1, cap);

	assert_non_null(s);
	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char rel[256];
			const char *v;

			snprintf(rel, sizeof(rel), "cg/%s/%s", tenants[t], files[i]);
			v = at_read(f->dir, rel);
			if (!strcmp(files[i], "io.max") && all_max(v))
				v = "";
			used += (size_t)snprintf(s + used, cap - used, "%s=%.*s|", rel,
						 v ? (int)strcspn(v, "\n") : 6, v ? v : "(none)");
		}
	return s;
}

/* The tree is back to `before` (a snapshot()); frees it. */
static void assert_tree_is(const struct fixture *f, char *before)
{
	char *now = snapshot(f);

	assert_string_equal(before, now);
	free(now);
	free(before);
}

static const char *cg_file(const struct fixture *f, const char *tenant, const char *file)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "cg/%s/%s", tenant, file);
	return at_read(f->dir, rel);
}

static void test_once_dry_run_prints_plan(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"--dry-run", "--once", NULL};
	char *before = snapshot(f);
	const char *out;
	struct stat st;

	assert_int_equal(wait_exit(spawn(f, args)), 0);
	out = slurp(f->out);
	assert_non_null(out);
	assert_non_null(strstr(out, "tenant=a mode=limits x=0.6667"));
	assert_non_null(strstr(out, "tenant=b mode=limits x=1.0000"));
	assert_non_null(strstr(out, "cpu.max=\"200000 100000\""));
	assert_non_null(strstr(out, "memory.high=max memory.max=max"));
	assert_non_null(strstr(out, "write=1"));
	assert_tree_is(f, before);
	assert_int_equal(stat(f->state, &st), -1); /* dry-run: no state dir either */
}

/* --check-config (check.h): exit code and message of each problem, else
 * 0 and each file's current -> planned value; nothing written. */
static int check_config(struct fixture *f, const char **out)
{
	const char *args[] = {"--check-config", NULL};
	int rc = wait_exit(spawn(f, args));

	*out = slurp(f->out);
	assert_non_null(*out);
	return rc;
}

static void test_check_config_ok(void **state)
{
	struct fixture *f = *state;
	char *before = snapshot(f);
	const char *out;
	struct stat st;

	assert_int_equal(check_config(f, &out), 0);
	assert_non_null(strstr(out, "config "));
	assert_null(strstr(out, "problem:"));
	assert_non_null(strstr(out, "a (a.slice):\n"));
	assert_non_null(strstr(out, "  cpu.max        max 100000 -> 200000 100000\n"));
	assert_non_null(strstr(out, "  cpu.weight     50 -> 100\n"));
	assert_non_null(strstr(out, "  memory.max     max -> max (unchanged)\n"));
	assert_non_null(strstr(out,
			       "  io.max         254:0 rbps=max wbps=max riops=max wiops=max -> "
			       "254:0 rbps=max wbps=max riops=max wiops=max (unchanged)\n"));
	assert_non_null(strstr(out, "check: ok"));
	assert_tree_is(f, before);
	assert_int_equal(stat(f->state, &st), -1);
}

static void test_check_config_problems(void **state)
{
	struct fixture *f = *state;
	char path[700], cfg[600];
	const char *out;

	/* a missing disk: 6 */
	write_conf(f, "", "cpu 2, memory 1G");
	snprintf(path, sizeof(path), "%s/dev/block/254:0", f->sysroot);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(check_config(f, &out), 6);
	assert_non_null(strstr(out, "problem: "));
	assert_non_null(strstr(out, "io.disk0: no block device 254:0"));
	at_symlink(f->sysroot, "dev/block/254:0", "../../devices/virtual/block/vda");

	/* a tenant cgroup missing: 5, named */
	snprintf(path, sizeof(path), "%s/cg/b.slice", f->dir);
	at_rmtree(path);
	assert_int_equal(check_config(f, &out), 5);
	assert_non_null(strstr(out, "problem: tenant b: cgroup "));
	assert_non_null(strstr(out, "b (b.slice): cgroup missing, nothing to write"));
	fake_cgroup(f->cg, "b.slice");

	/* io not enabled for the children of the root: 4, per tenant */
	at_write(f->cg, "cgroup.subtree_control", "cpu memory\n");
	assert_int_equal(check_config(f, &out), 4);
	assert_non_null(strstr(out, "problem: tenant a: controllers io not enabled in "));
	assert_non_null(strstr(out, "problem: tenant b: controllers io not enabled in "));

	/* not cgroup v2 (a v1 or hybrid root has no cgroup.controllers): 3 */
	snprintf(path, sizeof(path), "%s/cgroup.controllers", f->cg);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(check_config(f, &out), 3);
	assert_non_null(strstr(out, "is not a cgroup v2 hierarchy"));
	assert_null(strstr(out, "files (current"));

	/* an invalid config: 78, as without --check-config */
	snprintf(cfg, sizeof(cfg), "[agent]\ninterval = soon\n");
	at_write(f->dir, "fairshare.conf", cfg);
	assert_int_equal(check_config(f, &out), 78);
	assert_non_null(strstr(out, "problem: "));
}

/* The daemon logs the same problems as warnings when it starts. */
static void test_start_warns_of_problems(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"--dry-run", "--once", NULL};
	char path[700];
	const char *log;

	snprintf(path, sizeof(path), "%s/cg/b.slice", f->dir);
	at_rmtree(path);
	assert_int_equal(wait_exit(spawn(f, args)), 0);
	log = slurp(f->log);
	assert_non_null(log);
	assert_non_null(strstr(log, "warning: tenant b: cgroup "));
}

static void test_ready_dry_run_writes_nothing(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"--dry-run", NULL};
	char *before = snapshot(f);
	const char *msg, *log;
	pid_t pid = spawn(f, args);

	msg = wait_notify(f, "READY=1");
	assert_non_null(strstr(msg, "STATUS=period 1: limits (dry-run), psdsf, bottlenecks: cpu"));
	msg = wait_notify(f, "STATUS=period 3:");
	assert_null(strstr(msg, "READY=1")); /* READY only once */
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
	assert_tree_is(f, before);
	log = slurp(f->log);
	assert_non_null(log);
	/* the per-period debug line a VM test can grep */
	assert_non_null(strstr(log, "debug: tenant=a mode=limits x=0.6667"));
	assert_non_null(strstr(log, "info: mode none -> limits"));
}

static void test_writes_then_restores_on_sigterm(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {NULL};
	char *before = snapshot(f);
	pid_t pid = spawn(f, args);

	wait_notify(f, "READY=1");
	assert_string_equal(cg_file(f, "a.slice", "cpu.max"), "200000 100000");
	assert_string_equal(cg_file(f, "b.slice", "cpu.max"), "200000 100000");
	assert_string_equal(cg_file(f, "a.slice", "cpu.weight"), "100");
	assert_string_equal(cg_file(f, "b.slice", "io.weight"), "default 100\n");
	assert_non_null(at_read(f->dir, "state/writer.state"));
	/* io is not a bottleneck: lifted, i.e. "max" = the empty io.max */
	assert_true(all_max(cg_file(f, "a.slice", "io.max")));

	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
	assert_tree_is(f, before);
	assert_non_null(strstr(slurp(f->log), "restored the original cgroup values"));
}

/*
 * The writer's change watches take at most half of the kernel's per-user
 * fs.inotify.max_user_watches, less one per tenant for the sampler (the
 * rest is systemd's, udev's, the journal's): read from --procfs-root. With
 * a limit of 6 and 2 tenants, 1 watch; the files beyond it are named in one
 * warning, and the daemon still writes and restores.
 */
static void test_watch_cap(void **state)
{
	struct fixture *f = *state;
	char proc[600];
	const char *args[] = {"--procfs-root", proc, NULL};
	char *before = snapshot(f);
	pid_t pid;

	snprintf(proc, sizeof(proc), "%s/proc", f->dir);
	at_write(proc, "meminfo", "MemTotal: 16777216 kB\nMemAvailable: 16000000 kB\n");
	at_write(proc, "sys/fs/inotify/max_user_watches", "6\n");
	pid = spawn(f, args);
	wait_notify(f, "READY=1");
	assert_string_equal(cg_file(f, "a.slice", "cpu.max"), "200000 100000");
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
	assert_tree_is(f, before);
	assert_non_null(strstr(slurp(f->log), "no more change watches at 1 (half of "
					      "fs.inotify.max_user_watches)"));
}

/* A second daemon on the same state directory (and socket) is refused
 * before it writes anything; the first keeps enforcing and restores on exit. */
static void test_second_daemon_refused(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {NULL};
	char *before = snapshot(f);
	pid_t first = spawn(f, args);

	wait_notify(f, "READY=1");
	assert_string_equal(cg_file(f, "a.slice", "cpu.max"), "200000 100000");
	assert_int_equal(wait_exit(spawn(f, args)), 1);
	assert_non_null(strstr(slurp(f->log), "another fairshared"));
	assert_string_equal(cg_file(f, "a.slice", "cpu.max"), "200000 100000");
	kill(first, SIGTERM);
	assert_int_equal(wait_exit(first), 0);
	assert_tree_is(f, before);
}

/* SIGHUP: a broken file is refused and the daemon keeps running; a good
 * one is swapped in (b now wants 1 core: not a bottleneck any more). */
static void test_reload(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"--dry-run", NULL};
	pid_t pid = spawn(f, args);
	const char *msg;

	wait_notify(f, "READY=1");
	at_write(f->dir, "fairshare.conf", "[agent]\nbogus = 1\n");
	kill(pid, SIGHUP);
	wait_notify(f, "RELOADING=1");
	msg = wait_notify(f, "READY=1");
	assert_non_null(strstr(msg, "reload failed"));
	wait_notify(f, "STATUS=period");
	assert_non_null(strstr(slurp(f->log), "reload refused, keeping the running config"));

	write_conf(f, "", "cpu 0.5, memory 1G");
	kill(pid, SIGHUP);
	msg = wait_notify(f, "READY=1");
	assert_non_null(strstr(msg, "STATUS=reloaded"));
	msg = wait_notify(f, "bottlenecks: none");
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
}

/*
 * Templates: a cgroup that appears under a template's glob is a tenant
 * within one period (its limits written), and one that goes away leaves
 * without an error or a restore owed (nothing left in the state file).
 */
static void test_template_tenants(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {NULL};
	char text[2048], gone[700], *conf = strdup(slurp(f->conf)), *p;
	pid_t pid;

	/* b.slice becomes the template's: b's section replaced by a template
	 * over user slices with b's demand */
	p = strstr(conf, "\n[tenant.b]");
	assert_non_null(p);
	*p = '\0';
	snprintf(text, sizeof(text),
		 "%s\n[template.users]\nmatch = user.slice/user-*.slice\n"
		 "demand = cpu 2, memory 1G\nweight = 1\n",
		 conf);
	at_write(f->dir, "fairshare.conf", text);
	at_mkdir(f->cg, "user.slice");
	pid = spawn(f, args);
	wait_notify(f, "tenants 1/1");
	fake_cgroup(f->cg, "user.slice/user-4000000000.slice");
	wait_notify(f, "tenants 2/2");
	assert_non_null(strstr(slurp(f->log), "the cgroups the templates match changed"));
	wait_notify(f, "STATUS=period");
	assert_string_equal(cg_file(f, "user.slice/user-4000000000.slice", "cpu.max"),
			    "200000 100000");
	assert_non_null(strstr(at_read(f->dir, "state/writer.state"), "user-4000000000"));
	snprintf(gone, sizeof(gone), "%s/user.slice/user-4000000000.slice", f->cg);
	at_rmtree(gone);
	wait_notify(f, "tenants 1/1");
	wait_notify(f, "STATUS=period");
	assert_null(strstr(at_read(f->dir, "state/writer.state"), "user-4000000000"));
	assert_null(strstr(slurp(f->log), "error"));
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
	free(conf);
}

/* After a crash (SIGKILL) the values stay; --release restores them from
 * the state file (the unit's ExecStopPost). */
static void test_release_after_crash(void **state)
{
	struct fixture *f = *state;
	const char *none[] = {NULL};
	const char *release[] = {"--release", NULL};
	char *before = snapshot(f);
	pid_t pid = spawn(f, none);

	wait_notify(f, "READY=1");
	kill(pid, SIGKILL);
	assert_int_equal(wait_exit(pid), 128 + SIGKILL);
	assert_string_equal(cg_file(f, "a.slice", "cpu.max"), "200000 100000");
	assert_int_equal(wait_exit(spawn(f, release)), 0);
	assert_tree_is(f, before);
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * A period that runs late (a loaded host; here a SIGSTOP of 1 s) measures its
 * rates over the time since the last period ran, not the nominal interval.
 * Tenant a's cpu.stat grows at 0.5 core in real time; stamped with the time
 * the period was due, the first period after the stop saw 1.1 s of use in
 * 0.1 s: 5.5 cores. The bound 2.5 leaves room for this test's own writer
 * running late on a loaded host (it would need a 0.4 s delay to reach it).
 */
static void test_late_period_rates(void **state)
{
	struct fixture *f = *state;
	const char *args[] = {"--dry-run", NULL};
	struct timespec t0;
	double t, worst = 0, u;
	bool stopped = false, resumed = false;
	int periods = 0;
	const char *line;
	char text[256];
	pid_t pid;

	pid = spawn(f, args);
	wait_notify(f, "READY=1");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((t = elapsed_s(&t0)) < 2.5) {
		snprintf(text, sizeof(text),
			 "usage_usec %.0f\nuser_usec 0\nsystem_usec 0\nnr_periods 0\n"
			 "nr_throttled 0\nthrottled_usec 0\n",
			 1000 + 0.5 * t * 1e6);
		at_write(f->cg, "a.slice/cpu.stat", text);
		/* STATUS= every period: a full datagram queue (10) blocks it */
		while (recv(f->notify_fd, text, sizeof(text), MSG_DONTWAIT) > 0)
			;
		if (!stopped && t >= 0.8) {
			kill(pid, SIGSTOP);
			stopped = true;
		}
		if (!resumed && t >= 1.8) {
			kill(pid, SIGCONT);
			resumed = true;
		}
		usleep(10000);
	}
	kill(pid, SIGTERM);
	assert_int_equal(wait_exit(pid), 0);
	for (line = strstr(slurp(f->log), "tenant=a "); line;
	     line = strstr(line + 1, "tenant=a ")) {
		const char *c = strstr(line, "cpu.usage=");

		if (c && sscanf(c, "cpu.usage=%lf", &u) == 1 && !isnan(u)) {
			worst = u > worst ? u : worst;
			periods++;
		}
	}
	assert_true(periods >= 10);
	if (worst > 2.5)
		fail_msg("a 0.5-core tenant measured at %.2f cores after a late period", worst);
}

static void test_exit_codes(void **state)
{
	struct fixture *f = *state;
	const char *bad[] = {"--no-such-flag", NULL};
	const char *none[] = {NULL};

	assert_int_equal(wait_exit(spawn(f, bad)), 2);
	at_write(f->dir, "fairshare.conf", "[agent]\ninterval = soon\n");
	assert_int_equal(wait_exit(spawn(f, none)), 78);
	assert_non_null(strstr(slurp(f->log), "fairshare.conf:2:"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_once_dry_run_prints_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check_config_ok, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check_config_problems, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_warns_of_problems, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ready_dry_run_writes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_writes_then_restores_on_sigterm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_second_daemon_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_after_crash, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_template_tenants, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_late_period_rates, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exit_codes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch_cap, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
