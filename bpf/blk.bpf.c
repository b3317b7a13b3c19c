// SPDX-License-Identifier: MIT
/*
 * Per (cgroup v2, whole disk): read/write bytes and bios, charged to the
 * submitter at block_bio_queue. block_rq_issue runs in whichever context
 * dispatches (measured ~20% misattributed with mq-deadline), and
 * bio->bi_blkg names the v1 blkio cgroup on hybrid hosts.
 * Buffered writeback is charged to the flusher (kworker), as seen.
 */
#include "fs_bpf_common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define FS_REQ_OP_MASK	0xff /* (1 << REQ_OP_BITS) - 1 */
#define FS_REQ_OP_READ	0
#define FS_REQ_OP_WRITE 1

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 16384); /* resized from the config before load */
	__type(key, struct fs_blk_key);
	__type(value, struct fs_blk_val);
} blk_stats SEC(".maps");

SEC("tp_btf/block_bio_queue")
int BPF_PROG(fs_blk_bio_queue, struct bio *bio)
{
	static const struct fs_blk_val zero;
	unsigned int op = bio->bi_opf & FS_REQ_OP_MASK;
	struct gendisk *disk = bio->bi_bdev->bd_disk;
	struct fs_blk_key key = {};
	struct fs_blk_val *v;
	__u64 bytes;

	if (op != FS_REQ_OP_READ && op != FS_REQ_OP_WRITE)
		return 0;
	/* Whole disk, as io.stat and io.max name it (partitions fold in). */
	key.cgid = bpf_get_current_cgroup_id();
	key.major = disk->major;
	key.minor = disk->first_minor;
	bytes = bio->bi_iter.bi_size;

	v = fs_lookup_or_init(&blk_stats, &key, &zero);
	if (!v)
		return 0;
	/* Atomic: tracing programs run preemptibly, so two submitters can share a CPU slot. */
	if (op == FS_REQ_OP_WRITE) {
		__sync_fetch_and_add(&v->wbytes, bytes);
		__sync_fetch_and_add(&v->wios, 1);
	} else {
		__sync_fetch_and_add(&v->rbytes, bytes);
		__sync_fetch_and_add(&v->rios, 1);
	}
	return 0;
}
