/* SPDX-License-Identifier: MIT */
/* fairshared's control commands (see control_cmds.h). */
#include "control_cmds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_conf.h"
#include "control_status.h"
#include "log.h"

static int tenant_arg(const struct fsd_published *p, struct json_object *req, size_t *i, char *err,
		      size_t errlen)
{
	struct json_object *v;
	const char *name;

	if (!json_object_object_get_ex(req, "tenant", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "a string \"tenant\" is required");
		return -EINVAL;
	}
	name = json_object_get_string(v);
	for (size_t j = 0; j < p->n_tenants; j++)
		if (!strcmp(p->t[j].name, name)) {
			*i = j;
			return 0;
		}
	snprintf(err, errlen, "no tenant \"%.64s\"", name);
	return -ENOENT;
}

static const struct fsd_published *published(void *ctx)
{
	const struct fsd_control_daemon *d = ctx;

	return d->published(d->ctx);
}

static int cmd_status(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		      struct json_object *resp, char *err, size_t errlen)
{
	(void)peer;
	(void)req;
	if (fsd_json_status(published(ctx), resp) < 0) {
		snprintf(err, errlen, "status: out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int cmd_tenants(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		       struct json_object *resp, char *err, size_t errlen)
{
	const struct fsd_published *p = published(ctx);
	struct json_object *a = json_object_new_array();

	(void)peer;
	(void)req;
	if (!a) {
		snprintf(err, errlen, "tenants: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_tenants; i++) {
		struct json_object *t = json_object_new_object();

		if (!t)
			continue;
		json_object_object_add(t, "name", json_object_new_string(p->t[i].name));
		json_object_object_add(t, "cgroup", json_object_new_string(p->t[i].cgroup));
		json_object_object_add(t, "weight", fsd_json_num(p->t[i].weight));
		json_object_object_add(t, "present", json_object_new_boolean(p->t[i].present));
		json_object_array_add(a, t);
	}
	json_object_object_add(resp, "tenants", a);
	return 0;
}

/*
 * The tenant's files as they are now beside what the daemon wrote: a value
 * changed by someone else shows here until the next period writes ours
 * again. "files": [{"file", "written", "in_force", "error"?}], or
 * "files_error" when they could not be read.
 */
static void add_files(const struct fsd_control_daemon *d, size_t i, struct json_object *resp)
{
	struct fsd_file_state fs[FS_CGF_SLOTS];
	struct json_object *a;
	int n;

	if (!d->files)
		return;
	n = d->files(d->ctx, i, fs, FS_CGF_SLOTS);
	if (n < 0) {
		json_object_object_add(resp, "files_error", json_object_new_string(strerror(-n)));
		return;
	}
	a = json_object_new_array();
	for (int k = 0; a && k < n; k++) {
		struct json_object *f = json_object_new_object();

		if (!f)
			break;
		json_object_object_add(f, "file", json_object_new_string(fs[k].key));
		json_object_object_add(f, "written", json_object_new_string(fs[k].written));
		json_object_object_add(f, "in_force", json_object_new_string(fs[k].in_force));
		if (fs[k].err < 0)
			json_object_object_add(f, "error",
					       json_object_new_string(strerror(-fs[k].err)));
		json_object_array_add(a, f);
	}
	json_object_object_add(resp, "files", a);
}

static int cmd_explain(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		       struct json_object *resp, char *err, size_t errlen)
{
	const struct fsd_published *p = published(ctx);
	size_t i;
	int r;

	(void)peer;
	r = tenant_arg(p, req, &i, err, errlen);
	if (r < 0)
		return r;
	/* the status of the same period gives the reader units and context */
	if (fsd_json_status(p, resp) < 0) {
		snprintf(err, errlen, "explain: out of memory");
		return -ENOMEM;
	}
	r = fsd_json_explain(p, i, resp, err, errlen);
	if (r == 0)
		add_files(ctx, i, resp);
	return r;
}

static int cmd_reload(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		      struct json_object *resp, char *err, size_t errlen)
{
	const struct fsd_control_daemon *d = ctx;
	int r;

	(void)req;
	(void)resp;
	fsd_info("reload requested over the control socket (pid %d uid %u)", (int)peer->pid,
		 (unsigned)peer->uid);
	r = d->reload(d->ctx);
	if (r < 0)
		snprintf(err, errlen, "reload refused, running config kept (see the daemon's log)");
	return r == -EINVAL ? -EIO : r; /* a refused file is not a bad request */
}

static int cmd_release(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
		       struct json_object *resp, char *err, size_t errlen)
{
	const struct fsd_control_daemon *d = ctx;
	int r;

	(void)req;
	(void)resp;
	fsd_info("release requested over the control socket (pid %d uid %u)", (int)peer->pid,
		 (unsigned)peer->uid);
	r = d->release(d->ctx);
	if (r < 0)
		snprintf(err, errlen, "release: some original values could not be restored: %s",
			 strerror(-r));
	return r;
}

static int cmd_set_weight(void *ctx, const struct fsd_control_peer *peer, struct json_object *req,
			  struct json_object *resp, char *err, size_t errlen)
{
	const struct fsd_control_daemon *d = ctx;
	const struct fsd_published *p = published(ctx);
	struct json_object *v;
	size_t i;
	int r;

	(void)peer;
	(void)resp;
	r = tenant_arg(p, req, &i, err, errlen);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(req, "weight", &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
		snprintf(err, errlen, "a number \"weight\" is required");
		return -EINVAL;
	}
	r = d->set_weight(d->ctx, p->t[i].name, json_object_get_double(v));
	if (r == -EINVAL)
		snprintf(err, errlen, "weight must be a number from %g to %g", FS_CONF_WEIGHT_MIN,
			 FS_CONF_WEIGHT_MAX);
	return r;
}

static const struct fsd_control_cmd commands[] = {
    {"status", false, cmd_status},   {"tenants", false, cmd_tenants},
    {"explain", false, cmd_explain}, {"reload", true, cmd_reload},
    {"release", true, cmd_release},  {"set-weight", true, cmd_set_weight},
};

int fsd_control_daemon_open(struct fsd_control **out, sd_event *e,
			    const struct fsd_control_daemon *dmn, const char *path, char *err,
			    size_t errlen)
{
	struct fsd_control_opts o = {
	    .path = path,
	    .cmds = commands,
	    .n_cmds = sizeof(commands) / sizeof(commands[0]),
	    .ctx = (void *)dmn,
	};

	return fsd_control_open(out, e, &o, err, errlen);
}
