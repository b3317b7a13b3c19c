/* SPDX-License-Identifier: MIT */
/* Trace loading and instance generation for fairshare-bench. */
#include "bench_data.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_rng_seed(struct bench_rng *g, uint64_t seed)
{
	g->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

double bench_uniform(struct bench_rng *g)
{
	/* xorshift64* */
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return (double)((g->s * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

double bench_normal(struct bench_rng *g)
{
	const double u = 1 - bench_uniform(g), v = bench_uniform(g);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

size_t bench_stride_pick(struct bench_rng *g, size_t n, size_t count, size_t i)
{
	return ((size_t)(bench_uniform(g) * (double)(n / count)) + i * (n / count)) % n;
}

static int push_row(struct bench_samples *s, size_t *cap, const double *v)
{
	if (s->n == *cap) {
		size_t nc = *cap ? 2 * *cap : 4096;
		void *r = realloc(s->row, nc * sizeof(*s->row));
		if (!r)
			return -ENOMEM;
		s->row = r;
		*cap = nc;
	}
	memcpy(s->row[s->n++], v, sizeof(*s->row));
	return 0;
}

/* One data row: 11 numbers separated by ';' (and a tab). Returns the number
 * of fields parsed. */
static int parse_row(const char *line, double *f, int nf)
{
	const char *p = line;
	int i;

	for (i = 0; i < nf; i++) {
		char *end;
		f[i] = strtod(p, &end);
		if (end == p)
			break;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ';') {
			i++;
			break;
		}
		p++;
	}
	return i;
}

static int load_file(struct bench_samples *s, size_t *cap, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int ret = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		double c[11];
		if (parse_row(line, c, 11) != 11)
			continue; /* header or damaged row */
		const double v[BD_COLS] = {
		    [BD_CPU] = c[3],	[BD_MEM] = c[6],    [BD_DISK_R] = c[7],
		    [BD_DISK_W] = c[8], [BD_NET_RX] = c[9], [BD_NET_TX] = c[10],
		};
		bool ok = v[BD_CPU] > 0 && v[BD_MEM] > 0;
		for (int j = 0; j < BD_COLS; j++)
			ok = ok && isfinite(v[j]) && v[j] >= 0;
		if (!ok)
			continue;
		ret = push_row(s, cap, v);
		if (ret < 0)
			break;
	}
	fclose(f);
	return ret;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the traces in name order so that a seed picks the same rows on every
 * machine. */
static int load_dir(struct bench_samples *s, size_t *cap, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t nn = 0;
	int ret = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "vm", 2) || len < 5 || strcmp(e->d_name + len - 4, ".csv"))
			continue;
		char **nnames = realloc(names, (nn + 1) * sizeof(*names));
		if (!nnames) {
			ret = -ENOMEM;
			goto out;
		}
		names = nnames;
		names[nn] = strdup(e->d_name);
		if (!names[nn]) {
			ret = -ENOMEM;
			goto out;
		}
		nn++;
	}
	qsort(names, nn, sizeof(*names), cmp_name);
	for (size_t i = 0; i < nn; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = load_file(s, cap, path);
		if (ret < 0)
			goto out;
		s->files++;
	}
out:
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

/* Log-normal columns with a shared per-sample "size" factor, shaped roughly
 * like the traces: CPU and memory always used, I/O often idle. */
static int synthesize(struct bench_samples *s, size_t *cap, size_t n, uint64_t seed)
{
	static const double median[BD_COLS] = {300, 2e6, 20, 20, 5, 5};
	struct bench_rng g;

	bench_rng_seed(&g, seed ^ 0x5bd1e995ull);
	for (size_t i = 0; i < n; i++) {
		const double size = bench_normal(&g);
		double v[BD_COLS];
		for (int j = 0; j < BD_COLS; j++) {
			const bool idle = j >= BD_DISK_R && bench_uniform(&g) < 0.3;
			v[j] = idle ? 0 : median[j] * exp(0.8 * size + 1.2 * bench_normal(&g));
		}
		int ret = push_row(s, cap, v);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int bench_samples_load(struct bench_samples *s, const char *dir, size_t n_synth, uint64_t seed)
{
	size_t cap = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = dir ? load_dir(s, &cap, dir) : -ENOENT;
	if (ret == -ENOMEM)
		return ret;
	if (s->n > 0)
		return 0;
	s->files = 0;
	s->synthetic = true;
	return synthesize(s, &cap, n_synth, seed);
}

void bench_samples_free(struct bench_samples *s)
{
	free(s->row);
	memset(s, 0, sizeof(*s));
}

/* Fills tenant n's demand vector from one sample. */
static void fill_demand(double *d, const double *v, size_t m, struct bench_rng *g)
{
	if (m == 4) {
		d[0] = v[BD_CPU];
		d[1] = v[BD_MEM];
		d[2] = v[BD_DISK_R] + v[BD_DISK_W];
		d[3] = v[BD_NET_RX] + v[BD_NET_TX];
		return;
	}
	for (size_t r = 0; r < BD_COLS; r++)
		d[r] = v[r];
	/* Synthetic: an accelerator few tenants use, and license slots that
	 * everyone holds in proportion to its CPU (plus noise). */
	d[6] = bench_uniform(g) < 0.15 ? exp(bench_normal(g)) : 0;
	d[7] = v[BD_CPU] / 1000 * exp(0.5 * bench_normal(g));
}

int bench_instance_make(struct bench_instance *in, const struct bench_samples *s, size_t n,
			size_t m, size_t k, uint64_t seed)
{
	struct bench_rng g;
	double *total = NULL;

	memset(in, 0, sizeof(*in));
	if ((m != 4 && m != 8) || !n || !k || !s->n)
		return -EINVAL;
	bench_rng_seed(&g, seed * 0x9e3779b97f4a7c15ull + n * 131 + m * 7 + k);
	in->capacity = calloc(k * m, sizeof(double));
	in->demand = calloc(n * m, sizeof(double));
	in->max_tasks = calloc(n, sizeof(double));
	in->weight = calloc(n, sizeof(double));
	in->eligible = k > 1 ? calloc(n * k, sizeof(bool)) : NULL;
	total = calloc(m, sizeof(double));
	if (!in->capacity || !in->demand || !in->max_tasks || !in->weight || !total ||
	    (k > 1 && !in->eligible)) {
		free(total);
		bench_instance_free(in);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const size_t row = (size_t)(bench_uniform(&g) * (double)s->n);
		double *d = &in->demand[i * m];
		fill_demand(d, s->row[row < s->n ? row : s->n - 1], m, &g);
		in->weight[i] = (double)(1u << (unsigned)(bench_uniform(&g) * 3));
		in->max_tasks[i] =
		    bench_uniform(&g) < 0.15 ? INFINITY : 1 + floor(4 * bench_uniform(&g));
		for (size_t r = 0; r < m; r++)
			if (isfinite(in->max_tasks[i]))
				total[r] += in->max_tasks[i] * d[r];
		if (k > 1) {
			bool any = false;
			for (size_t j = 0; j < k; j++)
				any |= in->eligible[i * k + j] = bench_uniform(&g) < 0.5;
			if (!any)
				in->eligible[i * k + (size_t)(bench_uniform(&g) * (double)k) % k] =
				    true;
		}
	}
	for (size_t r = 0; r < m; r++) {
		/* Nobody capped asks for r (possible for tiny n): any capacity will do. */
		const double t = total[r] > 0 ? total[r] * (0.3 + 0.6 * bench_uniform(&g)) : 1;
		for (size_t j = 0; j < k; j++) {
			const bool absent = k > 1 && j > 0 && r == 6 && bench_uniform(&g) < 0.5;
			in->capacity[j * m + r] =
			    absent ? 0 : t / (double)k * (0.25 + 1.5 * bench_uniform(&g));
		}
	}
	free(total);
	in->p = (struct fs_problem){
	    .n_tenants = n,
	    .n_pools = k,
	    .n_resources = m,
	    .capacity = in->capacity,
	    .demand = in->demand,
	    .max_tasks = in->max_tasks,
	    .weight = in->weight,
	    .eligible = in->eligible,
	};
	return 0;
}

void bench_instance_free(struct bench_instance *in)
{
	free(in->capacity);
	free(in->demand);
	free(in->max_tasks);
	free(in->weight);
	free(in->eligible);
	memset(in, 0, sizeof(*in));
}

/* The shortest %g that reads back as v: eight %.17g numbers with exponents
 * would not fit the scenario parser's line limit. */
static void write_exact(FILE *f, double v)
{
	char buf[32];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void write_row(FILE *f, const char *key, const double *v, size_t m)
{
	fprintf(f, "%s = ", key);
	for (size_t r = 0; r < m; r++) {
		if (r)
			fputs(", ", f);
		write_exact(f, v[r]);
	}
	fputc('\n', f);
}

int bench_instance_write_ini(FILE *f, const struct bench_instance *in, const char *comment)
{
	static const char *const names8[] = {"cpu",    "mem",	 "disk_r", "disk_w",
					     "net_rx", "net_tx", "gpu",	   "slots"};
	static const char *const names4[] = {"cpu", "mem", "disk", "net"};
	const struct fs_problem *p = &in->p;
	const size_t N = p->n_tenants, M = p->n_resources, K = p->n_pools;

	fprintf(f, "# %s\n[scenario]\nresources = ", comment);
	for (size_t r = 0; r < M; r++)
		fprintf(f, "%s%s", r ? ", " : "", M == 8 ? names8[r] : names4[r]);
	fputc('\n', f);
	for (size_t k = 0; k < K; k++) {
		fprintf(f, "\n[pool.k%zu]\n", k);
		write_row(f, "capacity", &p->capacity[k * M], M);
	}
	for (size_t n = 0; n < N; n++) {
		fprintf(f, "\n[tenant.t%zu]\n", n);
		write_row(f, "demand", &p->demand[n * M], M);
		if (isfinite(fs_max_tasks(p, n)))
			write_row(f, "max_tasks", &p->max_tasks[n], 1);
		if (fs_weight(p, n) != 1)
			write_row(f, "weight", &p->weight[n], 1);
		if (!p->eligible)
			continue;
		/* Repeated "pools =" lines add up; 16 names keep a line short. */
		size_t on_line = 0;
		for (size_t k = 0; k < K; k++) {
			if (!p->eligible[n * K + k])
				continue;
			fprintf(f, "%sk%zu", on_line ? "," : "pools = ", k);
			if (++on_line == 16) {
				fputc('\n', f);
				on_line = 0;
			}
		}
		if (on_line)
			fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
