// SPDX-License-Identifier: MIT
/*
 * Per cgroup v2 (of the socket): bytes and packets in and out, counted at the
 * cgroup_skb hooks. Attached once at the tenants' common ancestor; the key is
 * the socket's own cgroup, so one attachment serves the whole subtree.
 * Bytes include the IP header; a GSO skb counts as its segment count.
 */
#include "fs_bpf_common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4096); /* resized from the config before load */
	__type(key, __u64);
	__type(value, struct fs_net_val);
} net_stats SEC(".maps");

static __always_inline struct fs_net_val *net_val(struct __sk_buff *skb)
{
	static const struct fs_net_val zero;
	__u64 cgid = bpf_skb_cgroup_id(skb);

	return fs_lookup_or_init(&net_stats, &cgid, &zero);
}

static __always_inline __u64 segs(struct __sk_buff *skb)
{
	return skb->gso_segs > 1 ? skb->gso_segs : 1;
}

/* Atomics: a softirq can interrupt a process-context run on the same CPU. */
SEC("cgroup_skb/ingress")
int fs_net_ingress(struct __sk_buff *skb)
{
	struct fs_net_val *v = net_val(skb);

	if (v) {
		__sync_fetch_and_add(&v->rx_bytes, skb->len);
		__sync_fetch_and_add(&v->rx_packets, segs(skb));
	}
	return 1;
}

SEC("cgroup_skb/egress")
int fs_net_egress(struct __sk_buff *skb)
{
	struct fs_net_val *v = net_val(skb);

	if (v) {
		__sync_fetch_and_add(&v->tx_bytes, skb->len);
		__sync_fetch_and_add(&v->tx_packets, segs(skb));
	}
	return 1;
}
