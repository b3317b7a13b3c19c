/* SPDX-License-Identifier: MIT */
/*
 * The cgroupfs sampling backend: cpu.stat, memory.*, io.stat and *.pressure
 * of each tenant cgroup, turned into per-period rates against the previous
 * sample (the baseline).
 *
 * Cost per period. Opening, reading and closing ~9 files per tenant (plus a
 * path walk) was most of the daemon's CPU with 1,000 tenants. So each tenant
 * keeps its cgroup directory fd and the fds of the files it reads (opened on
 * first use), and a period costs one pread per file: cgroupfs generates a
 * stat file's text afresh on a read at offset 0.
 *
 * Why keep every file open rather than only the directory (1 fd per tenant,
 * openat + pread + close per file)? Measured on 6.18 in a 2-CPU VM, 1,000
 * tenants, CPU per period:
 *                                       real cgroup2 (4 files)  fake tree (9)
 *   before (walk, open/read/read/close)        64-69 ms             86 ms
 *   directory fd kept, openat per file         39-41 ms             60 ms
 *   every file kept open (this)                20-25 ms             30 ms
 * The rest is the kernel generating the text (cpu.stat flushes rstat, PSI
 * sums per CPU) and this VM's ~1.2 us per syscall.
 *
 * memory.events is the exception: its counters move only when the kernel
 * hits a limit, and cgroupfs announces every change to inotify, so it is
 * read only when an event says it changed (file_watch.h) and not kept open:
 * one read(2) of the inotify queue per period stands for a read per tenant.
 *
 * The slow files, memory.stat and *.pressure, are read only every
 * slow_every_us (fairshared: 2 s, the kernel's own avg10 update interval;
 * slow_due below), so about half the tenants read them in a 1 s period.
 *
 * fd budget. That costs 1 + 7 fds per tenant (1 + 6 without disks, one
 * more without inotify): 80,000 for 10,000 tenants, far past the soft
 * RLIMIT_NOFILE systemd gives a service by default (fairshared raises the
 * soft limit to the hard one at start). When not every tenant's share fits,
 * the *.pressure files are not kept open (read every other period, they are
 * the fds worth least) and a share is 1 + 4 (keep_psi). Tenants keep
 * their fds while a budget allows: the soft RLIMIT_NOFILE at open minus a
 * reserve of max(256, a quarter) for the writer, the control socket, BPF
 * objects and the rest (or less: max_open_files). A tenant's share is
 * reserved when its directory is opened and returned when it is closed
 * (vanished, replaced, sampler closed). It is all its fds (1 + files) while
 * that leaves one fd for the directory of every tenant without a share yet,
 * else its directory alone (dir_only): the directory saves a path walk, an
 * fstat and an open and close of it per period, a kept file only an open
 * and a close, so at 10,000 tenants in 15,000 fds every tenant keeping its
 * directory and 1,250 all their files beat 3,000 keeping all and 7,000
 * walking their paths (issue 19's benchmark, 10,000 tenants, login node:
 * the sample stage 59-64 -> 50-62 ms per period, 5 runs each).
 * A tenant left with its directory only takes a full share once one is
 * free (a tenant went away). Beyond one fd per tenant, a tenant without a
 * share is sampled as before: path walk and openat/pread/close per file
 * every period, one fd at a time. EMFILE despite the budget shrinks it
 * (warned once). The unit's LimitNOFILE= must cover 8 x tenants / 0.75 for
 * all of them to keep every file. The writer keeps the files it writes
 * open with what is left once every tenant's share fits
 * (fs_cgroupfs_writer_fds): a kept stat file saves an open and a close
 * every period, a written one only when its value changes, so the
 * sampler's come first. Memory: an open cgroupfs
 * file that was read holds its seq_file page and kernfs state, measured
 * ~7 KiB of kernel memory per fd on 6.18 (~50 KiB per tenant, ~490 MiB for
 * 10,000); max_open_files caps that.
 *
 * Missing files (controller not enabled, no PSI) are remembered per tenant
 * and probed again only every REPROBE_US plus a spread by tenant index (10 to
 * 20 s, so that all tenants do not probe in the same period), and at once
 * when a new cgroup appears at the path.
 *
 * Vanished and recreated cgroups: on cgroup2 the kept fds of a removed
 * cgroup fail with ENODEV (checked on 6.18): the sampler then looks at the
 * path (fstatat): gone means not present; another inode means a new cgroup,
 * whose directory and files are opened at once, and the inode check below
 * resets the baseline, as before; the same inode means a controller was
 * disabled (its files went away): the others are read again. On other
 * filesystems (the tests' fake trees, where unlinked files stay readable
 * through an open fd) the path is looked at when an inotify watch says the
 * directory may have moved (fake_dir_may_have_moved), and everywhere every
 * 10 to 20 s (reprobe_at) as a safety net.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "file_watch.h"
#include "list_match.h"
#include "log_cond.h"
#include "sample.h"
#include "sample_parse.h"

/* Raw cumulative counters of one tenant at one sample time. */
struct raw {
	bool valid;
	ino_t ino; /* cgroup directory inode: changes when it is recreated */
	uint64_t now_us;
	bool have_cpu, have_mev, have_psi[3];
	/* when the *.pressure files were read (slow_due), or a quiet sample:
	 * their totals do not move while the tenant is quiet (psi_decay), so
	 * its first read once it runs is that period's stall, not a share of
	 * the whole quiet span's (what came between its last read and the
	 * quiet span, at most slow_every_us of it, counts with that period) */
	uint64_t slow_us;
	/* when memory.stat was read (slow_due, or a quiet tenant's re-read,
	 * fill_gauges), or a quiet sample: likewise for its refault count */
	uint64_t ms_us;
	bool have_ms; /* memory.stat, read at ms_us */
	struct fs_memory_stat ms;
	double refault_bps; /* refaulted bytes/s between the last two reads of
			     * memory.stat; NAN: unknown */
	/* when memory.current and io.stat were read: now_us, or earlier when
	 * held for a quiet tenant (quiet) */
	uint64_t rest_us;
	double mem_current; /* memory.current, bytes; NAN: unknown */
	struct fs_cpu_stat cpu;
	struct fs_memory_events mev;
	struct fs_pressure psi[3];
	bool have_io;
	struct fs_io_stat io[FS_MAX_DISKS];
};

/* The files read every period, indexes into struct tenant_fds.fd. */
enum {
	F_CPU_STAT,
	F_MEM_CURRENT,
	F_MEM_STAT,
	F_MEM_EVENTS,
	F_IO_STAT,
	F_CPU_PSI,
	F_MEM_PSI,
	F_IO_PSI,
	N_FILES
};

static const char *const file_names[N_FILES] = {
    "cpu.stat", "memory.current", "memory.stat",     "memory.events",
    "io.stat",	"cpu.pressure",	  "memory.pressure", "io.pressure",
};

#define REPROBE_US	(10ull * 1000000ull) /* missing files: probe again after 10 s */
#define REPROBE_SPREAD	64u		     /* ... plus (t % 64) / 64 of that */
#define QUIET_PHASES	16u		     /* quiet: re-read phases (quiet) */
#define FD_RESERVE_MIN	256u		     /* fds left to the rest of the daemon */
#define FD_BUDGET_LIMIT ((size_t)1 << 24)    /* for RLIM_INFINITY */

/* One tenant's open files, kept between periods. */
struct tenant_fds {
	int dirfd;     /* cgroup directory, -1 when closed */
	bool kept;     /* dirfd and fd[] stay open: a full share reserved */
	bool dir_only; /* only dirfd stays open: a share of 1 reserved */
	bool known;    /* dev/ino below are the last directory seen at the path */
	dev_t dev;     /* of the directory */
	ino_t ino;
	int fd[N_FILES];      /* -1: not open (kept tenants only) */
	unsigned absent;      /* bit per file: missing when last probed */
	bool failed;	      /* a kept fd failed to read this period */
	uint64_t probe_at_us; /* probe the absent files again from then on */
	uint64_t check_at_us; /* cgroup2: look at the path again from then on */
	uint64_t slow_at_us;  /* read the slow files again from then on */
	uint64_t rest_at_us;  /* quiet: read the rest again from then on */
	/* its directory failed to open: logged once, then summarised */
	struct fs_log_cond open_err;
};

struct cg_sampler {
	struct fs_cgroupfs cg;
	size_t n_tenants;
	char **cgroups;
	size_t n_disks;
	struct fs_devnum disks[FS_MAX_DISKS];
	struct raw *prev;	 /* [n_tenants] */
	struct tenant_fds *tfd;	 /* [n_tenants] */
	size_t fd_budget;	 /* fds the kept tenants may hold */
	size_t fds_reserved;	 /* budget shares of the kept tenants */
	size_t n_shares;	 /* tenants holding a share (kept or dir_only) */
	size_t fds_per_tenant;	 /* 1 + files kept open */
	bool keep_psi;		 /* *.pressure kept open too (all tenants fit) */
	bool cgroup2;		 /* the root is on cgroup2, not a fake tree */
	struct fs_watch *mev;	 /* memory.events changes; NULL: read every period */
	struct fs_watch *place;	 /* fake tree: kept directories moved or removed
				  * (tenant_open); NULL: on cgroup2, or without
				  * inotify (the path is looked at every period) */
	bool out_of_fds;	 /* EMFILE seen: budget lowered, warned */
	uint64_t slow_every_us;	 /* read the slow files about this often, 0: always */
	uint64_t quiet_every_us; /* a quiet tenant's other files, 0: always */
	struct fs_buf buf;
	double page_size; /* bytes, for the refault counts */
	fs_log_fn log;
	void *log_ctx;
};

static const int psi_files[3] = {F_CPU_PSI, F_MEM_PSI, F_IO_PSI};
#define PSI_BITS ((1u << F_CPU_PSI) | (1u << F_MEM_PSI) | (1u << F_IO_PSI))
/* the files read on the slow cadence (slow_due) */
#define SLOW_BITS (PSI_BITS | (1u << F_MEM_STAT))

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
	s->mem_refault_bytes = NAN;
	psi_unknown(&s->psi_cpu);
	psi_unknown(&s->psi_mem);
	psi_unknown(&s->psi_io);
	for (size_t d = 0; d < FS_MAX_DISKS; d++)
		s->io[d].rbps = s->io[d].wbps = s->io[d].riops = s->io[d].wiops = NAN;
	s->net_rx_bps = s->net_tx_bps = NAN;
}

/* A tenant with nothing open and nothing known yet. */
static void tenant_fds_init(struct tenant_fds *tf)
{
	memset(tf, 0, sizeof(*tf));
	tf->dirfd = -1;
	for (int k = 0; k < N_FILES; k++)
		tf->fd[k] = -1;
}

/* It holds a budget share: its directory stays open between periods. */
static bool keeps_dir(const struct tenant_fds *tf)
{
	return tf->kept || tf->dir_only;
}

/* Returns a tenant's budget share (its fds stay open until closed). */
static void drop_share(struct cg_sampler *s, struct tenant_fds *tf)
{
	if (keeps_dir(tf)) {
		s->fds_reserved -= tf->kept ? s->fds_per_tenant : 1;
		s->n_shares--;
	}
	tf->kept = tf->dir_only = false;
}

/*
 * Whether a tenant that holds no share (or its directory only: upgrade)
 * may take a full one: it must leave one fd for the directory of every
 * tenant that holds no share yet.
 */
static bool full_share_fits(const struct cg_sampler *s, bool upgrade)
{
	const size_t others = s->n_tenants - s->n_shares - (upgrade ? 0 : 1);
	const size_t need = s->fds_per_tenant - (upgrade ? 1 : 0);

	return s->fds_reserved + need + others <= s->fd_budget;
}

/* Closes a tenant's fds and returns its budget share; absent/known stay. */
static void tenant_close(struct cg_sampler *s, struct tenant_fds *tf)
{
	for (int k = 0; k < N_FILES; k++) {
		if (tf->fd[k] >= 0)
			close(tf->fd[k]);
		tf->fd[k] = -1;
	}
	if (tf->dirfd >= 0)
		close(tf->dirfd);
	tf->dirfd = -1;
	drop_share(s, tf);
}

static size_t default_fd_budget(void)
{
	struct rlimit rl;
	size_t cur, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	cur = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > FD_BUDGET_LIMIT ? FD_BUDGET_LIMIT
									    : (size_t)rl.rlim_cur;
	reserve = cur / 4 > FD_RESERVE_MIN ? cur / 4 : FD_RESERVE_MIN;
	return cur > reserve ? cur - reserve : 0;
}

size_t fs_cgroupfs_writer_fds(size_t n_tenants)
{
	const size_t budget = default_fd_budget(), sampler = n_tenants * (1 + N_FILES);

	return budget > sampler ? budget - sampler : 0;
}

static void cg_close(void *state)
{
	struct cg_sampler *s = state;

	if (!s)
		return;
	for (size_t i = 0; s->tfd && i < s->n_tenants; i++)
		tenant_close(s, &s->tfd[i]);
	free(s->tfd);
	fs_watch_close(s->mev);
	fs_watch_close(s->place);
	fs_cgfs_close(&s->cg);
	for (size_t i = 0; s->cgroups && i < s->n_tenants; i++)
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
	{
		long ps = sysconf(_SC_PAGESIZE);

		s->page_size = ps > 0 ? (double)ps : 4096;
	}
	r = fs_cgfs_open(&s->cg, cfg->cgroup_root);
	if (r < 0) {
		fs_logf(s->log, s->log_ctx, LOG_ERR, "sampler: cannot open %s: %s",
			cfg->cgroup_root, strerror(-r));
		goto out;
	}
	s->n_tenants = cfg->n_tenants;
	s->cgroups = calloc(cfg->n_tenants ? cfg->n_tenants : 1, sizeof(*s->cgroups));
	s->prev = calloc(cfg->n_tenants ? cfg->n_tenants : 1, sizeof(*s->prev));
	s->tfd = calloc(cfg->n_tenants ? cfg->n_tenants : 1, sizeof(*s->tfd));
	for (size_t i = 0; s->tfd && i < cfg->n_tenants; i++)
		tenant_fds_init(&s->tfd[i]);
	if (!s->cgroups || !s->prev || !s->tfd) {
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
	s->slow_every_us = cfg->slow_every_us;
	s->quiet_every_us = cfg->quiet_every_us;
	s->n_disks = cfg->n_disks;
	if (cfg->n_disks)
		memcpy(s->disks, cfg->disks, cfg->n_disks * sizeof(s->disks[0]));
	if (fs_watch_open(&s->mev, s->n_tenants, FS_WATCH_CONTENT) < 0)
		fs_logf(s->log, s->log_ctx, LOG_INFO,
			"sampler: no inotify: memory.events is read every period");
	/* no disks: no io.stat; memory.events watched: read when it changes */
	s->fds_per_tenant = 1 + N_FILES - (s->n_disks ? 0 : 1) - (s->mev ? 1 : 0);
	s->cgroup2 = fs_cgfs_is_cgroup2(s->cg.root_fd);
	if (!s->cgroup2 && fs_watch_open(&s->place, s->n_tenants, FS_WATCH_PLACE) < 0)
		s->place = NULL; /* the path is looked at every period */
	s->fd_budget = default_fd_budget();
	if (cfg->max_open_files && cfg->max_open_files < s->fd_budget)
		s->fd_budget = cfg->max_open_files;
	/* Not every tenant fits: the *.pressure fds go first. Read every
	 * other period (slow_every_us), a kept one saves an open and a close
	 * per two periods; a kept directory or stat file saves that every
	 * period, so the budget keeps more tenants' directories and stat
	 * files instead (10,000 tenants in 15,000 fds: each keeps its directory
	 * and 1,250 keep all their files, not 714). */
	s->keep_psi = s->n_tenants * s->fds_per_tenant <= s->fd_budget;
	if (!s->keep_psi)
		s->fds_per_tenant -= 3;
	if (s->n_tenants * s->fds_per_tenant > s->fd_budget)
		fs_logf(s->log, s->log_ctx, LOG_INFO,
			"sampler: %zu tenants need %zu open files, the budget is %zu: some %s "
			"every period (raise LimitNOFILE)",
			s->n_tenants, s->n_tenants * s->fds_per_tenant, s->fd_budget,
			s->n_tenants <= s->fd_budget
			    ? "keep only their directory and open its files"
			    : "keep nothing and walk their paths");
	*state = s;
	return 0;
out:
	cg_close(s);
	return r;
}

/*
 * Out of fds although within the budget (the rest of the daemon holds more
 * than the reserve): this tenant's fds are closed after this period and the
 * budget shrinks to what the kept tenants hold now.
 */
static void unkeep(struct cg_sampler *s, struct tenant_fds *tf)
{
	drop_share(s, tf);
	s->fd_budget = s->fds_reserved;
	if (!s->out_of_fds)
		fs_logf(s->log, s->log_ctx, LOG_WARNING,
			"sampler: out of file descriptors: keeping %zu open from now on "
			"(raise LimitNOFILE)",
			s->fd_budget);
	s->out_of_fds = true;
}

/*
 * Reads file k of tenant t into s->buf: from its kept fd, or opened from the
 * directory (kept afterwards when the tenant is). False when it is missing or
 * unreadable (fields stay NAN); a missing one is remembered and not opened
 * again before its re-probe time (reprobe says it is due). A kept fd that
 * fails is closed and tf->failed set.
 */
static bool read_file(struct cg_sampler *s, size_t t, int k, bool reprobe)
{
	struct tenant_fds *tf = &s->tfd[t];
	int fd = tf->fd[k], r;

	if (fd >= 0) {
		r = fs_cgfs_pread(fd, &s->buf);
		if (r == 0)
			return true;
		/* -ENODEV: removed with its cgroup (or its controller was
		 * disabled); sample_one looks at the path and reads again. */
		close(fd);
		tf->fd[k] = -1;
		tf->failed = true;
		return false;
	}
	if ((tf->absent & (1u << k)) && !reprobe)
		return false;
	fd = fs_cgfs_open_file_at(tf->dirfd, file_names[k]);
	if ((fd == -EMFILE || fd == -ENFILE) && keeps_dir(tf))
		unkeep(s, tf);
	/* A kept directory whose cpu.stat (in every cgroup2 directory, whatever
	 * the controllers) cannot be opened was removed: as a kept fd that
	 * fails, sample_one looks at the path. */
	if ((fd == -ENOENT || fd == -ENODEV) && k == F_CPU_STAT && s->cgroup2 && keeps_dir(tf)) {
		tf->failed = true;
		return false;
	}
	r = fd < 0 ? fd : fs_cgfs_pread(fd, &s->buf);
	if (r == 0) {
		tf->absent &= ~(1u << k);
		if (tf->kept && !(k == F_MEM_EVENTS && s->mev) &&
		    (s->keep_psi || !(PSI_BITS & (1u << k))))
			tf->fd[k] = fd;
		else
			close(fd);
		return true;
	}
	if (fd >= 0)
		close(fd);
	/* ENOENT: controller not enabled or no PSI; ENODEV/EOPNOTSUPP: PSI
	 * disabled at boot (psi=0) or for the cgroup. Expected, so not logged,
	 * and not tried again every period. */
	if (r == -ENOENT || r == -ENODEV || r == -EOPNOTSUPP)
		tf->absent |= 1u << k; /* sample_one sets the next probe time */
	else
		fs_logf(s->log, s->log_ctx, LOG_DEBUG, "sampler: %s/%s: %s", s->cgroups[t],
			file_names[k], strerror(-r));
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

/*
 * The gauges into o: memory.current every period but while the tenant is
 * quiet (hold); memory.stat's when the slow files are read (slow), and at
 * a quiet tenant's re-read (rest) when memory.current moved: the kernel
 * reclaimed from it, and the page-cache gauges are what it took. Else the
 * last read's, held from p, which then is this very directory (slow_due,
 * quiet).
 */
static void fill_gauges(struct cg_sampler *s, size_t t, bool reprobe, bool slow, bool hold,
			bool rest, const struct raw *p, struct fs_tenant_sample *o, struct raw *c)
{
	const struct fs_memory_stat *ms = &c->ms;

	c->mem_current = hold ? p->mem_current : NAN;
	if (!hold && read_file(s, t, F_MEM_CURRENT, reprobe)) {
		char *e;
		unsigned long long v = strtoull(s->buf.data, &e, 10);

		if (e != s->buf.data)
			c->mem_current = (double)v;
	}
	o->mem_current = c->mem_current;
	/* (NAN != NAN: an unknown memory.current reads memory.stat too) */
	if (slow || (rest && c->mem_current != p->mem_current)) {
		c->have_ms = read_file(s, t, F_MEM_STAT, reprobe) &&
			     fs_parse_memory_stat(s->buf.data, &c->ms) == 0;
		c->ms_us = c->now_us;
	} else {
		c->ms_us = hold || rest ? c->now_us : p->ms_us;
		if ((c->have_ms = p->have_ms))
			c->ms = p->ms;
	}
	if (!c->have_ms)
		return;
	if (ms->have & FS_MEM_ANON)
		o->mem_anon = (double)ms->anon;
	if (ms->have & FS_MEM_FILE)
		o->mem_file = (double)ms->file;
	if (ms->have & FS_MEM_ACTIVE_ANON)
		o->mem_active_anon = (double)ms->active_anon;
	if (ms->have & FS_MEM_INACTIVE_ANON)
		o->mem_inactive_anon = (double)ms->inactive_anon;
	if (ms->have & FS_MEM_ACTIVE_FILE)
		o->mem_active_file = (double)ms->active_file;
	if (ms->have & FS_MEM_INACTIVE_FILE)
		o->mem_inactive_file = (double)ms->inactive_file;
}

/* memory.stat workingset_refault_anon + _file, pages; false without both */
static bool refault_pages(const struct raw *r, uint64_t *pages)
{
	const unsigned both = FS_MEM_REFAULT_ANON | FS_MEM_REFAULT_FILE;

	if (!r->have_ms || (r->ms.have & both) != both)
		return false;
	*pages = r->ms.workingset_refault_anon + r->ms.workingset_refault_file;
	return true;
}

/*
 * The refault rate into c->refault_bps: measured when memory.stat was read
 * now against its previous read, held from p in between, zero while the
 * tenant is quiet (nothing of it ran to fault), unknown after a reset. Not
 * in went_backwards: the kernel keeps these per memcg and never resets
 * them; a new cgroup changes the inode.
 */
static void refault_rate(const struct cg_sampler *s, bool quiet, bool deltas, const struct raw *p,
			 struct raw *c)
{
	uint64_t now, before;

	c->refault_bps = NAN;
	if (!deltas)
		return;
	if (quiet)
		c->refault_bps = 0;
	else if (c->ms_us == p->ms_us)
		c->refault_bps = p->refault_bps;
	else if (c->ms_us > p->ms_us && refault_pages(c, &now) && refault_pages(p, &before) &&
		 now >= before)
		c->refault_bps =
		    delta(now, before) * s->page_size * 1e6 / (double)(c->ms_us - p->ms_us);
}

/*
 * memory.events, read only when inotify says it changed (file_watch.h): its
 * counters move only when the kernel hits a limit, and the kernel announces
 * each change. Unchanged, the previous sample of this very directory holds.
 * Not kept open: read that rarely, its fd is better spent on another tenant.
 */
static void read_memory_events(struct cg_sampler *s, size_t t, bool reprobe, const struct raw *p,
			       struct raw *c)
{
	struct tenant_fds *tf = &s->tfd[t];
	bool absent = tf->absent & (1u << F_MEM_EVENTS);

	if (p->valid && p->ino == tf->ino && fs_watch_unchanged(s->mev, t)) {
		c->have_mev = p->have_mev;
		c->mev = p->mev;
		return;
	}
	/* watched before it is read: a change from now on is seen */
	if (!absent || reprobe)
		fs_watch_arm(s->mev, t, tf->dirfd, file_names[F_MEM_EVENTS]);
	c->have_mev = read_file(s, t, F_MEM_EVENTS, reprobe);
	if (!c->have_mev)
		fs_watch_forget(s->mev, t); /* missing or unreadable: nothing to keep */
	c->have_mev = c->have_mev && fs_parse_memory_events(s->buf.data, &c->mev) == 0;
}

static void read_cpu(struct cg_sampler *s, size_t t, bool reprobe, struct raw *c)
{
	c->have_cpu = read_file(s, t, F_CPU_STAT, reprobe) &&
		      fs_parse_cpu_stat(s->buf.data, &c->cpu) == 0 && (c->cpu.have & FS_CPU_USAGE);
}

/*
 * The stall averages of a tenant that did not run for dt_us (quiet): the
 * kernel's, which take in no stall meanwhile. Each avgN is an exponential
 * average with an N s time constant (kernel/sched/psi.c, updated every
 * 2 s). A tenant that used no CPU for a whole period had no task left
 * runnable (cpu.max refills its quota within a period), none in reclaim
 * and none waiting on a page-in it would have run to take (memory, io):
 * its averages decay as the kernel's do, and the totals stay. (A task
 * blocked in IO for whole periods on end is the exception: such a tenant
 * moves neither CPU nor the disk, and is read in full the moment it runs.)
 */
static void psi_decay(struct fs_pressure *x, uint64_t dt_us)
{
	const double dt = (double)dt_us / 1e6;
	const double k10 = exp(-dt / 10), k60 = exp(-dt / 60), k300 = exp(-dt / 300);
	struct fs_psi_line *line[2] = {&x->some, &x->full};

	for (int i = 0; i < 2; i++) {
		line[i]->avg10 *= k10;
		line[i]->avg60 *= k60;
		line[i]->avg300 *= k300;
	}
}

/* The counters but cpu.stat's and memory.events': the *.pressure files
 * read now (slow), else the last ones held, decayed while the tenant is
 * quiet; io.stat read but while the tenant is quiet (hold). */
static void read_counters(struct cg_sampler *s, size_t t, bool reprobe, bool slow, bool quiet,
			  bool hold, const struct raw *p, struct raw *c)
{
	for (int k = 0; k < 3; k++) {
		if (slow) {
			c->have_psi[k] = read_file(s, t, psi_files[k], reprobe) &&
					 fs_parse_pressure(s->buf.data, &c->psi[k]) == 0;
		} else if ((c->have_psi[k] = p->have_psi[k])) {
			c->psi[k] = p->psi[k];
			if (quiet && c->now_us > p->now_us)
				psi_decay(&c->psi[k], c->now_us - p->now_us);
		}
	}
	if (hold) {
		c->have_io = p->have_io;
		memcpy(c->io, p->io, sizeof(c->io));
		return;
	}
	c->have_io = s->n_disks > 0 && read_file(s, t, F_IO_STAT, reprobe);
	for (size_t d = 0; c->have_io && d < s->n_disks; d++)
		if (fs_parse_io_stat(s->buf.data, s->disks[d], &c->io[d]) < 0)
			c->have_io = false;
}

/* deltas: c was read now and p at an earlier sample; the stall since then
 * is scaled to this period (scale: period / time between the two reads). */
static void fill_psi(struct fs_psi_sample *o, const struct fs_pressure *c,
		     const struct fs_pressure *p, bool deltas, double scale)
{
	o->some_avg10 = c->some.avg10;
	if (c->full.present)
		o->full_avg10 = c->full.avg10;
	if (!deltas)
		return;
	o->some_us = delta(c->some.total, p->some.total) * scale;
	if (c->full.present && p->full.present)
		o->full_us = delta(c->full.total, p->full.total) * scale;
}

/*
 * Whether tenant t's slow files (memory.stat, *.pressure) are read this
 * sample. The kernel recomputes avg10, the only PSI figure the estimator
 * uses, every 2 s (PSI_FREQ), so reading it every 1 s period re-reads the
 * same numbers half the time; at 3 preads of ~6 per tenant per period that
 * was about a third of the sampler's cost. memory.stat is the longest file
 * read and gives what changes slowly or is a rate anyway: the page-cache
 * gauges the plan's reclaim estimate uses and the refault count, whose
 * rate (refault_rate) needs no finer grain than the memory pressure it
 * goes with; memory.current, what the tenant holds, is read every period.
 * slow_every_us spaces the reads; a new cgroup (or an unknown previous
 * sample) is read at once. The next read is due after 3/4 of the interval,
 * so timer jitter does not stretch "every other period" to every third,
 * and odd tenants start half a step early, so each period reads about half
 * of them instead of all, then none.
 */
static bool slow_due(struct cg_sampler *s, size_t t, uint64_t now_us, const struct raw *p)
{
	struct tenant_fds *tf = &s->tfd[t];
	uint64_t step = s->slow_every_us / 4 * 3;

	if (s->slow_every_us && p->valid && p->ino == tf->ino && now_us >= p->slow_us &&
	    now_us < tf->slow_at_us)
		return false;
	tf->slow_at_us = now_us + (p->valid || !(t & 1) ? step : step / 2);
	return true;
}

/*
 * Whether the tenant ran between p and c (this directory): it used CPU, or
 * it hit memory.high or memory.max. The kernel throttles an allocation past
 * memory.high by putting the task to sleep (up to 2 s at a time), a stall
 * in which it uses no CPU; such a tenant is read in full, its pressure
 * files held rather than decayed (psi_decay).
 */
static bool ran_since(const struct raw *p, const struct raw *c)
{
	if (!p->valid || p->ino != c->ino || !p->have_cpu || !c->have_cpu ||
	    c->cpu.usage_usec != p->cpu.usage_usec)
		return true;
	return c->have_mev != p->have_mev ||
	       (c->have_mev && (c->mev.high != p->mev.high || c->mev.max != p->mev.max ||
				c->mev.oom != p->mev.oom || c->mev.oom_kill != p->mev.oom_kill));
}

/*
 * Whether tenant t is quiet this sample: its cpu.stat, just read into c,
 * says it used no CPU at all since the previous sample. Nothing of its own
 * ran, so its memory.current and io.stat have not moved but through the
 * kernel (reclaim; writeback of pages it dirtied earlier), and they are
 * not read again before rest_at_us: the first time, from half a
 * quiet_every_us after the last read on, that falls on the tenant's phase,
 * one of QUIET_PHASES in every quiet_every_us by tenant index. So each is
 * read again within 1.5 quiet_every_us, and each period reads about the
 * same number of quiet tenants, also when they all went quiet at once (at
 * start). Until then the last read's values hold and its IO rates are
 * zero; the next read turns what moved meanwhile into rates (fill_rates).
 * That re-read of a tenant still quiet (rest in sample_one) reads what the
 * kernel can move: memory.current and io.stat, and memory.stat only when
 * memory.current moved; not the *.pressure files, whose averages decay as
 * the kernel's do (psi_decay). A tenant that uses CPU is read in full in
 * that very sample. On a login node or a CI farm between jobs most tenants
 * are idle most of the time: this is one pread per period for each, and
 * two every 2-6 s, instead of about five per period (issue 19).
 */
static bool quiet(struct cg_sampler *s, size_t t, uint64_t now_us, bool ran)
{
	struct tenant_fds *tf = &s->tfd[t];
	const uint64_t q = s->quiet_every_us;

	if (q && !ran && now_us < tf->rest_at_us)
		return true;
	if (q) {
		const uint64_t from = now_us + q / 2,
			       phase = (t % QUIET_PHASES) * (q / QUIET_PHASES);

		tf->rest_at_us = from / q * q + phase;
		if (tf->rest_at_us < from)
			tf->rest_at_us += q;
	}
	return false;
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
	/* io.stat held (quiet): nothing of the tenant's own ran. Read again
	 * after quiet samples: while still quiet, the IO since the last read is
	 * what the kernel wrote back for it, a rate over the whole span; once
	 * it uses CPU again, it is its own IO of this period (it needs CPU to
	 * submit), beside which that writeback is small. */
	if (c->have_io && p->have_io && c->rest_us == p->rest_us) {
		for (size_t d = 0; d < s->n_disks; d++)
			o->io[d] = (struct fs_io_sample){0, 0, 0, 0};
	} else if (c->have_io && p->have_io && c->rest_us > p->rest_us && ok) {
		const bool ran =
		    !(c->have_cpu && p->have_cpu) || c->cpu.usage_usec != p->cpu.usage_usec;
		const double io_dt = ran ? dt : (double)(c->rest_us - p->rest_us) / 1e6;

		for (size_t d = 0; d < s->n_disks; d++) {
			o->io[d].rbps = delta(c->io[d].rbytes, p->io[d].rbytes) / io_dt;
			o->io[d].wbps = delta(c->io[d].wbytes, p->io[d].wbytes) / io_dt;
			o->io[d].riops = delta(c->io[d].rios, p->io[d].rios) / io_dt;
			o->io[d].wiops = delta(c->io[d].wios, p->io[d].wios) / io_dt;
		}
	}
}

/* The next probe of tenant t's absent files, or look at its path (cgroup2):
 * REPROBE_US on, plus up to as much again by tenant index, so that the
 * tenants opened together at start are not all probed in one period. */
static uint64_t reprobe_at(uint64_t now_us, size_t t)
{
	return now_us + REPROBE_US + (t % REPROBE_SPREAD) * (REPROBE_US / REPROBE_SPREAD);
}

/* Whether the directory at the tenant's path is still the open one. */
static bool same_dir(struct cg_sampler *s, size_t t)
{
	struct tenant_fds *tf = &s->tfd[t];
	struct stat st;

	return fs_cgfs_stat_cgroup(&s->cg, s->cgroups[t], &st) == 0 && st.st_dev == tf->dev &&
	       st.st_ino == tf->ino;
}

/*
 * Fake tree, kept directory: whether the path may no longer lead to it.
 * Looking every period (fstatat) was 17% of the sampler's time at 1,000
 * tenants in issue 19's benchmark; two inotify watches say it instead. The
 * directory's own (s->place) reports a rename (the tests replace a tenant's
 * directory by renaming it away, so that its inode is not reused). A
 * removal does not reach it while the directory is held open (IN_DELETE_SELF
 * comes at the last close), but rmdir needs an empty directory and an
 * unlinked file reports IN_ATTRIB: memory.events' watch (s->mev) sees that,
 * and any write to it, which only costs a look. Either watch missing (no
 * inotify, no memory.events, a watch limit) means looking every period.
 */
static bool fake_dir_may_have_moved(const struct cg_sampler *s, size_t t)
{
	return !fs_watch_unchanged(s->place, t) || !fs_watch_unchanged(s->mev, t);
}

/*
 * Makes tf->dirfd the directory now at the tenant's path: keeps the open one
 * when the path still leads to it, else (re)opens it. On cgroup2 the files of
 * a removed cgroup fail at once with ENODEV (then sample_one looks, check =
 * true) and a cgroup cannot be renamed (EPERM), so the path is looked at only
 * every 10 to 20 s (reprobe_at), as a safety net: that saves a path lookup
 * per tenant per period (fstatat: 4.5 us of ~23 us per tenant on 6.18 in a
 * VM). On a fake tree unlinked files stay readable; the path is looked at
 * there only when fake_dir_may_have_moved says so. 0 or -errno (-ENOENT:
 * the cgroup does not exist).
 */
static int tenant_open(struct cg_sampler *s, size_t t, uint64_t now_us, bool check)
{
	struct tenant_fds *tf = &s->tfd[t];
	struct stat st;
	int fd;

	if (tf->dirfd >= 0) {
		if (tf->dir_only && full_share_fits(s, true)) {
			tf->dir_only = false; /* a full share came free */
			tf->kept = true;
			s->fds_reserved += s->fds_per_tenant - 1;
		}
		if (!check && now_us < tf->check_at_us &&
		    (s->cgroup2 || !fake_dir_may_have_moved(s, t)))
			return 0;
		if (same_dir(s, t)) {
			tf->check_at_us = reprobe_at(now_us, t);
			if (keeps_dir(tf))
				fs_watch_arm(s->place, t, tf->dirfd, ".");
			return 0;
		}
		tenant_close(s, tf); /* gone, or another directory now */
	}
	fd = fs_cgfs_open_cgroup(&s->cg, s->cgroups[t]);
	if (fd < 0) {
		tf->known = false;
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		int r = -errno;

		close(fd);
		tf->known = false;
		return r;
	}
	if (!tf->known || st.st_dev != tf->dev || st.st_ino != tf->ino) {
		tf->absent = 0;		      /* a new cgroup: probe every file */
		fs_watch_forget(s->mev, t);   /* and watch its own memory.events */
		fs_watch_forget(s->place, t); /* and its own directory */
		tf->known = true;
		tf->dev = st.st_dev;
		tf->ino = st.st_ino;
	}
	tf->dirfd = fd;
	tf->check_at_us = reprobe_at(now_us, t);
	if (full_share_fits(s, false)) {
		tf->kept = true;
		s->fds_reserved += s->fds_per_tenant;
	} else if (s->fds_reserved + 1 <= s->fd_budget) {
		tf->dir_only = true;
		s->fds_reserved++;
	} else {
		return 0; /* opened by its path every period */
	}
	s->n_shares++;
	fs_watch_arm(s->place, t, fd, ".");
	return 0;
}

static void sample_one(struct cg_sampler *s, size_t t, uint64_t now_us, struct fs_tenant_sample *o)
{
	struct raw *p = &s->prev[t];
	struct tenant_fds *tf = &s->tfd[t];
	struct raw c;
	struct fs_psi_sample *psi_out[3] = {&o->psi_cpu, &o->psi_mem, &o->psi_io};
	bool deltas, reprobe, ran, slow = false, idle = false, hold = false, rest = false;
	double psi_scale = 1;
	unsigned absent;
	int r;

	for (int attempt = 0;; attempt++) {
		fs_tenant_sample_unknown(o);
		memset(&c, 0, sizeof(c));
		r = tenant_open(s, t, now_us, attempt > 0);
		/* absent (ENOENT) is normal; anything else would repeat every period */
		fs_log_cond(&tf->open_err, r == -ENOENT ? 0 : r, now_us, s->log, s->log_ctx,
			    LOG_WARNING, "sampler", s->cgroups[t]);
		if (r < 0) {
			p->valid = false; /* when it comes back, it is a new cgroup */
			fs_watch_forget(s->mev, t);
			fs_watch_forget(s->place, t);
			return;
		}
		o->present = true;
		c.valid = true;
		c.now_us = now_us;
		c.ino = tf->ino;
		absent = tf->absent;
		reprobe = absent && now_us >= tf->probe_at_us;
		tf->failed = false;
		read_cpu(s, t, reprobe, &c);
		read_memory_events(s, t, reprobe, p, &c);
		ran = ran_since(p, &c);
		/* A retry reads everything. A quiet tenant (idle: it did not
		 * run) reads only cpu.stat (hold) until its re-read (rest), and
		 * waits with its probe of absent files, as with every other file
		 * but cpu.stat, also at its re-reads. */
		idle = s->quiet_every_us && attempt == 0 && !tf->failed && !ran;
		hold = attempt == 0 && !tf->failed && quiet(s, t, now_us, ran);
		rest = idle && !hold;
		slow = !idle &&
		       (slow || (reprobe && (absent & SLOW_BITS)) || slow_due(s, t, now_us, p));
		c.slow_us = slow || idle ? now_us : p->slow_us;
		c.rest_us = hold ? p->rest_us : now_us;
		fill_gauges(s, t, reprobe && !rest, slow, hold, rest, p, o, &c);
		read_counters(s, t, reprobe && !rest, slow, idle, hold, p, &c);
		/* A kept fd failed: the cgroup was removed (maybe recreated), or
		 * a controller was disabled. Look at the path and read again:
		 * the files of the new cgroup, or the rest of this one. */
		if (!tf->failed || attempt > 0)
			break;
	}
	/* Files found missing now, or still missing after a probe: next probe.
	 * A quiet tenant probes its held files at its next full read. */
	if (tf->absent && ((reprobe && !hold && !rest) || tf->absent != absent))
		tf->probe_at_us = reprobe_at(now_us, t);
	if (!keeps_dir(tf))
		tenant_close(s, tf); /* over the fd budget: walk again next period */

	deltas = p->valid && p->ino == c.ino && !went_backwards(&c, p, s->n_disks);
	o->reset = !deltas;
	if (deltas)
		fill_rates(s, &c, p, o);
	refault_rate(s, idle, deltas, p, &c);
	if (isfinite(c.refault_bps) && c.now_us > p->now_us)
		o->mem_refault_bytes = c.refault_bps * (double)(c.now_us - p->now_us) / 1e6;
	if (slow && deltas && c.now_us > p->now_us && c.slow_us > p->slow_us)
		psi_scale = (double)(c.now_us - p->now_us) / (double)(c.slow_us - p->slow_us);
	for (int k = 0; k < 3; k++)
		if (c.have_psi[k])
			fill_psi(psi_out[k], &c.psi[k], &p->psi[k],
				 slow && deltas && p->have_psi[k], psi_scale);
	*p = c;
}

static int cg_sample(void *state, uint64_t now_us, struct fs_tenant_sample *out)
{
	struct cg_sampler *s = state;

	fs_watch_poll(s->mev);
	fs_watch_poll(s->place);
	for (size_t t = 0; t < s->n_tenants; t++)
		sample_one(s, t, now_us, &out[t]);
	return 0;
}

static int cg_dirfd(void *state, size_t t, const char *cgroup, uint64_t *ino)
{
	struct cg_sampler *s = state;

	/* kept: the directory stays open after sample_one */
	if (t >= s->n_tenants || !keeps_dir(&s->tfd[t]) || s->tfd[t].dirfd < 0 ||
	    strcmp(s->cgroups[t], cgroup) != 0)
		return -1;
	*ino = (uint64_t)s->tfd[t].ino;
	return s->tfd[t].dirfd;
}

static int cg_file_fd(void *state, size_t t, const char *cgroup, const char *file)
{
	struct cg_sampler *s = state;
	uint64_t ino;

	if (cg_dirfd(state, t, cgroup, &ino) < 0)
		return -1;
	for (int k = 0; k < N_FILES; k++)
		if (strcmp(file_names[k], file) == 0)
			return s->tfd[t].fd[k];
	return -1;
}

static int cg_retarget(void *state, size_t n, const char *const *cgroups, const size_t *from)
{
	struct cg_sampler *s = state;
	const size_t m = n ? n : 1;
	char **cg = calloc(m, sizeof(*cg));
	struct raw *prev = calloc(m, sizeof(*prev));
	struct tenant_fds *tfd = malloc(m * sizeof(*tfd));
	size_t *map = calloc(m, sizeof(*map));
	bool *taken = calloc(s->n_tenants ? s->n_tenants : 1, sizeof(*taken));
	int r = -ENOMEM;

	if (!cg || !prev || !tfd || !map || !taken)
		goto fail;
	/* everything that can fail first: the sampler changes only after */
	for (size_t j = 0; j < n; j++) {
		const size_t i = from[j];

		map[j] = FS_LIST_NEW;
		if (i != FS_LIST_NEW && i < s->n_tenants && !taken[i] &&
		    strcmp(s->cgroups[i], cgroups[j]) == 0) {
			map[j] = i;
			taken[i] = true;
		} else if (!(cg[j] = strdup(cgroups[j]))) {
			goto fail;
		}
	}
	r = fs_watch_remap(s->mev, n, map);
	if (r < 0)
		goto fail;
	/* after the one that may fail the whole retarget: without its watches
	 * a fake tree's paths are looked at every period, as before */
	if (fs_watch_remap(s->place, n, map) < 0) {
		fs_watch_close(s->place);
		s->place = NULL;
	}
	for (size_t j = 0; j < n; j++) {
		if (map[j] == FS_LIST_NEW) {
			tenant_fds_init(&tfd[j]);
			continue;
		}
		cg[j] = s->cgroups[map[j]];
		prev[j] = s->prev[map[j]];
		tfd[j] = s->tfd[map[j]];
	}
	for (size_t i = 0; i < s->n_tenants; i++)
		if (!taken[i]) {
			tenant_close(s, &s->tfd[i]);
			free(s->cgroups[i]);
		}
	free(s->cgroups);
	free(s->prev);
	free(s->tfd);
	s->cgroups = cg;
	s->prev = prev;
	s->tfd = tfd;
	s->n_tenants = n;
	free(map);
	free(taken);
	return 0;
fail:
	/* before the commit cg holds only the new tenants' copies */
	for (size_t j = 0; cg && j < n; j++)
		free(cg[j]);
	free(cg);
	free(prev);
	free(tfd);
	free(map);
	free(taken);
	return r;
}

const struct fs_sampler_ops fs_sampler_cgroupfs = {
    .name = "cgroupfs",
    .open = cg_open,
    .sample = cg_sample,
    .close = cg_close,
    .dirfd = cg_dirfd,
    .file_fd = cg_file_fd,
    .retarget = cg_retarget,
};
