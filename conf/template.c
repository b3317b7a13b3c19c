/* SPDX-License-Identifier: MIT */
/* Tenant templates: matching cgroups and naming them (see template.h). */
#include "template.h"

#include <errno.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resource.h" /* FS_NAME_MAX */

int fs_template_login(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	char *tmp;
	int r;

	if (sz <= 0)
		sz = 16384;
	tmp = malloc((size_t)sz);
	if (!tmp)
		return -ENOMEM;
	r = getpwuid_r(uid, &pw, tmp, (size_t)sz, &res);
	if (r == 0 && res)
		snprintf(buf, len, "%s", pw.pw_name);
	free(tmp);
	if (r != 0)
		return -r;
	return res ? 0 : -ENOENT;
}

static const char *const suffixes[] = {".slice", ".scope", ".service"};

/* "user-1001" -> 1001; false for anything else. */
static bool user_uid(const char *s, size_t n, uid_t *uid)
{
	unsigned long long v = 0;

	if (n <= 5 || strncmp(s, "user-", 5) != 0)
		return false;
	for (size_t i = 5; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > 0xffffffffull / 10)
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 0xfffffffeull)
		return false;
	*uid = (uid_t)v;
	return true;
}

/* Copies n bytes of s as a tenant name: other characters become '_'. */
static void sanitize(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-';

		out[o++] = ok ? c : '_';
	}
	out[o] = '\0';
}

int fs_template_name(const char *cgroup, fs_login_fn login_fn, char *name, size_t len, char *login,
		     size_t login_len)
{
	const char *base = strrchr(cgroup, '/');
	size_t n, cap = len < FS_NAME_MAX ? len : FS_NAME_MAX;
	char who[256];
	uid_t uid;

	base = base ? base + 1 : cgroup;
	n = strlen(base);
	if (login_len)
		login[0] = '\0';
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);

		if (n > k && strcmp(base + n - k, suffixes[i]) == 0) {
			n -= k;
			break;
		}
	}
	if (n == 0 || cap == 0)
		return -EINVAL;
	if (user_uid(base, n, &uid)) {
		if ((login_fn ? login_fn : fs_template_login)(uid, who, sizeof(who)) == 0 &&
		    who[0]) {
			if (login_len)
				snprintf(login, login_len, "%s", who);
			sanitize(who, strlen(who), name, cap);
		} else {
			snprintf(name, cap, "%lu", (unsigned long)uid);
		}
		return 0;
	}
	sanitize(base, n, name, cap);
	return 0;
}

uint64_t fs_template_sig(uint64_t sig, const char *rel)
{
	for (const char *p = rel;; p++) { /* FNV-1a, the NUL included */
		sig = (sig ^ (unsigned char)*p) * 1099511628211ull;
		if (!*p)
			return sig;
	}
}

bool fs_template_match_ok(const char *match)
{
	const char *p = match;

	if (!match || !*match || *match == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
		if (*p == '\0' && p[-1] == '/')
			return false;
	}
	return true;
}

int fs_template_scan(const char *root, const char *match, int (*fn)(void *ctx, const char *rel),
		     void *ctx)
{
	size_t rl = strlen(root);
	char *pat;
	glob_t g;
	int r;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (asprintf(&pat, "%.*s/%s/", (int)rl, root, match) < 0)
		return -ENOMEM;
	/* the trailing '/' matches directories only (GLOB_MARK-free) */
	r = glob(pat, GLOB_NOESCAPE, NULL, &g);
	free(pat);
	if (r == GLOB_NOMATCH || r == GLOB_ABORTED)
		return 0;
	if (r != 0)
		return -ENOMEM;
	r = 0;
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++) {
		char *rel = g.gl_pathv[i] + rl + 1;
		size_t n = strlen(rel);

		if (n && rel[n - 1] == '/')
			rel[n - 1] = '\0';
		r = fn(ctx, rel);
	}
	globfree(&g);
	return r;
}
