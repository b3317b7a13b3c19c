/* SPDX-License-Identifier: MIT */
/*
 * fs-tp-hold DIR: attaches tp_hold.bpf.c's programs (two per tracepoint that
 * fairshared uses) and pins their links in DIR (on a bpffs), so that they
 * stay attached after it exits; rm -r DIR detaches them. For the test VM
 * only: see tp_hold.bpf.c for why, tests/vm/init.sh for where it runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "tp_hold.skel.h"

static int pin(struct bpf_link *link, const char *dir, const char *name)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return bpf_link__pin(link, path);
}

int main(int argc, char **argv)
{
	struct fs_tp_hold *skel;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: fs-tp-hold DIR (on a bpffs)\n");
		return 2;
	}
	if (mkdir(argv[1], 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "fs-tp-hold: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	skel = fs_tp_hold__open_and_load();
	if (!skel) {
		fprintf(stderr, "fs-tp-hold: load: %s\n", strerror(errno));
		return 1;
	}
	r = fs_tp_hold__attach(skel);
	if (!r) {
		const struct {
			struct bpf_link *link;
			const char *name;
		} pins[] = {
		    {skel->links.fs_hold_switch_a, "switch_a"},
		    {skel->links.fs_hold_switch_b, "switch_b"},
		    {skel->links.fs_hold_bio_a, "bio_a"},
		    {skel->links.fs_hold_bio_b, "bio_b"},
		};

		for (size_t i = 0; !r && i < sizeof(pins) / sizeof(pins[0]); i++)
			r = pin(pins[i].link, argv[1], pins[i].name);
	}
	if (r)
		fprintf(stderr, "fs-tp-hold: attach or pin in %s: %s\n", argv[1], strerror(-r));
	/* the pinned links outlive this process (destroy only closes their fds) */
	fs_tp_hold__destroy(skel);
	return r ? 1 : 0;
}
