// SPDX-License-Identifier: GPL-2.0-or-later
/* What users are told when a hint cannot be set. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/hint-error.h"
#include "extalign/hint.h"
#include "run-suite.h"

static const struct {
	struct ea_hint_failure f;
	const char *want;
	enum ea_hint_failure_kind kind;
} cases[] = {
	/* Unpatched ext4: ioctl returns 0, read-back shows nothing kept. */
	{ { "ext4", -EOPNOTSUPP, EA_DROPPED_EXTSIZE, false, false },
	  "this kernel's ext4 does not support extent size hints: it needs a kernel with the "
	  "extalign ext4 series (extalign(8))",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { "ext4", -EOPNOTSUPP, EA_DROPPED_INHERIT, false, false },
	  "this kernel's ext4 does not support extent size hint inheritance on directories: it "
	  "needs a kernel with the extalign ext4 series (extalign(8))",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { "xfs", -EOPNOTSUPP, EA_DROPPED_FORCEALIGN, false, true },
	  "this kernel's xfs does not support forcealign; XFS aligns extents on the device "
	  "with stripe alignment instead (mkfs.xfs -d su=SIZE,sw=1, mount -o swalloc)",
	  EA_HINT_FAIL_UNSUPPORTED },
	/* XFS today refuses the forcealign bit outright. */
	{ { "xfs", -EOPNOTSUPP, 0, false, true },
	  "this kernel's xfs does not support forcealign; XFS aligns extents on the device "
	  "with stripe alignment instead (mkfs.xfs -d su=SIZE,sw=1, mount -o swalloc)",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { "tmpfs", -ENOTTY, 0, false, false },
	  "tmpfs does not support extent size hints (XFS does, and ext4 with the extalign "
	  "kernel series)",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { "btrfs", -EOPNOTSUPP, 0, false, false },
	  "btrfs does not support extent size hints (XFS does, and ext4 with the extalign "
	  "kernel series)",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { "xfs", -EINVAL, 0, true, false },
	  "has data; an extent size hint can only be set on an "
	  "empty file (use 'extalign realign' to rewrite it aligned)",
	  EA_HINT_FAIL_HAS_DATA },
	{ { "xfs", -EINVAL, 0, false, false },
	  "xfs rejected the hint as invalid (Invalid argument)",
	  EA_HINT_FAIL_OTHER },
	{ { "ext4", -EACCES, 0, false, false }, "Permission denied", EA_HINT_FAIL_OTHER },
	{ { "xfs", -EPERM, 0, false, false },
	  "not permitted: needs the file's owner or CAP_FOWNER, and the file must not be "
	  "immutable or append-only",
	  EA_HINT_FAIL_OTHER },
	{ { "xfs", -EOPNOTSUPP, EA_DROPPED_CLEAR, false, false },
	  "this kernel's xfs did not remove the hint",
	  EA_HINT_FAIL_UNSUPPORTED },
	{ { NULL, -ENOTTY, 0, false, false },
	  "this filesystem does not support extent size hints (XFS does, and ext4 with the "
	  "extalign "
	  "kernel series)",
	  EA_HINT_FAIL_UNSUPPORTED },
};

START_TEST(test_messages)
{
	char buf[256];

	ck_assert_str_eq(ea_hint_strerror(&cases[_i].f, buf, sizeof(buf)), cases[_i].want);
	ck_assert_int_eq(ea_hint_failure_kind(&cases[_i].f), cases[_i].kind);
}
END_TEST

START_TEST(test_truncation)
{
	char buf[8];

	ea_hint_strerror(&cases[0].f, buf, sizeof(buf));
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_messages, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_truncation);
	return run_suite("hint-error", tc);
}
