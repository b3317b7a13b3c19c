/* SPDX-License-Identifier: MIT */
/* libFuzzer target: scenario files (conf/scenario.c), as fairctl solve reads them. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario sc;
	struct conf_error err;
	char path[64];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		abort();
	scenario_load(path, &sc, &err);
	scenario_free(&sc);
	close(fd);
	return 0;
}
