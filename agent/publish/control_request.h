/* SPDX-License-Identifier: MIT */
/*
 * One control request line read as a request (control.h): a JSON object with
 * a string "command", nothing after it but blanks, and no NUL in it, raw or
 * escaped. Separate from the server so the fuzzer drives it alone.
 */
#ifndef FAIRSHARE_AGENT_CONTROL_REQUEST_H
#define FAIRSHARE_AGENT_CONTROL_REQUEST_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * line is len bytes followed by a NUL (the newline cut off). 0 with *req
 * (json_object_put it) and *command (a string inside *req), or -EINVAL with
 * err filled and *req NULL, or -ENOMEM.
 */
int fsd_control_parse_request(const char *line, size_t len, struct json_object **req,
			      const char **command, char *err, size_t errlen);

#endif /* FAIRSHARE_AGENT_CONTROL_REQUEST_H */
