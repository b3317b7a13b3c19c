// SPDX-License-Identifier: MIT
/*
 * Per cgroup v2: on-CPU time and runqueue wait (runnable, not running: the
 * unmet-CPU-demand signal). One tp_btf/sched_switch program and no clock
 * reads: the kernel already keeps both numbers per task (se.sum_exec_runtime,
 * sched_info.run_delay, i.e. /proc/PID/schedstat), so a run and the wait that
 * preceded it (wakeup or preemption to switch-in) are charged as deltas at
 * switch-out. Measured on the host: bpf_ktime_get_ns() alone costs ~120 ns
 * and a wakeup hook with task storage ~350 ns per event.
 */
#include "fs_bpf_common.bpf.h"
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4096); /* resized from the config before load */
	__type(key, __u64);
	__type(value, struct fs_sched_val);
} sched_stats SEC(".maps");

/*
 * Set before load. On (default): a per-task baseline (task storage) charges
 * every nanosecond of run_delay and of runtime exactly once, including wait
 * the kernel credits outside switch-in (a queued task that migrates is
 * credited at dequeue) and runs whose switch-out the program did not see (see
 * "unseen" below: a burst of ten in one 1.5 s test run lost 1.9 % of a
 * burner cgroup's CPU time before this baseline). Off: only the wait
 * credited just before each run, ~2/3 the cost per switch but low by ~1 %
 * (6.18, EEVDF) to ~17 % (6.1, CFS, 3 tasks on 2 CPUs) when queued tasks
 * migrate, and a missed switch-out loses that run.
 */
const volatile bool exact_wait = true;
/* CLOCK_MONOTONIC at load: tasks started later have all their wait charged. */
const volatile __u64 load_mono_ns = 0;

/* Per task, with exact_wait: what has been charged of it so far. */
struct fs_wait_mark {
	__u64 charged;	   /* sched_info.run_delay charged up to */
	__u64 run_charged; /* se.sum_exec_runtime charged up to */
	__u64 valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fs_wait_mark);
} sched_wait_mark SEC(".maps");

/* A global array, not a map: no lookup call on the hot path. */
struct fs_sched_cpu fs_sched_cpus[FS_BPF_MAX_CPUS] SEC(".bss");
/* Switches whose prev we had not seen switch in (diagnostics; rare). */
__u64 fs_sched_unseen[FS_BPF_MAX_CPUS] SEC(".bss");

static __always_inline __u64 run_delay(struct task_struct *t)
{
	/* CONFIG_SCHED_INFO=n: no wait numbers, the on-CPU time still works. */
	if (bpf_core_field_exists(t->sched_info))
		return t->sched_info.run_delay;
	return 0;
}

static __always_inline void flush(struct fs_sched_cpu *c)
{
	static const struct fs_sched_val zero;
	struct fs_sched_val *v;

	if (!c->acc_cgid || (!c->acc_cpu_ns && !c->acc_wait_ns))
		return;
	v = fs_lookup_or_init(&sched_stats, &c->acc_cgid, &zero);
	if (v) {
		v->cpu_ns += c->acc_cpu_ns;
		v->wait_ns += c->acc_wait_ns;
		v->pwait_ns += c->acc_pwait_ns;
	}
}

/* Add one run to the CPU's unflushed sums, flushing another cgroup's first. */
static __always_inline void charge(struct fs_sched_cpu *c, __u64 cgid, __u64 run, __u64 wait,
				   __u64 pwait)
{
	if (c->acc_cgid != cgid) {
		flush(c);
		c->acc_cgid = cgid;
		c->acc_cpu_ns = 0;
		c->acc_wait_ns = 0;
		c->acc_pwait_ns = 0;
	}
	c->acc_cpu_ns += run;
	c->acc_wait_ns += wait;
	c->acc_pwait_ns += pwait;
}

/* Before 5.14 the field was `long state`. */
struct task_struct___pre514 {
	volatile long state;
} __attribute__((preserve_access_index));

/*
 * prev leaves the CPU still runnable: preempted (tick, wakeup preemption,
 * cpu.max throttling) or yielding. Such a thread wanted to keep running, so
 * the wait before this run was unmet CPU demand. A thread that goes to sleep
 * instead (IO, a lock, a pipe) only waited out scheduling latency after its
 * wakeup: with a free CPU it would have run just as long and slept again.
 */
static __always_inline bool still_runnable(bool preempt, struct task_struct *prev)
{
	if (preempt)
		return true;
	if (bpf_core_field_exists(prev->__state))
		return prev->__state == 0;
	return ((struct task_struct___pre514 *)prev)->state == 0;
}

/* SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE: CFS keeps prev_sum_exec_runtime. */
static __always_inline bool is_fair(struct task_struct *t)
{
	unsigned int policy = t->policy;

	return policy == 0 || policy == 3 || policy == 5;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fs_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct fs_sched_cpu *c;
	__u64 *unseen;

	if (cpu >= FS_BPF_MAX_CPUS)
		return 0;
	c = &fs_sched_cpus[cpu];
	/* Here, while the verifier knows cpu's bound (6.1 forgets it later). */
	unseen = &fs_sched_unseen[cpu];
	c->seq++;
	barrier();

	if (prev->pid) {
		bool seen = c->cgid && c->pid == (__u64)prev->pid;
		__u64 delay = run_delay(prev), sum = prev->se.sum_exec_runtime;
		__u64 run0 = c->run0, delay0 = c->delay0, run, wait = 0, cgid;
		struct fs_wait_mark *m;

		/* Loads before branching: the verifier rejects one load insn
		 * that clang merged for a map value and a task pointer. */
		barrier();
		if (seen) {
			cgid = c->cgid;
			run = sum - run0;
		} else {
			/*
			 * We did not see prev's switch-in: the first switch after
			 * load, or a switch that bypassed the tracepoint (on the PVM
			 * host ~0.1 % of switches, away from some of the hypervisor
			 * agent's threads). CFS still knows this run's length.
			 */
			(*unseen)++;
			cgid = bpf_get_current_cgroup_id();
			run = is_fair(prev) ? sum - prev->se.prev_sum_exec_runtime : 0;
		}
		m = exact_wait ? bpf_task_storage_get(&sched_wait_mark, prev, 0,
						      BPF_LOCAL_STORAGE_GET_F_CREATE)
			       : NULL;
		if (m && m->valid) {
			wait = delay - m->charged;
			run = sum - m->run_charged;
		} else if (m && prev->start_time >= load_mono_ns) {
			/* born after load: all of it, from before its first sight too */
			wait = delay;
			run = sum;
		} else if (seen) { /* the wait before this run */
			wait = delay - delay0;
		}
		if (m) {
			m->charged = delay;
			m->run_charged = sum;
			m->valid = 1;
		}
		charge(c, cgid, run, wait, still_runnable(preempt, prev) ? wait : 0);
	}

	if (next->pid) {
		c->cgid = next->cgroups->dfl_cgrp->kn->id;
		c->pid = next->pid;
		c->run0 = next->se.sum_exec_runtime;
		c->delay0 = run_delay(next);
	} else {
		c->cgid = 0;
		c->pid = 0;
	}
	barrier();
	c->seq++;
	return 0;
}
