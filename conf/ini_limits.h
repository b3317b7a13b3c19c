/* SPDX-License-Identifier: MIT */
/*
 * Guards around inih so that a config it would mangle is refused instead.
 *
 * Debian's libinih (55-1) is built with INI_MAX_LINE 200 and a 50-byte
 * section buffer. Measured on this build (see tests/test_scenario.c):
 *  - a line longer than 199 characters reaches the handler truncated to 195
 *    value characters, and ini_parse() reports the error one line late;
 *  - a section name longer than 49 characters reaches the handler truncated
 *    to 49 characters, silently;
 *  - an indented line after a key is a continuation of that key's value (the
 *    handler is called again with the same name, truncated to 49 characters),
 *    even with blank or comment lines in between.
 * The checks below refuse all three before inih sees the file. The line limit
 * is the one inih documents (INI_MAX_LINE - 3, room for "\r\n\0"), two
 * characters stricter than what this build tolerates.
 */
#ifndef FAIRSHARE_INI_LIMITS_H
#define FAIRSHARE_INI_LIMITS_H

#include <stddef.h>

#define INI_LIMITS_MAX_LINE 197	      /* characters per line, without "\r\n" */
#define INI_LIMITS_MAX_NAME 49	      /* characters per section or key name */
#define INI_LIMITS_MAX_FILE (1 << 20) /* bytes; configs are small */

#define CONF_ERR_MAX 512

/* One error, already formatted as "file:line: message". */
struct conf_error {
	char msg[CONF_ERR_MAX];
};

/*
 * Formats "file:line: message" into err (just "file: message" when line <= 0)
 * and returns code, so callers can write `return conf_error_set(err, -EINVAL,
 * ...)`. err may be NULL.
 */
int conf_error_set(struct conf_error *err, int code, const char *file, int line, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));

/*
 * Strips blanks and tabs from both ends of s in place (values of a list
 * entry); returns the first character kept.
 */
char *conf_trim(char *s);

/*
 * Pre-scans the file at path with inih's rules. Returns 0, or with err set:
 * -E2BIG for a line longer than INI_LIMITS_MAX_LINE, a section or key name
 * longer than INI_LIMITS_MAX_NAME, or a file larger than INI_LIMITS_MAX_FILE;
 * -EINVAL for a NUL byte or a continuation line (multi-line values are not
 * part of fairshare's formats); -errno when the file cannot be read.
 */
int ini_limits_check(const char *path, struct conf_error *err);

/*
 * Handler for ini_limits_parse(): called once per section header with
 * name == value == NULL, and once per key, with the 1-based line number.
 * Returns 0, or a negative errno after filling err (e.g. with
 * conf_error_set(err, -EINVAL, file, lineno, ...)); the first error stops
 * further handler calls.
 */
typedef int (*ini_limits_handler)(void *user, const char *section, const char *name,
				  const char *value, int lineno, struct conf_error *err);

/*
 * Reads path once (no race between check and parse), runs the checks of
 * ini_limits_check() on that copy, then parses it with inih, calling handler
 * with line numbers (which Debian's inih does not pass). A line inih rejects
 * (no '=' or ':', unterminated '[') is reported as -EINVAL "syntax error".
 * Returns 0 or a negative errno with err set as "path:line: message".
 */
int ini_limits_parse(const char *path, ini_limits_handler handler, void *user,
		     struct conf_error *err);

#endif /* FAIRSHARE_INI_LIMITS_H */
