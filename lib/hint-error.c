// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "extalign/hint-error.h"
#include "extalign/hint.h"

enum ea_hint_failure_kind ea_hint_failure_kind(const struct ea_hint_failure *f)
{
	if (f->dropped &
	    (EA_DROPPED_EXTSIZE | EA_DROPPED_FORCEALIGN | EA_DROPPED_INHERIT | EA_DROPPED_CLEAR))
		return EA_HINT_FAIL_UNSUPPORTED;
	if (f->err == -EOPNOTSUPP || f->err == -ENOTTY)
		return EA_HINT_FAIL_UNSUPPORTED;
	if (f->err == -EINVAL && f->has_data)
		return EA_HINT_FAIL_HAS_DATA;
	return EA_HINT_FAIL_OTHER;
}

/*
 * What would make a missing feature available, after the message: the
 * extalign kernel series for ext4; for XFS, which has hints but no
 * forcealign, the stripe alignment that aligns extents on the device.
 */
static const char *remedy(const char *fs, bool forcealign)
{
	if (!strcmp(fs, "ext4"))
		return ": it needs a kernel with the extalign ext4 series (extalign(8))";
	if (!strcmp(fs, "xfs") && forcealign)
		return "; XFS aligns extents on the device with stripe alignment instead "
		       "(mkfs.xfs -d su=SIZE,sw=1, mount -o swalloc)";
	return "";
}

char *ea_hint_strerror(const struct ea_hint_failure *f, char *buf, size_t len)
{
	const char *fs = f->fstype ? f->fstype : "this filesystem";

	/* Silent drops first: the ioctl said yes, the read-back said no. */
	if (f->dropped & EA_DROPPED_EXTSIZE)
		snprintf(buf, len, "this kernel's %s does not support extent size hints%s", fs,
			 remedy(fs, false));
	else if (f->dropped & EA_DROPPED_INHERIT)
		snprintf(buf, len,
			 "this kernel's %s does not support extent size hint inheritance on "
			 "directories%s",
			 fs, remedy(fs, false));
	else if (f->dropped & EA_DROPPED_FORCEALIGN)
		snprintf(buf, len, "this kernel's %s does not support forcealign%s", fs,
			 remedy(fs, true));
	else if (f->dropped & EA_DROPPED_CLEAR)
		snprintf(buf, len, "this kernel's %s did not remove the hint", fs);
	else if (f->err == -EOPNOTSUPP && f->want_forcealign)
		/* XFS and unpatched ext4 refuse the unknown flag this way. */
		snprintf(buf, len, "this kernel's %s does not support forcealign%s", fs,
			 remedy(fs, true));
	else if (f->err == -EOPNOTSUPP || f->err == -ENOTTY)
		snprintf(buf, len,
			 "%s does not support extent size hints (XFS does, and ext4 with the "
			 "extalign kernel series)",
			 fs);
	else if (f->err == -EINVAL && f->has_data)
		snprintf(buf, len,
			 "has data; an extent size hint can only be set on an empty file "
			 "(use 'extalign realign' to rewrite it aligned)");
	else if (f->err == -EINVAL)
		snprintf(buf, len, "%s rejected the hint as invalid (%s)", fs, strerror(EINVAL));
	else if (f->err == -EPERM)
		snprintf(buf, len,
			 "not permitted: needs the file's owner or CAP_FOWNER, "
			 "and the file must not be immutable or append-only");
	else
		snprintf(buf, len, "%s", strerror(-f->err));
	return buf;
}
