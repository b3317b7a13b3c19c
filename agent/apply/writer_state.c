/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "writer.h"
#include "writer_state.h"

#define STATE_MAGIC "fairshare-writer-state 1"

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct wr_entry *wr_find(struct wr_table *t, const char *cgroup, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->e[i].cgroup, cgroup) == 0 && strcmp(t->e[i].key, key) == 0)
			return &t->e[i];
	return NULL;
}

struct wr_entry *wr_add(struct wr_table *t, const char *cgroup, const char *key, const char *orig)
{
	struct wr_entry *e;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct wr_entry *ne = realloc(t->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		t->e = ne;
		t->cap = cap;
	}
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->cgroup = xstrdup(cgroup);
	e->key = xstrdup(key);
	e->orig = xstrdup(orig);
	if (!e->cgroup || !e->key || !e->orig) {
		free(e->cgroup);
		free(e->key);
		free(e->orig);
		return NULL;
	}
	t->n++;
	return e;
}

static void entry_free(struct wr_entry *e)
{
	free(e->cgroup);
	free(e->key);
	free(e->orig);
	free(e->last);
}

void wr_remove(struct wr_table *t, size_t i)
{
	entry_free(&t->e[i]);
	t->e[i] = t->e[--t->n];
}

void wr_table_free(struct wr_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		entry_free(&t->e[i]);
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}

bool wr_key_valid(const char *key)
{
	static const char *const files[] = {"cpu.max",	   "cpu.max.burst", "cpu.weight",
					    "memory.high", "memory.max",    "io.weight"};
	unsigned maj, min;
	int n = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(key, files[i]) == 0)
			return true;
	return sscanf(key, "io.max@%u:%u%n", &maj, &min, &n) == 2 && key[n] == '\0';
}

const char *wr_key_file(const char *key, char *buf, size_t len)
{
	size_t n = strcspn(key, "@");

	if (n >= len)
		n = len - 1;
	memcpy(buf, key, n);
	buf[n] = '\0';
	return buf;
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
		if (!tag || strcmp(tag, "orig") != 0 || !val || extra || !unescape(cg) ||
		    !unescape(key) || !unescape(val) || fs_cgfs_check_path(cg) < 0 ||
		    !wr_key_valid(key) || wr_find(t, cg, key)) {
			fs_logf(log, log_ctx, LOG_ERR, "%s:%d: malformed record skipped", path,
				lineno);
			continue;
		}
		if (!wr_add(t, cg, key, val)) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (ferror(f))
		r = -EIO;
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

int wr_state_save(const char *state_dir, const struct wr_table *t)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, r = 0;

	state_path(state_dir, FS_WRITER_STATE_FILE, path, sizeof(path));
	state_path(state_dir, FS_WRITER_STATE_FILE ".tmp", tmp, sizeof(tmp));
	if (t->n == 0) {
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		return fsync_dir(state_dir);
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
		fputs("orig ", f);
		put_escaped(f, t->e[i].cgroup);
		fputc(' ', f);
		put_escaped(f, t->e[i].key);
		fputc(' ', f);
		put_escaped(f, t->e[i].orig);
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
	return fsync_dir(state_dir);
out:
	if (f)
		fclose(f);
	unlink(tmp);
	return r;
}
