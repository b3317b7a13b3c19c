/* SPDX-License-Identifier: MIT */
/*
 * Reading an inotify instance empty. The sampler's file watch, the writer's
 * drift watch and the template watch each keep their own table of watches;
 * what they share is the read loop over the kernel's packed, variable-length
 * events, which is easy to get subtly wrong (alignment, EINTR, a short read).
 */
#ifndef FAIRSHARE_INOTIFY_DRAIN_H
#define FAIRSHARE_INOTIFY_DRAIN_H

#include <sys/inotify.h>

/* Every event queued on fd (non-blocking) to fn, in order, until the queue
 * is empty (EAGAIN) or read fails; EINTR is retried. IN_Q_OVERFLOW comes as
 * an event like the others (wd -1): fn decides what a loss means. */
void fs_inotify_drain(int fd, void (*fn)(void *ctx, const struct inotify_event *ev), void *ctx);

#endif /* FAIRSHARE_INOTIFY_DRAIN_H */
