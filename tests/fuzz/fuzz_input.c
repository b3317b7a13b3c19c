/* SPDX-License-Identifier: MIT */
/* The fuzzer's bytes as a file (see fuzz_input.h). */
#include "fuzz_input.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}
