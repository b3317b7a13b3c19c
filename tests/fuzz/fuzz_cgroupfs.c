/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: every parser of text the kernel hands the daemon:
 * cpu.stat, memory.stat, memory.events, io.stat, *.pressure (sample_parse.c),
 * /proc/meminfo, /sys/block/X/stat (sample_disk.c), and the current value of
 * each file the writer reads back (model/cgfile.c), and the writer's state
 * file keys and the systemd backend's property values (model/unitprop.c,
 * "unit" records of the state file). The first byte picks the parser (and io.stat's disk); the rest,
 * NUL-terminated, is the file's text, as fs_buf hands it over.
 */
#include <stdlib.h>
#include <string.h>

#include "cgfile.h"
#include "unitprop.h"
#include "fuzz_input.h"
#include "sample_disk.h"
#include "sample_parse.h"

enum {
	P_CPU,
	P_MEM_STAT,
	P_MEM_EVENTS,
	P_IO_STAT,
	P_PSI,
	P_MEMINFO,
	P_DISKSTAT,
	P_KEY,
	P_CURRENT,
	P_UNITPROP,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union {
		struct fs_cpu_stat cpu;
		struct fs_memory_stat mem;
		struct fs_memory_events ev;
		struct fs_io_stat io;
		struct fs_pressure psi;
		struct fs_meminfo meminfo;
		struct fs_disk_counters disk;
	} u;
	struct fs_devnum dev;
	enum fs_cgfile f;
	char *text, out[512], again[512];
	uint64_t props[FS_UPROP_MAX];
	unsigned pick;

	if (size < 1)
		return 0;
	pick = data[0];
	dev = (struct fs_devnum){8 + (pick >> 7), (pick >> 4) & 7};
	text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (pick % (P_UNITPROP + 1)) {
	case P_CPU:
		fs_parse_cpu_stat(text, &u.cpu);
		break;
	case P_MEM_STAT:
		fs_parse_memory_stat(text, &u.mem);
		break;
	case P_MEM_EVENTS:
		fs_parse_memory_events(text, &u.ev);
		break;
	case P_IO_STAT:
		fs_parse_io_stat(text, dev, &u.io);
		break;
	case P_PSI:
		fs_parse_pressure(text, &u.psi);
		break;
	case P_MEMINFO:
		fs_parse_meminfo(text, &u.meminfo);
		break;
	case P_DISKSTAT:
		fs_parse_diskstat(text, &u.disk);
		break;
	case P_KEY:
		if (fs_cgfile_parse_key(text, &f, &dev) == 0 &&
		    fs_cgfile_key(f, dev, out, sizeof(out)) < 0)
			abort(); /* a key that parses must format back */
		break;
	case P_UNITPROP:
		f = (enum fs_cgfile)((pick >> 4) % FS_CGF__COUNT);
		/* what parses prints back to the same text (what the writer
		 * compares), and parses again */
		if (fs_uprop_parse(f, text, props) == 0 &&
		    (fs_uprop_print(f, props, again, sizeof(again)) < 0 || strcmp(again, text) ||
		     fs_uprop_parse(f, again, props) < 0))
			abort();
		break;
	default:
		/* small buffers too: -ENOSPC must not write past them */
		fs_cgfile_current((enum fs_cgfile)((pick >> 4) % FS_CGF__COUNT), dev, text, out,
				  1 + (pick & 1 ? sizeof(out) - 1 : (size_t)(pick % 24)));
		break;
	}
	free(text);
	return 0;
}
