/* SPDX-License-Identifier: MIT */
/* Reading an inotify instance empty (see inotify_drain.h). */
#include "inotify_drain.h"

#include <errno.h>
#include <unistd.h>

void fs_inotify_drain(int fd, void (*fn)(void *ctx, const struct inotify_event *ev), void *ctx)
{
	/* room for many events per read; aligned as the kernel packs them */
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t len = read(fd, buf, sizeof(buf));
		const struct inotify_event *ev;

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			return; /* EAGAIN: drained */
		for (char *p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			fn(ctx, ev);
		}
	}
}
