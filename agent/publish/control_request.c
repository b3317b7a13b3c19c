/* SPDX-License-Identifier: MIT */
/* A control request line parsed and checked (see control_request.h). */
#include "control_request.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SHAPE "a request is a JSON object with a string \"command\""

/*
 * Whether the text has the escape \u0000. json-c turns it into a NUL inside a
 * string or key, and every C string reader of the request (command, tenant
 * name) would stop there: "a\u0000junk" would name tenant "a". A backslash
 * starts an escape when an even number of backslashes precede it.
 */
static bool has_escaped_nul(const char *s, size_t len)
{
	size_t run = 0; /* backslashes just before s[i] */

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			run = 0;
			continue;
		}
		if (run % 2 == 0 && len - i >= 6 && !memcmp(s + i, "\\u0000", 6))
			return true;
		run++;
	}
	return false;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]))
			return false;
	return true;
}

int fsd_control_parse_request(const char *line, size_t len, struct json_object **req,
			      const char **command, char *err, size_t errlen)
{
	struct json_tokener *tok = NULL;
	struct json_object *o = NULL, *cmdv;
	enum json_tokener_error jerr;
	size_t end;
	int r = -EINVAL;

	*req = NULL;
	*command = NULL;
	if (strlen(line) != len) {
		snprintf(err, errlen, "request contains a NUL byte");
		goto out;
	}
	if (has_escaped_nul(line, len)) {
		snprintf(err, errlen, "request contains an escaped NUL (\\u0000)");
		goto out;
	}
	if (len > (size_t)INT32_MAX - 1) {
		snprintf(err, errlen, "request too long");
		goto out;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	/* the NUL too: it ends a number or literal at the end of the line */
	o = json_tokener_parse_ex(tok, line, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr != json_tokener_success) {
		snprintf(err, errlen, "malformed JSON: %s", json_tokener_error_desc(jerr));
		goto out;
	}
	/* a well-formed "null" parses to NULL without an error */
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "command", &cmdv) ||
	    !json_object_is_type(cmdv, json_type_string)) {
		snprintf(err, errlen, SHAPE);
		goto out;
	}
	if (end < len && !blank(line + end, len - end)) {
		snprintf(err, errlen, "malformed JSON: data after the request object");
		goto out;
	}
	*command = json_object_get_string(cmdv);
	*req = o;
	o = NULL;
	r = 0;
out:
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	return r;
}
