/* SPDX-License-Identifier: MIT */
/*
 * conf/ini_limits.c, and the inih behaviour it guards against: the first
 * tests pin what the installed libinih does with long lines, long names and
 * indented lines, so an inih upgrade that changes the limits fails here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <ini.h>

#include "ini_limits.h"

static char tmpdir[] = "/tmp/test_ini_limits.XXXXXX";

static char *write_file(const char *name, const char *text)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* What raw inih hands to its handler: the last call wins. */
struct seen {
	char section[256], name[256], value[256];
	int calls;
};

static int remember(void *user, const char *section, const char *name, const char *value)
{
	struct seen *s = user;

	snprintf(s->section, sizeof(s->section), "%s", section);
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->value, sizeof(s->value), "%s", value);
	s->calls++;
	return 1;
}

static void test_inih_truncates_section_names(void **state)
{
	char *name = repeat('s', 60), text[256], *path;
	struct seen seen = {0};

	(void)state;
	snprintf(text, sizeof(text), "[%s]\nk = 1\n", name);
	path = write_file("inih-section.ini", text);
	assert_int_equal(ini_parse(path, remember, &seen), 0); /* no error reported */
	assert_int_equal(strlen(seen.section), INI_LIMITS_MAX_NAME);
	unlink(path);
	free(path);
	free(name);
}

static void test_inih_cuts_long_lines(void **state)
{
	char *v = repeat('v', 246), text[512], *path;
	struct seen seen = {0};

	(void)state;
	snprintf(text, sizeof(text), "[a]\nk = %s\n", v);
	path = write_file("inih-line.ini", text);
	/* The value arrives cut to 195 characters; the error names line 3. */
	assert_int_equal(ini_parse(path, remember, &seen), 3);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(strlen(seen.value), 195);
	unlink(path);
	free(path);
	free(v);
}

static void test_inih_continues_indented_lines(void **state)
{
	char *path = write_file("inih-cont.ini", "[a]\nk = 1\n\n; note\n  j = 2\n");
	struct seen seen = {0};

	(void)state;
	assert_int_equal(ini_parse(path, remember, &seen), 0);
	assert_int_equal(seen.calls, 2);
	assert_string_equal(seen.name, "k");
	assert_string_equal(seen.value, "j = 2");
	unlink(path);
	free(path);
}

static void check_text(const char *text, int code, int line, const char *msg)
{
	struct conf_error err = {{0}};
	char *path = write_file("check.ini", text), want[CONF_ERR_MAX];

	assert_int_equal(ini_limits_check(path, &err), code);
	if (code) {
		snprintf(want, sizeof(want), "%s:%d: %s", path, line, msg);
		assert_string_equal(err.msg, want);
	}
	unlink(path);
	free(path);
}

static void test_check_names(void **state)
{
	char *n49 = repeat('n', 49), *n50 = repeat('n', 50), text[256];

	(void)state;
	snprintf(text, sizeof(text), "[%s]\n%s = 1\n%s: 2\n", n49, n49, n49);
	check_text(text, 0, 0, NULL);
	snprintf(text, sizeof(text), "[a]\n\n[%s] ; comment\n", n50);
	check_text(text, -E2BIG, 3, "section name is 50 characters long, the limit is 49");
	snprintf(text, sizeof(text), "[a]\n%s : 1\n", n50);
	check_text(text, -E2BIG, 2, "key name is 50 characters long, the limit is 49");
	/* A ';' after a blank starts a comment, so this name is short. */
	snprintf(text, sizeof(text), "[a ;%s]\n", n50);
	check_text(text, -EINVAL, 1, "syntax error: section header without ']'");
	free(n49);
	free(n50);
}

static void test_check_lines(void **state)
{
	char *v = repeat('v', 193), text[512];

	(void)state;
	snprintf(text, sizeof(text), "[a]\nk = %s\r\n", v); /* 197 + CRLF */
	check_text(text, 0, 0, NULL);
	snprintf(text, sizeof(text), "[a]\nk = %sv\n", v);
	check_text(text, -E2BIG, 2, "line is 198 characters long, the limit is 197");
	snprintf(text, sizeof(text), "\xEF\xBB\xBF[a]\nk = 1\n    \n\t; indented comment\n");
	check_text(text, 0, 0, NULL);
	check_text("[a]\nk = 1\n[b]\n  j = 2\n", 0, 0, NULL); /* no key since [b] */
	check_text("[a]\nk = 1\n\n  j = 2\n", -EINVAL, 4,
		   "indented line would continue the value of 'k' (line 2); multi-line values "
		   "are not supported, remove the indentation");
	check_text("[a]\njunk\n", -EINVAL, 2,
		   "syntax error: expected 'key = value' or '[section]'");
	free(v);
}

struct calls {
	char log[512];
	int fail_at; /* line whose call fails, 0: none */
};

static int log_entry(void *user, const char *section, const char *name, const char *value,
		     int lineno, struct conf_error *err)
{
	struct calls *c = user;
	size_t len = strlen(c->log);

	snprintf(c->log + len, sizeof(c->log) - len, "%d:%s%s%s%s%s;", lineno, section,
		 name ? "/" : "", name ? name : "", value ? "=" : "", value ? value : "");
	if (lineno == c->fail_at)
		return conf_error_set(err, -EDOM, "f", lineno, "fails at %d", lineno);
	return 0;
}

static void test_parse_reports_lines_and_sections(void **state)
{
	char *path = write_file("parse.ini", "; top\n[a]\nk = 1 ; c\n\n[empty]\n[b]\nj: x y\n");
	struct calls c = {"", 0};
	struct conf_error err = {{0}};

	(void)state;
	assert_int_equal(ini_limits_parse(path, log_entry, &c, &err), 0);
	assert_string_equal(c.log, "2:a;3:a/k=1;5:empty;6:b;7:b/j=x y;");

	/* The first handler error stops the calls and is returned as is. */
	memset(&c, 0, sizeof(c));
	c.fail_at = 5;
	assert_int_equal(ini_limits_parse(path, log_entry, &c, &err), -EDOM);
	assert_string_equal(err.msg, "f:5: fails at 5");
	assert_string_equal(c.log, "2:a;3:a/k=1;5:empty;");
	unlink(path);
	free(path);
}

static void test_parse_refuses_before_calling(void **state)
{
	char *path = write_file("refuse.ini", "[a]\nk = 1\n  more\n");
	struct calls c = {"", 0};
	struct conf_error err = {{0}};

	(void)state;
	assert_int_equal(ini_limits_parse(path, log_entry, &c, &err), -EINVAL);
	assert_string_equal(c.log, "");
	unlink(path);
	free(path);
	assert_int_equal(ini_limits_parse("/nonexistent/x.ini", log_entry, &c, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/x.ini: cannot open: No such file or directory");
}

static void test_error_format(void **state)
{
	struct conf_error err;

	(void)state;
	assert_int_equal(conf_error_set(&err, -EINVAL, "a.ini", 12, "bad %s", "thing"), -EINVAL);
	assert_string_equal(err.msg, "a.ini:12: bad thing");
	assert_int_equal(conf_error_set(&err, -E2BIG, "a.ini", 0, "whole file"), -E2BIG);
	assert_string_equal(err.msg, "a.ini: whole file");
	assert_int_equal(conf_error_set(NULL, -ENOMEM, "a.ini", 1, "x"), -ENOMEM);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inih_truncates_section_names),
	    cmocka_unit_test(test_inih_cuts_long_lines),
	    cmocka_unit_test(test_inih_continues_indented_lines),
	    cmocka_unit_test(test_check_names),
	    cmocka_unit_test(test_check_lines),
	    cmocka_unit_test(test_parse_reports_lines_and_sections),
	    cmocka_unit_test(test_parse_refuses_before_calling),
	    cmocka_unit_test(test_error_format),
	};
	int r;

	if (!mkdtemp(tmpdir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return r;
}
