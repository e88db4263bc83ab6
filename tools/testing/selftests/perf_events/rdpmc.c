// SPDX-License-Identifier: GPL-2.0
/* Placeholder until the user-read tests land. */
#include "../kselftest_harness.h"
#include "user_page.h"

TEST(placeholder)
{
	SKIP(return, "not yet");
}

TEST_HARNESS_MAIN
