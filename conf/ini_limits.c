/* SPDX-License-Identifier: MIT */
/*
 * Pre-scan of INI files with inih's own line rules (ini.c of inih 55), so that
 * what inih would truncate or silently reinterpret is refused with file:line.
 */
#include "ini_limits.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int conf_error_set(struct conf_error *err, int code, const char *file, int line, const char *fmt,
		   ...)
{
	va_list ap;
	int n;

	if (!err)
		return code;
	if (line > 0)
		n = snprintf(err->msg, sizeof(err->msg), "%s:%d: ", file, line);
	else
		n = snprintf(err->msg, sizeof(err->msg), "%s: ", file);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return code;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

enum line_kind {
	LINE_EMPTY, /* blank or comment */
	LINE_SECTION,
	LINE_KEY,
	LINE_CONTINUATION,
	LINE_BAD_SECTION, /* '[' without ']' */
	LINE_BAD_KEY,	  /* neither '=' nor ':' */
};

char *conf_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Unlike conf_trim, inih strips every isspace() character. */
static char *rstrip(char *s)
{
	char *p = s + strlen(s);

	while (p > s && isspace((unsigned char)p[-1]))
		*--p = '\0';
	return s;
}

static char *lskip(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* inih's find_chars_or_comment() with its default inline comment prefix. */
static char *find_chars_or_comment(char *s, const char *chars)
{
	bool was_space = false;

	while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

/*
 * Classifies one line (a modifiable copy without its '\n') the way inih's
 * parse loop does; *name receives the section or key name. after_key is
 * inih's "prev_name is set": a key was seen since the last section header.
 */
static enum line_kind classify(char *line, int lineno, bool after_key, char **name)
{
	char *start = line, *end;

	if (lineno == 1 && (unsigned char)start[0] == 0xEF && (unsigned char)start[1] == 0xBB &&
	    (unsigned char)start[2] == 0xBF)
		start += 3;
	start = lskip(rstrip(start));
	if (*start == '\0' || *start == ';' || *start == '#')
		return LINE_EMPTY;
	if (after_key && start > line)
		return LINE_CONTINUATION;
	if (*start == '[') {
		end = find_chars_or_comment(start + 1, "]");
		if (*end != ']')
			return LINE_BAD_SECTION;
		*end = '\0';
		*name = start + 1;
		return LINE_SECTION;
	}
	end = find_chars_or_comment(start, "=:");
	if (*end != '=' && *end != ':')
		return LINE_BAD_KEY;
	*end = '\0';
	*name = rstrip(start);
	return LINE_KEY;
}

/* Checks buf[0..len) line by line; see ini_limits_check(). */
static int check_buffer(const char *path, const char *buf, size_t len, struct conf_error *err)
{
	char line[INI_LIMITS_MAX_LINE + 1];
	const char *p = buf, *end = buf + len;
	char key[INI_LIMITS_MAX_NAME + 1] = "";
	int lineno = 0, key_line = 0;

	if (memchr(buf, '\0', len)) {
		const char *nul = memchr(buf, '\0', len);
		int at = 1;

		for (const char *q = buf; q < nul; q++)
			at += *q == '\n';
		return conf_error_set(err, -EINVAL, path, at, "NUL byte in a text file");
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (eol ? eol : end) - p;
		char *name = NULL;

		lineno++;
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n > INI_LIMITS_MAX_LINE)
			return conf_error_set(err, -E2BIG, path, lineno,
					      "line is %zu characters long, the limit is %d", n,
					      INI_LIMITS_MAX_LINE);
		memcpy(line, p, n);
		line[n] = '\0';
		p = eol ? eol + 1 : end;

		switch (classify(line, lineno, key[0] != '\0', &name)) {
		case LINE_EMPTY:
			break;
		case LINE_SECTION:
			if (strlen(name) > INI_LIMITS_MAX_NAME)
				return conf_error_set(err, -E2BIG, path, lineno,
						      "section name is %zu characters long, the "
						      "limit is %d",
						      strlen(name), INI_LIMITS_MAX_NAME);
			key[0] = '\0';
			break;
		case LINE_KEY:
			if (strlen(name) > INI_LIMITS_MAX_NAME)
				return conf_error_set(err, -E2BIG, path, lineno,
						      "key name is %zu characters long, the limit "
						      "is %d",
						      strlen(name), INI_LIMITS_MAX_NAME);
			/* An empty name still opens a continuation in inih. */
			snprintf(key, sizeof(key), "%s", name[0] ? name : "=");
			key_line = lineno;
			break;
		case LINE_CONTINUATION:
			return conf_error_set(err, -EINVAL, path, lineno,
					      "indented line would continue the value of '%s' "
					      "(line %d); multi-line values are not supported, "
					      "remove the indentation",
					      key, key_line);
		case LINE_BAD_SECTION:
			return conf_error_set(err, -EINVAL, path, lineno,
					      "syntax error: section header without ']'");
		case LINE_BAD_KEY:
			return conf_error_set(
			    err, -EINVAL, path, lineno,
			    "syntax error: expected 'key = value' or '[section]'");
		}
	}
	return 0;
}

/* Reads the whole file (NUL-terminated copy in *out). */
static int read_file(const char *path, char **out, size_t *out_len, struct conf_error *err)
{
	size_t cap = 4096, len = 0;
	char *buf = NULL;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return conf_error_set(err, -errno, path, 0, "cannot open: %s", strerror(errno));
	buf = malloc(cap + 1);
	if (!buf) {
		r = conf_error_set(err, -ENOMEM, path, 0, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > INI_LIMITS_MAX_FILE) {
				r = conf_error_set(err, -E2BIG, path, 0,
						   "file is larger than %d bytes",
						   INI_LIMITS_MAX_FILE);
				goto out;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				r = conf_error_set(err, -ENOMEM, path, 0, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = conf_error_set(err, -errno, path, 0, "cannot read: %s",
					   strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > INI_LIMITS_MAX_FILE) {
		r = conf_error_set(err, -E2BIG, path, 0, "file is larger than %d bytes",
				   INI_LIMITS_MAX_FILE);
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return r;
}

int ini_limits_check(const char *path, struct conf_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = read_file(path, &buf, &len, err);
	if (r == 0)
		r = check_buffer(path, buf, len, err);
	free(buf);
	return r;
}

struct parse_state {
	const char *path;
	const char *pos, *end;
	int lineno;
	bool after_key;
	ini_limits_handler handler;
	void *user;
	struct conf_error *err;
	int rc;	     /* first handler error */
	int rc_line; /* its line */
};

static void call_handler(struct parse_state *st, const char *section, const char *name,
			 const char *value)
{
	int r;

	if (st->rc < 0)
		return;
	r = st->handler(st->user, section, name, value, st->lineno, st->err);
	if (r < 0) {
		st->rc = r;
		st->rc_line = st->lineno;
	}
}

/*
 * fgets-style reader over the checked buffer. Every line fits (checked), so
 * one call is one line and the call count is inih's line number; section
 * headers are reported here because inih only reports keys.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	char copy[INI_LIMITS_MAX_LINE + 3];
	const char *eol;
	size_t n;
	char *name = NULL;

	if (st->pos >= st->end || num < 2)
		return NULL;
	eol = memchr(st->pos, '\n', (size_t)(st->end - st->pos));
	n = (eol ? eol + 1 : st->end) - st->pos;
	if (n > (size_t)num - 1)
		n = (size_t)num - 1; /* cannot happen after check_buffer() */
	memcpy(str, st->pos, n);
	str[n] = '\0';
	st->pos += n;
	st->lineno++;

	snprintf(copy, sizeof(copy), "%s", str);
	copy[strcspn(copy, "\r\n")] = '\0';
	switch (classify(copy, st->lineno, st->after_key, &name)) {
	case LINE_SECTION:
		st->after_key = false;
		call_handler(st, name, NULL, NULL);
		break;
	case LINE_KEY:
		st->after_key = true;
		break;
	default:
		break;
	}
	return str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	call_handler(user, section, name, value);
	return 1; /* errors are tracked in parse_state, with their line */
}

int ini_limits_parse(const char *path, ini_limits_handler handler, void *user,
		     struct conf_error *err)
{
	struct parse_state st = {.path = path, .handler = handler, .user = user, .err = err};
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = read_file(path, &buf, &len, err);
	if (r < 0)
		goto out;
	r = check_buffer(path, buf, len, err);
	if (r < 0)
		goto out;
	st.pos = buf;
	st.end = buf + len;
	r = ini_parse_stream(read_line, &st, on_key, &st);
	if (r > 0 && (st.rc == 0 || r < st.rc_line)) {
		r = conf_error_set(err, -EINVAL, path, r, "syntax error");
		goto out;
	}
	if (r < 0 && st.rc == 0) {
		r = conf_error_set(err, -ENOMEM, path, 0, "inih failed (%d)", r);
		goto out;
	}
	r = st.rc;
out:
	free(buf);
	return r;
}
