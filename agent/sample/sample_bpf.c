/* SPDX-License-Identifier: MIT */
/*
 * The eBPF sampling backend (see sample_bpf.h): the inner (cgroupfs) sampler
 * fills the sample, then the BPF counters of each tenant subtree add runqueue
 * wait and net rates and cross-check io.stat.
 */
#include "sample_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef FS_HAVE_BPF
static const struct fs_bpf_ops real_bpf = {
    .open = fs_bpf_open,
    .close = fs_bpf_close,
    .read_subtree = fs_bpf_read_subtree,
};
const struct fs_bpf_ops *const fs_bpf_ops_default = &real_bpf;
#else
const struct fs_bpf_ops *const fs_bpf_ops_default = NULL;
#endif

#define DEFAULT_BLK_REL_TOL	 0.25
#define DEFAULT_BLK_ABS_TOL	 (1024.0 * 1024.0)
#define DEFAULT_WARN_INTERVAL_US (60ull * 1000000ull)

/* One tenant's BPF counters at the previous sample (the baseline). */
struct tenant_prev {
	bool valid;
	uint64_t now_us;
	int read_err; /* last read error logged (0 = none), to log each cause once */
	struct fs_bpf_counters c;
};

struct bpf_sampler {
	const struct fs_sampler_ops *inner;
	void *inner_state;
	const struct fs_bpf_ops *bpf;
	struct fs_bpf *b;
	unsigned programs;
	bool approx_wait;
	int root_fd;
	size_t n_tenants;
	char **cgroups;
	size_t n_disks;
	struct fs_devnum disks[FS_MAX_DISKS];
	struct tenant_prev *prev; /* [n_tenants] */
	fs_log_fn log;
	void *log_ctx;
	double blk_rel_tol, blk_abs_tol;
	uint64_t warn_interval_us;
	bool warned;		  /* a cross-check warning was logged ... */
	uint64_t last_warn_us;	  /* ... at this time */
	unsigned long suppressed; /* disagreements not logged since */
};

static void bpf_close(void *state)
{
	struct bpf_sampler *s = state;

	if (!s)
		return;
	if (s->b)
		s->bpf->close(s->b);
	if (s->inner_state)
		s->inner->close(s->inner_state);
	if (s->root_fd >= 0)
		close(s->root_fd);
	for (size_t i = 0; s->cgroups && i < s->n_tenants; i++)
		free(s->cgroups[i]);
	free(s->cgroups);
	free(s->prev);
	free(s);
}

/* Number of leading '/'-separated components a and b share, as a length of a. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	for (;; i++) {
		bool ea = a[i] == '\0' || a[i] == '/', eb = b[i] == '\0' || b[i] == '/';

		if (ea && eb)
			last = i;
		if (a[i] != b[i] || a[i] == '\0')
			break;
	}
	return last;
}

int fs_sampler_bpf_common_ancestor(const struct fs_sampler_config *cfg, char *out, size_t len)
{
	char rel[PATH_MAX] = "";
	size_t n = 0;
	struct stat st;
	int w;

	if (cfg->n_tenants) {
		n = strlen(cfg->cgroups[0]);
		for (size_t i = 1; i < cfg->n_tenants; i++) {
			size_t k = common_prefix(cfg->cgroups[0], cfg->cgroups[i]);

			if (k < n)
				n = k;
		}
	}
	if (n >= sizeof(rel))
		return -ENAMETOOLONG;
	memcpy(rel, cfg->n_tenants ? cfg->cgroups[0] : "", n);
	rel[n] = '\0';
	/* The tenants may not exist yet: attach at the deepest one that does. */
	for (;;) {
		w = snprintf(out, len, "%s%s%s", cfg->cgroup_root, rel[0] ? "/" : "", rel);
		if (w < 0 || (size_t)w >= len)
			return -ENAMETOOLONG;
		if (!rel[0] || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
			return 0;
		char *slash = strrchr(rel, '/');

		if (slash)
			*slash = '\0';
		else
			rel[0] = '\0';
	}
}

static void programs_str(unsigned p, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", p & FS_BPF_SCHED ? "sched " : "", p & FS_BPF_BLK ? "blk " : "",
		 p & FS_BPF_NET ? "net " : "");
	if (buf[0])
		buf[strlen(buf) - 1] = '\0';
}

/* Opens everything; on failure err says why and nothing stays loaded. */
static int open_quiet(struct bpf_sampler **out, const struct fs_sampler_config *cfg,
		      const struct fs_sampler_bpf_opts *o, char *err, size_t errlen)
{
	static const struct fs_sampler_bpf_opts none;
	struct fs_bpf_config bc = {0};
	char attach[PATH_MAX], ferr[512] = "";
	struct bpf_sampler *s;
	size_t n = cfg->n_tenants ? cfg->n_tenants : 1;
	int r;

	*out = NULL;
	if (!o)
		o = &none;
	if (cfg->n_disks > FS_MAX_DISKS) {
		snprintf(err, errlen, "%zu disks, at most %d", cfg->n_disks, FS_MAX_DISKS);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->root_fd = -1;
	s->inner = o->inner ? o->inner : &fs_sampler_cgroupfs;
	s->bpf = o->bpf ? o->bpf : fs_bpf_ops_default;
	s->programs = o->programs ? o->programs : FS_BPF_SCHED;
	s->approx_wait = o->approx_wait;
	s->log = cfg->log;
	s->log_ctx = cfg->log_ctx;
	s->blk_rel_tol = o->blk_rel_tol > 0 ? o->blk_rel_tol : DEFAULT_BLK_REL_TOL;
	s->blk_abs_tol = o->blk_abs_tol > 0 ? o->blk_abs_tol : DEFAULT_BLK_ABS_TOL;
	s->warn_interval_us = o->warn_interval_us ? o->warn_interval_us : DEFAULT_WARN_INTERVAL_US;
	s->n_tenants = cfg->n_tenants;
	s->n_disks = cfg->n_disks;
	if (cfg->n_disks)
		memcpy(s->disks, cfg->disks, cfg->n_disks * sizeof(s->disks[0]));
	s->cgroups = calloc(n, sizeof(*s->cgroups));
	s->prev = calloc(n, sizeof(*s->prev));
	if (!s->cgroups || !s->prev) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < cfg->n_tenants; i++) {
		s->cgroups[i] = strdup(cfg->cgroups[i]);
		if (!s->cgroups[i]) {
			r = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (!s->bpf) {
		r = -EOPNOTSUPP;
		snprintf(err, errlen, "fairshared was built without eBPF support");
		goto fail;
	}
	s->root_fd = open(cfg->cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->root_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "open %s: %s", cfg->cgroup_root, strerror(errno));
		goto fail;
	}
	bc.programs = s->programs;
	bc.approx_wait = s->approx_wait;
	bc.procfs_root = cfg->procfs_root; /* NULL or "": fs_bpf's default */
	if (s->programs & FS_BPF_NET) {
		r = fs_sampler_bpf_common_ancestor(cfg, attach, sizeof(attach));
		if (r < 0) {
			snprintf(err, errlen, "tenants' common ancestor under %s: %s",
				 cfg->cgroup_root, strerror(-r));
			goto fail;
		}
		bc.net_attach_path = attach;
	}
	r = s->bpf->open(&bc, &s->b, ferr, sizeof(ferr));
	if (r < 0) {
		snprintf(err, errlen, "%s", ferr[0] ? ferr : strerror(-r));
		s->b = NULL;
		goto fail;
	}
	r = s->inner->open(&s->inner_state, cfg);
	if (r < 0) {
		snprintf(err, errlen, "%s sampler: %s", s->inner->name, strerror(-r));
		s->inner_state = NULL;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	bpf_close(s);
	return r;
}

static void log_loaded(const struct bpf_sampler *s, const struct fs_sampler_config *cfg)
{
	char progs[32], attach[PATH_MAX] = "";

	programs_str(s->programs, progs, sizeof(progs));
	if ((s->programs & FS_BPF_NET) &&
	    fs_sampler_bpf_common_ancestor(cfg, attach, sizeof(attach)) < 0)
		attach[0] = '\0';
	fs_logf(s->log, s->log_ctx, LOG_INFO, "sampler: eBPF counters loaded (%s)%s%s%s", progs,
		(s->programs & FS_BPF_SCHED) && s->approx_wait ? ", approximate runqueue wait" : "",
		attach[0] ? ", net attached at " : "", attach);
}

int fs_sampler_bpf_open(void **state, const struct fs_sampler_config *cfg,
			const struct fs_sampler_bpf_opts *o)
{
	struct bpf_sampler *s;
	char err[768];
	int r;

	*state = NULL;
	r = open_quiet(&s, cfg, o, err, sizeof(err));
	if (r < 0) {
		fs_logf(cfg->log, cfg->log_ctx, LOG_ERR, "sampler: cannot load eBPF counters: %s",
			err);
		return r;
	}
	log_loaded(s, cfg);
	*state = s;
	return 0;
}

static int bpf_open_default(void **state, const struct fs_sampler_config *cfg)
{
	return fs_sampler_bpf_open(state, cfg, NULL);
}

int fs_sampler_open_pick(enum fs_conf_sampler mode, const struct fs_sampler_config *cfg,
			 const struct fs_sampler_bpf_opts *o, const struct fs_sampler_ops **ops,
			 void **state)
{
	const struct fs_sampler_ops *inner = o && o->inner ? o->inner : &fs_sampler_cgroupfs;
	struct bpf_sampler *s;
	char err[768];
	int r;

	*state = NULL;
	*ops = inner;
	if (mode == FS_SAMPLER_CGROUPFS)
		return inner->open(state, cfg);
	if (mode == FS_SAMPLER_BPF) {
		*ops = &fs_sampler_bpf;
		return fs_sampler_bpf_open(state, cfg, o);
	}
	r = open_quiet(&s, cfg, o, err, sizeof(err));
	if (r == 0) {
		log_loaded(s, cfg);
		*ops = &fs_sampler_bpf;
		*state = s;
		return 0;
	}
	fs_logf(cfg->log, cfg->log_ctx, LOG_WARNING,
		"sampler: eBPF counters not loaded (%s); using %s only: runqueue wait and net "
		"usage unknown",
		err, inner->name);
	return inner->open(state, cfg);
}

static bool counters_backwards(const struct fs_bpf_counters *c, const struct fs_bpf_counters *p)
{
	return c->cpu_ns < p->cpu_ns || c->wait_ns < p->wait_ns || c->pwait_ns < p->pwait_ns ||
	       c->rx_bytes < p->rx_bytes || c->tx_bytes < p->tx_bytes ||
	       c->rx_packets < p->rx_packets || c->tx_packets < p->tx_packets;
}

static const struct fs_bpf_dev_io *find_dev(const struct fs_bpf_counters *c, struct fs_devnum d)
{
	for (unsigned i = 0; i < c->ndevs && i < FS_BPF_MAX_DEVS; i++)
		if (c->devs[i].major == d.major && c->devs[i].minor == d.minor)
			return &c->devs[i];
	return NULL;
}

/*
 * io.stat and the BPF block counter both charge a bio when it is submitted,
 * but to different cgroups for buffered writeback: io.stat to the page's
 * owner, BPF to the submitter (a flusher kworker). So BPF write bytes below
 * io.stat are expected and only an excess is a disagreement; reads are
 * submitted by the reader and must agree both ways.
 */
static void cross_check(struct bpf_sampler *s, size_t t, const struct fs_bpf_counters *c,
			const struct fs_bpf_counters *p, double dt, uint64_t now_us,
			const struct fs_tenant_sample *o)
{
	for (size_t d = 0; d < s->n_disks; d++) {
		const struct fs_bpf_dev_io *cd = find_dev(c, s->disks[d]),
					   *pd = find_dev(p, s->disks[d]);
		double br, bw, sr, sw, tol_r, tol_w;
		bool bad_r, bad_w;

		if (isnan(o->io[d].rbps) || isnan(o->io[d].wbps))
			continue; /* no io.stat for this disk */
		if (cd && pd && (cd->rbytes < pd->rbytes || cd->wbytes < pd->wbytes))
			continue; /* evicted and recounted: no delta this period */
		br = cd ? (double)(cd->rbytes - (pd ? pd->rbytes : 0)) : 0;
		bw = cd ? (double)(cd->wbytes - (pd ? pd->wbytes : 0)) : 0;
		sr = o->io[d].rbps * dt;
		sw = o->io[d].wbps * dt;
		tol_r = fmax(s->blk_rel_tol * fmax(br, sr), s->blk_abs_tol);
		tol_w = fmax(s->blk_rel_tol * fmax(bw, sw), s->blk_abs_tol);
		bad_r = fabs(br - sr) > tol_r;
		bad_w = bw - sw > tol_w;
		if (!bad_r && !bad_w)
			continue;
		if (s->warned && now_us - s->last_warn_us < s->warn_interval_us) {
			s->suppressed++;
			continue;
		}
		fs_logf(
		    s->log, s->log_ctx, LOG_WARNING,
		    "sampler: %s disk %u:%u: eBPF block bytes disagree with io.stat over %.2f s: "
		    "read %.0f vs %.0f, write %.0f vs %.0f (io.stat is used; %lu more since "
		    "the last warning)",
		    s->cgroups[t], s->disks[d].major, s->disks[d].minor, dt, br, sr, bw, sw,
		    s->suppressed);
		s->warned = true;
		s->last_warn_us = now_us;
		s->suppressed = 0;
	}
}

static void sample_one(struct bpf_sampler *s, size_t t, uint64_t now_us, struct fs_tenant_sample *o)
{
	struct tenant_prev *p = &s->prev[t];
	struct fs_bpf_counters c;
	char err[512];
	double dt;
	int r;

	if (!o->present) {
		p->valid = false;
		return;
	}
	r = s->bpf->read_subtree(s->b, s->root_fd, s->cgroups[t], &c, err, sizeof(err));
	if (r < 0) {
		/* ENOENT: removed since the inner sample, a new cgroup next time. */
		if (r != -ENOENT && r != p->read_err)
			fs_logf(s->log, s->log_ctx, LOG_WARNING, "sampler: eBPF counters of %s: %s",
				s->cgroups[t], err);
		p->read_err = r;
		p->valid = false;
		return;
	}
	p->read_err = 0;
	dt = (double)(now_us - p->now_us) / 1e6;
	if (p->valid && !o->reset && now_us > p->now_us && !counters_backwards(&c, &p->c)) {
		if (s->programs & FS_BPF_SCHED) {
			o->cpu_runq_wait = (double)(c.wait_ns - p->c.wait_ns) / 1e9 / dt;
			o->cpu_runq_wait_preempted =
			    (double)(c.pwait_ns - p->c.pwait_ns) / 1e9 / dt;
		}
		if (s->programs & FS_BPF_NET) {
			o->net_rx_bps = (double)(c.rx_bytes - p->c.rx_bytes) / dt;
			o->net_tx_bps = (double)(c.tx_bytes - p->c.tx_bytes) / dt;
		}
		if ((s->programs & FS_BPF_BLK) && !c.devs_truncated && !p->c.devs_truncated)
			cross_check(s, t, &c, &p->c, dt, now_us, o);
	}
	p->valid = true;
	p->now_us = now_us;
	p->c = c;
}

static int bpf_sample(void *state, uint64_t now_us, struct fs_tenant_sample *out)
{
	struct bpf_sampler *s = state;
	int r = s->inner->sample(s->inner_state, now_us, out);

	if (r < 0)
		return r;
	for (size_t t = 0; t < s->n_tenants; t++)
		sample_one(s, t, now_us, &out[t]);
	return 0;
}

/* The cgroupfs sampler inside keeps the directories. */
static int bpf_dirfd(void *state, size_t t, const char *cgroup, uint64_t *ino)
{
	struct bpf_sampler *s = state;

	if (!s->inner->dirfd)
		return -1;
	return s->inner->dirfd(s->inner_state, t, cgroup, ino);
}

static int bpf_file_fd(void *state, size_t t, const char *cgroup, const char *file)
{
	struct bpf_sampler *s = state;

	if (!s->inner->file_fd)
		return -1;
	return s->inner->file_fd(s->inner_state, t, cgroup, file);
}

const struct fs_sampler_ops fs_sampler_bpf = {
    .name = "bpf",
    .open = bpf_open_default,
    .sample = bpf_sample,
    .close = bpf_close,
    .dirfd = bpf_dirfd,
    .file_fd = bpf_file_fd,
};
