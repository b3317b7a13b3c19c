/* SPDX-License-Identifier: MIT */
/*
 * The cgroupfs sampling backend: cpu.stat, memory.*, io.stat and *.pressure
 * of each tenant cgroup, turned into per-period rates against the previous
 * sample (the baseline).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "sample.h"
#include "sample_parse.h"

/* Raw cumulative counters of one tenant at one sample time. */
struct raw {
	bool valid;
	ino_t ino; /* cgroup directory inode: changes when it is recreated */
	uint64_t now_us;
	bool have_cpu, have_mev, have_psi[3];
	struct fs_cpu_stat cpu;
	struct fs_memory_events mev;
	struct fs_pressure psi[3];
	bool have_io;
	struct fs_io_stat io[FS_MAX_DISKS];
};

struct cg_sampler {
	struct fs_cgroupfs cg;
	size_t n_tenants;
	char **cgroups;
	size_t n_disks;
	struct fs_devnum disks[FS_MAX_DISKS];
	struct raw *prev; /* [n_tenants] */
	struct fs_buf buf;
	fs_log_fn log;
	void *log_ctx;
};

static const char *const psi_files[3] = {"cpu.pressure", "memory.pressure", "io.pressure"};

static void psi_unknown(struct fs_psi_sample *p)
{
	p->some_avg10 = p->full_avg10 = p->some_us = p->full_us = NAN;
}

void fs_tenant_sample_unknown(struct fs_tenant_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->cpu_cores = s->cpu_throttled_us = s->cpu_nr_throttled = s->cpu_nr_periods = NAN;
	s->cpu_runq_wait = NAN;
	s->cpu_runq_wait_preempted = NAN;
	s->mem_current = s->mem_anon = s->mem_file = NAN;
	s->mem_active_anon = s->mem_inactive_anon = s->mem_active_file = s->mem_inactive_file = NAN;
	s->mem_ev_high = s->mem_ev_max = s->mem_ev_oom = s->mem_ev_oom_kill = NAN;
	psi_unknown(&s->psi_cpu);
	psi_unknown(&s->psi_mem);
	psi_unknown(&s->psi_io);
	for (size_t d = 0; d < FS_MAX_DISKS; d++)
		s->io[d].rbps = s->io[d].wbps = s->io[d].riops = s->io[d].wiops = NAN;
	s->net_rx_bps = s->net_tx_bps = NAN;
}

static void cg_close(void *state)
{
	struct cg_sampler *s = state;

	if (!s)
		return;
	fs_cgfs_close(&s->cg);
	for (size_t i = 0; i < s->n_tenants; i++)
		free(s->cgroups[i]);
	free(s->cgroups);
	free(s->prev);
	fs_buf_free(&s->buf);
	free(s);
}

static int cg_open(void **state, const struct fs_sampler_config *cfg)
{
	struct cg_sampler *s;
	int r;

	*state = NULL;
	if (cfg->n_disks > FS_MAX_DISKS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cg.root_fd = -1;
	s->log = cfg->log;
	s->log_ctx = cfg->log_ctx;
	r = fs_cgfs_open(&s->cg, cfg->cgroup_root);
	if (r < 0) {
		fs_logf(s->log, s->log_ctx, LOG_ERR, "sampler: cannot open %s: %s",
			cfg->cgroup_root, strerror(-r));
		goto out;
	}
	s->n_tenants = cfg->n_tenants;
	s->cgroups = calloc(cfg->n_tenants ? cfg->n_tenants : 1, sizeof(*s->cgroups));
	s->prev = calloc(cfg->n_tenants ? cfg->n_tenants : 1, sizeof(*s->prev));
	if (!s->cgroups || !s->prev) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cfg->n_tenants; i++) {
		s->cgroups[i] = strdup(cfg->cgroups[i]);
		if (!s->cgroups[i]) {
			r = -ENOMEM;
			goto out;
		}
	}
	s->n_disks = cfg->n_disks;
	if (cfg->n_disks)
		memcpy(s->disks, cfg->disks, cfg->n_disks * sizeof(s->disks[0]));
	*state = s;
	return 0;
out:
	cg_close(s);
	return r;
}

/* Reads one file; false when it is missing or malformed (fields stay NAN). */
static bool read_file(struct cg_sampler *s, int dirfd, size_t t, const char *file)
{
	int r = fs_cgfs_read_at(dirfd, file, &s->buf);

	if (r == 0)
		return true;
	/* ENOENT: controller not enabled or no PSI; ENODEV/EOPNOTSUPP: PSI
	 * disabled at boot (psi=0). Expected, so not logged. */
	if (r != -ENOENT && r != -ENODEV && r != -EOPNOTSUPP)
		fs_logf(s->log, s->log_ctx, LOG_DEBUG, "sampler: %s/%s: %s", s->cgroups[t], file,
			strerror(-r));
	return false;
}

static double delta(uint64_t now, uint64_t before)
{
	return (double)(now - before);
}

/* Any cumulative counter below its previous value means a new cgroup. */
static bool went_backwards(const struct raw *c, const struct raw *p, size_t n_disks)
{
	if (c->have_cpu && p->have_cpu &&
	    (c->cpu.usage_usec < p->cpu.usage_usec || c->cpu.nr_periods < p->cpu.nr_periods ||
	     c->cpu.nr_throttled < p->cpu.nr_throttled ||
	     c->cpu.throttled_usec < p->cpu.throttled_usec))
		return true;
	if (c->have_mev && p->have_mev &&
	    (c->mev.high < p->mev.high || c->mev.max < p->mev.max || c->mev.oom < p->mev.oom ||
	     c->mev.oom_kill < p->mev.oom_kill))
		return true;
	for (int k = 0; k < 3; k++) {
		if (!c->have_psi[k] || !p->have_psi[k])
			continue;
		if (c->psi[k].some.total < p->psi[k].some.total ||
		    (c->psi[k].full.present && p->psi[k].full.present &&
		     c->psi[k].full.total < p->psi[k].full.total))
			return true;
	}
	if (c->have_io && p->have_io) {
		for (size_t d = 0; d < n_disks; d++) {
			if (c->io[d].rbytes < p->io[d].rbytes ||
			    c->io[d].wbytes < p->io[d].wbytes || c->io[d].rios < p->io[d].rios ||
			    c->io[d].wios < p->io[d].wios)
				return true;
		}
	}
	return false;
}

static void fill_gauges(struct cg_sampler *s, int dirfd, size_t t, struct fs_tenant_sample *o)
{
	struct fs_memory_stat ms;

	if (read_file(s, dirfd, t, "memory.current")) {
		char *e;
		unsigned long long v = strtoull(s->buf.data, &e, 10);

		if (e != s->buf.data)
			o->mem_current = (double)v;
	}
	if (read_file(s, dirfd, t, "memory.stat") && fs_parse_memory_stat(s->buf.data, &ms) == 0) {
		if (ms.have & FS_MEM_ANON)
			o->mem_anon = (double)ms.anon;
		if (ms.have & FS_MEM_FILE)
			o->mem_file = (double)ms.file;
		if (ms.have & FS_MEM_ACTIVE_ANON)
			o->mem_active_anon = (double)ms.active_anon;
		if (ms.have & FS_MEM_INACTIVE_ANON)
			o->mem_inactive_anon = (double)ms.inactive_anon;
		if (ms.have & FS_MEM_ACTIVE_FILE)
			o->mem_active_file = (double)ms.active_file;
		if (ms.have & FS_MEM_INACTIVE_FILE)
			o->mem_inactive_file = (double)ms.inactive_file;
	}
}

static void read_counters(struct cg_sampler *s, int dirfd, size_t t, struct raw *c)
{
	c->have_cpu = read_file(s, dirfd, t, "cpu.stat") &&
		      fs_parse_cpu_stat(s->buf.data, &c->cpu) == 0 && (c->cpu.have & FS_CPU_USAGE);
	c->have_mev = read_file(s, dirfd, t, "memory.events") &&
		      fs_parse_memory_events(s->buf.data, &c->mev) == 0;
	for (int k = 0; k < 3; k++)
		c->have_psi[k] = read_file(s, dirfd, t, psi_files[k]) &&
				 fs_parse_pressure(s->buf.data, &c->psi[k]) == 0;
	c->have_io = s->n_disks > 0 && read_file(s, dirfd, t, "io.stat");
	for (size_t d = 0; c->have_io && d < s->n_disks; d++)
		if (fs_parse_io_stat(s->buf.data, s->disks[d], &c->io[d]) < 0)
			c->have_io = false;
}

static void fill_psi(struct fs_psi_sample *o, const struct fs_pressure *c,
		     const struct fs_pressure *p, bool deltas)
{
	o->some_avg10 = c->some.avg10;
	if (c->full.present)
		o->full_avg10 = c->full.avg10;
	if (!deltas)
		return;
	o->some_us = delta(c->some.total, p->some.total);
	if (c->full.present && p->full.present)
		o->full_us = delta(c->full.total, p->full.total);
}

static void fill_rates(struct cg_sampler *s, const struct raw *c, const struct raw *p,
		       struct fs_tenant_sample *o)
{
	double dt = (double)(c->now_us - p->now_us) / 1e6; /* seconds */
	bool ok = dt > 0;

	if (c->have_cpu && p->have_cpu && ok) {
		o->cpu_cores = delta(c->cpu.usage_usec, p->cpu.usage_usec) / 1e6 / dt;
		if ((c->cpu.have & FS_CPU_THROTTLED) && (p->cpu.have & FS_CPU_THROTTLED))
			o->cpu_throttled_us = delta(c->cpu.throttled_usec, p->cpu.throttled_usec);
		if ((c->cpu.have & FS_CPU_NR_THROTTLED) && (p->cpu.have & FS_CPU_NR_THROTTLED))
			o->cpu_nr_throttled = delta(c->cpu.nr_throttled, p->cpu.nr_throttled);
		if ((c->cpu.have & FS_CPU_NR_PERIODS) && (p->cpu.have & FS_CPU_NR_PERIODS))
			o->cpu_nr_periods = delta(c->cpu.nr_periods, p->cpu.nr_periods);
	}
	if (c->have_mev && p->have_mev) {
		o->mem_ev_high = delta(c->mev.high, p->mev.high);
		o->mem_ev_max = delta(c->mev.max, p->mev.max);
		o->mem_ev_oom = delta(c->mev.oom, p->mev.oom);
		o->mem_ev_oom_kill = delta(c->mev.oom_kill, p->mev.oom_kill);
	}
	if (c->have_io && p->have_io && ok) {
		for (size_t d = 0; d < s->n_disks; d++) {
			o->io[d].rbps = delta(c->io[d].rbytes, p->io[d].rbytes) / dt;
			o->io[d].wbps = delta(c->io[d].wbytes, p->io[d].wbytes) / dt;
			o->io[d].riops = delta(c->io[d].rios, p->io[d].rios) / dt;
			o->io[d].wiops = delta(c->io[d].wios, p->io[d].wios) / dt;
		}
	}
}

static void sample_one(struct cg_sampler *s, size_t t, uint64_t now_us, struct fs_tenant_sample *o)
{
	struct raw *p = &s->prev[t];
	struct raw c = {0};
	struct fs_psi_sample *psi_out[3] = {&o->psi_cpu, &o->psi_mem, &o->psi_io};
	struct stat st;
	bool deltas;
	int dirfd;

	fs_tenant_sample_unknown(o);
	dirfd = fs_cgfs_open_cgroup(&s->cg, s->cgroups[t]);
	if (dirfd < 0) {
		if (dirfd != -ENOENT)
			fs_logf(s->log, s->log_ctx, LOG_WARNING, "sampler: %s: %s", s->cgroups[t],
				strerror(-dirfd));
		p->valid = false; /* when it comes back, it is a new cgroup */
		return;
	}
	o->present = true;
	c.valid = true;
	c.now_us = now_us;
	c.ino = fstat(dirfd, &st) == 0 ? st.st_ino : 0;
	fill_gauges(s, dirfd, t, o);
	read_counters(s, dirfd, t, &c);
	close(dirfd);

	deltas = p->valid && p->ino == c.ino && !went_backwards(&c, p, s->n_disks);
	o->reset = !deltas;
	if (deltas)
		fill_rates(s, &c, p, o);
	for (int k = 0; k < 3; k++)
		if (c.have_psi[k])
			fill_psi(psi_out[k], &c.psi[k], &p->psi[k], deltas && p->have_psi[k]);
	*p = c;
}

static int cg_sample(void *state, uint64_t now_us, struct fs_tenant_sample *out)
{
	struct cg_sampler *s = state;

	for (size_t t = 0; t < s->n_tenants; t++)
		sample_one(s, t, now_us, &out[t]);
	return 0;
}

const struct fs_sampler_ops fs_sampler_cgroupfs = {
    .name = "cgroupfs",
    .open = cg_open,
    .sample = cg_sample,
    .close = cg_close,
};
