/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: the libFuzzer entry point, and the fuzzer's
 * bytes as a file for the parsers that read a path (config, scenario).
 */
#ifndef FAIRSHARE_FUZZ_INPUT_H
#define FAIRSHARE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Puts data in a memory file and its path ("/proc/self/fd/N") in path:
 * the parsers open it like any file. Returns the fd (close it after the
 * parse), or -1.
 */
int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t len);

#endif /* FAIRSHARE_FUZZ_INPUT_H */
