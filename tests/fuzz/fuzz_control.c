/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the control protocol, both ends. The daemon's side: a
 * request line read as a request (publish/control_request.c), with the
 * server's NUL-terminated line as it hands it over. fairctl's side: any JSON
 * object read as a status answer (client/control_json.c).
 */
#include <stdlib.h>
#include <string.h>

#include "control_json.h"
#include "control_request.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *req = NULL, *ans;
	struct fcj_status st;
	const char *command;
	char *line, err[512];

	line = malloc(size + 1);
	if (!line)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	if (fsd_control_parse_request(line, size, &req, &command, err, sizeof(err)) == 0) {
		/* no NUL inside: C readers see the whole command */
		struct json_object *v = json_object_object_get(req, "command");

		if ((size_t)json_object_get_string_len(v) != strlen(command))
			abort();
	} else if (strstr(err, "success")) {
		abort(); /* "malformed JSON: success" explains nothing */
	}
	json_object_put(req);

	ans = json_tokener_parse(line);
	if (ans && json_object_is_type(ans, json_type_object)) {
		memset(&st, 0, sizeof(st));
		fcj_status_parse(ans, &st, err, sizeof(err));
		fcj_status_free(&st);
	}
	json_object_put(ans);
	free(line);
	return 0;
}
