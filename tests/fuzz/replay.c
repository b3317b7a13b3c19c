/* SPDX-License-Identifier: MIT */
/*
 * A fuzz target without libFuzzer: replay FILE|DIR... runs every file given,
 * and every file in each directory given, through LLVMFuzzerTestOneInput
 * once. The gcc builds run the seed corpus so, so every seed (the inputs of
 * fixed findings among them) stays a regression test where clang is absent.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz_input.h"

/* Runs one file; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;
	int r = -1;

	if (!f)
		goto out;
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		goto out;
	data = malloc((size_t)size + 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size)
		goto out;
	LLVMFuzzerTestOneInput(data, (size_t)size);
	r = 0;
out:
	if (r < 0)
		perror(path);
	free(data);
	if (f)
		fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	unsigned n = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			bad += replay_file(argv[i]) < 0;
			n++;
			continue;
		}
		while ((e = readdir(d))) {
			char path[4096];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			bad += replay_file(path) < 0;
			n++;
		}
		closedir(d);
	}
	printf("%u inputs replayed, %u unreadable\n", n, bad);
	return bad || !n ? 1 : 0;
}
