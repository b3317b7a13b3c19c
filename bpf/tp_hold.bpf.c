// SPDX-License-Identifier: MIT
/*
 * Two no-op programs on each tracepoint fairshared attaches to, for the
 * test VM only (fs-tp-hold, tests/vm/init.sh). With two already there,
 * fairshared's attach is a tracepoint's third function and its detach
 * leaves two: neither changes the tracepoint's static key or static call,
 * so the guest's kernel never patches its own text for them. Under TCG
 * that patching (text_poke_bp) is where the guest froze.
 * Four programs, not one attached twice: a tracepoint refuses the same
 * program (the same function and data) a second time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(fs_hold_switch_a)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fs_hold_switch_b)
{
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(fs_hold_bio_a)
{
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(fs_hold_bio_b)
{
	return 0;
}
