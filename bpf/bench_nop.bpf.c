// SPDX-License-Identifier: MIT
/* Empty sched_switch program: the bpf_stats floor the benchmark subtracts. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(fs_bench_nop)
{
	return 0;
}
