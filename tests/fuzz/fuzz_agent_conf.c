/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the daemon's config (conf/agent_conf.c), resolved against
 * a fake sysfs with one disk (vda, 254:0) and a fake procfs (8 GiB of
 * memory), made once per run, so io.* and memory = auto get past resolution.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_conf.h"
#include "fuzz_input.h"

static char root[] = "/tmp/fairshare-fuzz-conf-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void remove_root(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

static void make_fake_host(void)
{
	char link[256];

	if (!mkdtemp(root))
		abort();
	atexit(remove_root);
	put("sys/devices/virtual/block/vda/dev", "254:0\n");
	put("sys/devices/virtual/block/vda/queue/scheduler", "[mq-deadline] none\n");
	put("sys/dev/block/.keep", "");
	snprintf(link, sizeof(link), "%s/sys/dev/block/254:0", root);
	if (symlink("../../devices/virtual/block/vda", link) < 0)
		abort();
	put("proc/meminfo", "MemTotal:        8388608 kB\nMemAvailable:    4194304 kB\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char sysfs[128], procfs[128];
	struct fs_conf_env env = {.sysfs_root = sysfs, .procfs_root = procfs, .ncpus_fallback = 4};
	struct fs_conf *c = NULL;
	char path[64], err[1024];
	int fd;

	if (!sysfs[0]) {
		make_fake_host();
		snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
		snprintf(procfs, sizeof(procfs), "%s/proc", root);
	}
	fd = fuzz_input_file(data, size, path, sizeof(path));
	if (fd < 0)
		abort();
	if (fs_conf_load(path, &env, &c, err, sizeof(err)) == 0)
		fs_conf_free(c);
	close(fd);
	return 0;
}
