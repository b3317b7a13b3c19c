/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "unitprop.h"
#include "writer.h"
#include "writer_state.h"

#define STATE_MAGIC "fairshare-writer-state 1"

static uint64_t entry_hash(const char *cgroup, enum fs_cgfile f, struct fs_devnum dev, bool unit)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)cgroup; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	if (!fs_cgfiles[f].per_disk)
		dev = (struct fs_devnum){0, 0};
	h = (h ^ (uint64_t)f) * 1099511628211ull;
	h = (h ^ dev.major) * 1099511628211ull;
	h = (h ^ dev.minor) * 1099511628211ull;
	h = (h ^ (uint64_t)unit) * 1099511628211ull;
	return h ^ (h >> 29);
}

struct wr_entry *wr_find(const struct wr_table *t, const char *cgroup, enum fs_cgfile f,
			 struct fs_devnum dev, bool unit)
{
	uint64_t h;

	if (!t->n_buckets)
		return NULL;
	if (!fs_cgfiles[f].per_disk)
		dev = (struct fs_devnum){0, 0};
	h = entry_hash(cgroup, f, dev, unit);
	for (struct wr_entry *e = t->bucket[h & (t->n_buckets - 1)]; e; e = e->hnext)
		if (e->hash == h && e->file == f && e->unit == unit && e->dev.major == dev.major &&
		    e->dev.minor == dev.minor && strcmp(e->cgroup, cgroup) == 0)
			return e;
	return NULL;
}

static int rehash(struct wr_table *t, size_t n_buckets)
{
	struct wr_entry **b = calloc(n_buckets, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		struct wr_entry *e = t->e[i];
		size_t k = e->hash & (n_buckets - 1);

		e->hnext = b[k];
		b[k] = e;
	}
	free(t->bucket);
	t->bucket = b;
	t->n_buckets = n_buckets;
	return 0;
}

struct wr_entry *wr_add(struct wr_table *t, const char *cgroup, enum fs_cgfile f,
			struct fs_devnum dev, bool unit, const char *orig)
{
	struct wr_entry *e;
	size_t k;

	if (!fs_cgfiles[f].per_disk)
		dev = (struct fs_devnum){0, 0};
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct wr_entry **ne = realloc(t->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		t->e = ne;
		t->cap = cap;
	}
	if (t->n + 1 > t->n_buckets && rehash(t, t->n_buckets ? t->n_buckets * 2 : 64) < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cgroup = strdup(cgroup);
	e->orig = strdup(orig);
	if (!e->cgroup || !e->orig || fs_cgfile_key(f, dev, e->key, sizeof(e->key)) < 0) {
		free(e->cgroup);
		free(e->orig);
		free(e);
		return NULL;
	}
	e->file = f;
	e->dev = dev;
	e->unit = unit;
	e->hash = entry_hash(cgroup, f, dev, unit);
	k = e->hash & (t->n_buckets - 1);
	e->hnext = t->bucket[k];
	t->bucket[k] = e;
	e->pos = t->n;
	t->e[t->n++] = e;
	t->dirty = true;
	return e;
}

static void entry_free(struct wr_entry *e)
{
	free(e->cgroup);
	free(e->orig);
	free(e);
}

void wr_remove(struct wr_table *t, struct wr_entry *e)
{
	struct wr_entry **pp = &t->bucket[e->hash & (t->n_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	if (e->ref)
		*e->ref = NULL;
	t->e[e->pos] = t->e[--t->n];
	t->e[e->pos]->pos = e->pos;
	t->dirty = true;
	entry_free(e);
}

void wr_table_free(struct wr_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i]->ref)
			*t->e[i]->ref = NULL;
		entry_free(t->e[i]);
	}
	free(t->e);
	free(t->bucket);
	memset(t, 0, sizeof(*t));
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '%' || c >= 0x7f)
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

/* Decodes in place; false on a malformed escape or an embedded NUL. */
static bool unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '%') {
			unsigned v;

			if (sscanf(s + 1, "%2x", &v) != 1 || !s[1] || !s[2] || v == 0)
				return false;
			*out++ = (char)v;
			s += 2;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
	return true;
}

static void state_path(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

int wr_state_load(const char *state_dir, struct wr_table *t, fs_log_fn log, void *log_ctx)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, r = 0;
	FILE *f;

	state_path(state_dir, FS_WRITER_STATE_FILE, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tag, *cg, *key, *val, *extra;
		struct wr_entry *e;
		enum fs_cgfile file;
		struct fs_devnum dev;
		uint64_t props[FS_UPROP_MAX];
		bool unit;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1) {
			if (strcmp(line, STATE_MAGIC) != 0) {
				fs_logf(log, log_ctx, LOG_ERR, "%s: not a writer state file", path);
				r = -EINVAL;
				goto out;
			}
			continue;
		}
		tag = strtok_r(line, " ", &save);
		cg = strtok_r(NULL, " ", &save);
		key = strtok_r(NULL, " ", &save);
		val = strtok_r(NULL, " ", &save);
		extra = strtok_r(NULL, " ", &save);
		unit = tag && strcmp(tag, "unit") == 0;
		if (!tag || (strcmp(tag, "orig") != 0 && !unit) || !val || extra || !unescape(cg) ||
		    !unescape(key) || !unescape(val) || fs_cgfs_check_path(cg) < 0 ||
		    fs_cgfile_parse_key(key, &file, &dev) < 0 ||
		    (unit && (fs_unit_of_cgroup(cg, NULL, 0) == FS_UNIT_NONE ||
			      fs_uprop_parse(file, val, props) < 0)) ||
		    wr_find(t, cg, file, dev, unit)) {
			fs_logf(log, log_ctx, LOG_ERR, "%s:%d: malformed record skipped", path,
				lineno);
			continue;
		}
		e = wr_add(t, cg, file, dev, unit, val);
		if (!e) {
			r = -ENOMEM;
			goto out;
		}
		e->saved = true;
	}
	if (ferror(f))
		r = -EIO;
	t->dirty = false;
out:
	free(line);
	fclose(f);
	return r;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

static void mark_saved(struct wr_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->e[i]->saved = true;
	t->dirty = false;
}

int wr_state_save(const char *state_dir, struct wr_table *t)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, r = 0;

	state_path(state_dir, FS_WRITER_STATE_FILE, path, sizeof(path));
	state_path(state_dir, FS_WRITER_STATE_FILE ".tmp", tmp, sizeof(tmp));
	if (t->n == 0) {
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		r = fsync_dir(state_dir);
		if (r == 0)
			t->dirty = false;
		return r;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto out;
	}
	fprintf(f, "%s\n", STATE_MAGIC);
	for (size_t i = 0; i < t->n; i++) {
		fputs(t->e[i]->unit ? "unit " : "orig ", f);
		put_escaped(f, t->e[i]->cgroup);
		fputc(' ', f);
		put_escaped(f, t->e[i]->key);
		fputc(' ', f);
		put_escaped(f, t->e[i]->orig);
		fputc('\n', f);
	}
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0) {
		r = -errno ? -errno : -EIO;
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		r = -errno;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto out;
	}
	r = fsync_dir(state_dir);
	if (r == 0)
		mark_saved(t);
	return r;
out:
	if (f)
		fclose(f);
	unlink(tmp);
	return r;
}
