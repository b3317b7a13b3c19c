/* SPDX-License-Identifier: MIT */
/*
 * fs-bpfstat: debug view of the fairshare eBPF counters, and a benchmark of
 * their per-event cost (kernel bpf_stats under a scheduler-heavy load).
 *
 *   fs-bpfstat [-x] [-p sched,blk,net] [-a ATTACH] [-i SEC] [-n COUNT] CGROUP...
 *   fs-bpfstat bench [-x] [-p sched,blk,net] [-a ATTACH] [-t SEC] [-- LOAD...]
 *
 * -x: approximate runqueue wait, cheaper (fs_bpf_config.approx_wait).
 *
 * The default load is `stress-ng --switch 2 --timeout SEC`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fs_bpf.h"
#include "bench_nop.skel.h"

#define ERRLEN 512

static int parse_programs(const char *s, unsigned int *mask)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "sched"))
			*mask |= FS_BPF_SCHED;
		else if (!strcmp(tok, "blk"))
			*mask |= FS_BPF_BLK;
		else if (!strcmp(tok, "net"))
			*mask |= FS_BPF_NET;
		else
			rc = -EINVAL;
	}
	free(copy);
	return rc;
}

static void print_counters(const char *path, const struct fs_bpf_counters *c)
{
	unsigned int i;

	printf("%s cpu_ns=%llu wait_ns=%llu rx_bytes=%llu rx_packets=%llu tx_bytes=%llu "
	       "tx_packets=%llu\n",
	       path, (unsigned long long)c->cpu_ns, (unsigned long long)c->wait_ns,
	       (unsigned long long)c->rx_bytes, (unsigned long long)c->rx_packets,
	       (unsigned long long)c->tx_bytes, (unsigned long long)c->tx_packets);
	for (i = 0; i < c->ndevs; i++)
		printf("  %u:%u rbytes=%llu wbytes=%llu rios=%llu wios=%llu\n", c->devs[i].major,
		       c->devs[i].minor, (unsigned long long)c->devs[i].rbytes,
		       (unsigned long long)c->devs[i].wbytes, (unsigned long long)c->devs[i].rios,
		       (unsigned long long)c->devs[i].wios);
	if (c->devs_truncated)
		printf("  (more disks not shown)\n");
}

static int show(struct fs_bpf *b, char **paths, int n, int interval, int count)
{
	struct fs_bpf_counters c;
	char err[ERRLEN];
	int i, k, rc;

	for (k = 0; count <= 0 || k < count; k++) {
		if (k > 0)
			sleep(interval);
		for (i = 0; i < n; i++) {
			rc = fs_bpf_read_subtree(b, AT_FDCWD, paths[i], &c, err, sizeof(err));
			if (rc) {
				fprintf(stderr, "fs-bpfstat: %s\n", err);
				return rc;
			}
			print_counters(paths[i], &c);
		}
		fflush(stdout);
	}
	return 0;
}

static int run_load(char **argv, int seconds)
{
	char secs[16];
	char *def[] = {"stress-ng", "--switch", "2", "--timeout", secs, "--quiet", NULL};
	int status;
	pid_t pid;

	snprintf(secs, sizeof(secs), "%ds", seconds);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char **args = argv && argv[0] ? argv : def;

		execvp(args[0], args);
		fprintf(stderr, "fs-bpfstat: exec %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fs-bpfstat: load exited with status 0x%x\n", status);
		return -ECHILD;
	}
	return 0;
}

static int nop_stats(struct fs_bench_nop *nop, struct fs_bpf_prog_stats *st)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(nop->progs.fs_bench_nop), &info, &len))
		return -errno;
	snprintf(st->name, sizeof(st->name), "%s", info.name);
	st->run_cnt = info.run_cnt;
	st->run_time_ns = info.run_time_ns;
	return 0;
}

/*
 * Per-event cost as the kernel measures it (run_time_ns / run_cnt). The
 * empty program attached alongside shows the floor: bpf_stats' own clock
 * reads, which are slow on paravirtualised clocks.
 */
static int bench(struct fs_bpf *b, char **load, int seconds)
{
	struct fs_bpf_prog_stats before[9], after[9];
	struct fs_bench_nop *nop;
	size_t nb, na, i;
	char err[ERRLEN];
	int rc;

	nop = fs_bench_nop__open_and_load();
	if (!nop || fs_bench_nop__attach(nop)) {
		fprintf(stderr, "fs-bpfstat: load baseline program: %s\n", strerror(errno));
		fs_bench_nop__destroy(nop);
		return -errno;
	}
	rc = fs_bpf_prog_stats(b, before, 8, &nb, err, sizeof(err));
	if (rc)
		goto fail;
	rc = nop_stats(nop, &before[nb++]);
	if (rc)
		goto out;
	rc = run_load(load, seconds);
	if (rc)
		goto out;
	rc = fs_bpf_prog_stats(b, after, 8, &na, err, sizeof(err));
	if (rc)
		goto fail;
	rc = nop_stats(nop, &after[na++]);
	if (rc)
		goto out;
	printf("%-16s %12s %14s %10s %14s\n", "program", "events", "run_time_ns", "ns/event",
	       "minus_empty");
	for (i = 0; i < na && i < nb; i++) {
		unsigned long long cnt = after[i].run_cnt - before[i].run_cnt;
		unsigned long long ns = after[i].run_time_ns - before[i].run_time_ns;
		unsigned long long ncnt = after[na - 1].run_cnt - before[nb - 1].run_cnt;
		unsigned long long nns = after[na - 1].run_time_ns - before[nb - 1].run_time_ns;
		double per = cnt ? (double)ns / cnt : 0.0, floor = ncnt ? (double)nns / ncnt : 0.0;

		if (cnt)
			printf("%-16s %12llu %14llu %10.1f %14.1f\n", after[i].name, cnt, ns, per,
			       per - floor);
		else
			printf("%-16s %12llu %14llu %10s %14s\n", after[i].name, cnt, ns, "-", "-");
	}
	goto out;
fail:
	fprintf(stderr, "fs-bpfstat: %s\n", err);
out:
	fs_bench_nop__destroy(nop);
	return rc;
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: fs-bpfstat [-x] [-p sched,blk,net] [-a ATTACH] [-i SEC] [-n COUNT] CGROUP...\n"
	    "       fs-bpfstat bench [-x] [-p sched,blk,net] [-a ATTACH] [-t SEC] [-- LOAD...]\n");
}

int main(int argc, char **argv)
{
	struct fs_bpf_config cfg = {.programs = FS_BPF_SCHED | FS_BPF_BLK};
	int interval = 1, count = 1, seconds = 5, stats_fd = -1, opt, rc;
	bool is_bench = argc > 1 && !strcmp(argv[1], "bench");
	struct fs_bpf *b = NULL;
	char err[ERRLEN];

	if (is_bench) {
		argv++;
		argc--;
	}
	while ((opt = getopt(argc, argv, "+xp:a:i:n:t:h")) != -1) {
		switch (opt) {
		case 'x':
			cfg.approx_wait = true;
			break;
		case 'p':
			if (parse_programs(optarg, &cfg.programs)) {
				usage();
				return 2;
			}
			break;
		case 'a':
			cfg.net_attach_path = optarg;
			cfg.programs |= FS_BPF_NET;
			break;
		case 'i':
			interval = atoi(optarg);
			break;
		case 'n':
			count = atoi(optarg);
			break;
		case 't':
			seconds = atoi(optarg);
			break;
		default:
			usage();
			return 2;
		}
	}
	if (!is_bench && optind >= argc) {
		usage();
		return 2;
	}
	if (is_bench) {
		/* Kernel-side run_time_ns/run_cnt are only counted while an fd holds this. */
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "fs-bpfstat: enable bpf_stats: %s\n", strerror(errno));
			return 1;
		}
	}
	rc = fs_bpf_open(&cfg, &b, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "fs-bpfstat: %s\n", err);
		goto out;
	}
	if (is_bench)
		rc = bench(b, argv + optind, seconds);
	else
		rc = show(b, argv + optind, argc - optind, interval, count);
out:
	fs_bpf_close(b);
	if (stats_fd >= 0)
		close(stats_fd);
	return rc ? 1 : 0;
}
