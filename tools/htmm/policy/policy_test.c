// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the htmm policy core (mm/htmm/policy.c), in TAP.
 * The cases are shared with KUnit through mm/htmm/policy_tests.h.
 */
#include <stdio.h>

struct htmm_ptest {
	const char *name;
	int failures;
};

#define PT_EXPECT(t, cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: expected %s\n", __FILE__, __LINE__, #cond);	\
		(t)->failures++;					\
	}								\
} while (0)

#define PT_EXPECT_EQ(t, a, b) do {					\
	unsigned long long __a = (a), __b = (b);			\
	if (__a != __b) {						\
		printf("# %s:%d: %s == %s: %llu != %llu\n", __FILE__,	\
		       __LINE__, #a, #b, __a, __b);			\
		(t)->failures++;					\
	}								\
} while (0)

#include "policy_tests.h"

int main(void)
{
	int i, n = 0, failed = 0;

	while (htmm_policy_cases[n].name)
		n++;
	printf("1..%d\n", n);
	for (i = 0; i < n; i++) {
		struct htmm_ptest t = { htmm_policy_cases[i].name, 0 };

		htmm_policy_cases[i].fn(&t);
		printf("%sok %d policy.%s\n", t.failures ? "not " : "", i + 1,
		       t.name);
		failed += !!t.failures;
	}
	return failed ? 1 : 0;
}
