/* SPDX-License-Identifier: MIT */
/* agent/sys/list_match: a new list's entries found in the old one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "list_match.h"

static void test_small(void **state)
{
	(void)state;
	static const char *const old[] = {"user.slice/user-1000.slice", "a", "b", "a"};
	static const char *const new[] = {"b", "c", "user.slice/user-1000.slice", "a", "a"};
	size_t from[5], to[4];

	assert_int_equal(fs_list_match(old, 4, new, 5, from), 0);
	assert_int_equal(from[0], 2);
	assert_int_equal(from[1], FS_LIST_NEW);
	assert_int_equal(from[2], 0);
	assert_int_equal(from[3], 1);		/* a repeated old string: its first index */
	assert_int_equal(from[4], FS_LIST_NEW); /* given once only */
	fs_list_inverse(from, 5, to, 4);
	assert_int_equal(to[0], 2);
	assert_int_equal(to[1], 3);
	assert_int_equal(to[2], 0);
	assert_int_equal(to[3], FS_LIST_NEW); /* dropped */
	/* empty lists */
	assert_int_equal(fs_list_match(old, 0, new, 5, from), 0);
	for (int j = 0; j < 5; j++)
		assert_int_equal(from[j], FS_LIST_NEW);
	assert_int_equal(fs_list_match(old, 4, new, 0, from), 0);
}

/* 10,000 user slices, a random tenth gone and new ones in, shuffled:
 * every kept string is found where it was, every new one is new. */
static void test_large_shuffled(void **state)
{
	(void)state;
	enum { N = 10000 };
	char(*names)[40] = malloc(2 * N * sizeof(*names));
	const char **old = malloc(N * sizeof(*old)), **new = malloc(N * sizeof(*new));
	size_t *from = malloc(N * sizeof(*from)), *want = malloc(N * sizeof(*want));
	uint64_t rng = 42;

	assert_non_null(names);
	assert_non_null(old);
	assert_non_null(new);
	assert_non_null(from);
	assert_non_null(want);
	for (size_t i = 0; i < 2 * N; i++)
		snprintf(names[i], sizeof(names[i]), "user.slice/user-%zu.slice", 1000 + i);
	for (size_t i = 0; i < N; i++)
		old[i] = names[i];
	for (size_t j = 0; j < N; j++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		if ((rng >> 33) % 10 == 0) {
			new[j] = names[N + j];
			want[j] = FS_LIST_NEW;
		} else {
			new[j] = names[j];
			want[j] = j;
		}
	}
	for (size_t j = N - 1; j > 0; j--) { /* shuffle new, and want with it */
		size_t k, t;
		const char *p;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		k = (size_t)(rng >> 33) % (j + 1);
		p = new[j], new[j] = new[k], new[k] = p;
		t = want[j], want[j] = want[k], want[k] = t;
	}
	assert_int_equal(fs_list_match(old, N, new, N, from), 0);
	for (size_t j = 0; j < N; j++)
		assert_int_equal(from[j], want[j]);
	free(names);
	free(old);
	free(new);
	free(from);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small),
	    cmocka_unit_test(test_large_shuffled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
