/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Why a hint could not be set, in words a user can act on.  The raw errno of
 * FS_IOC_FSSETXATTR is rarely enough: EINVAL means "the file has data" as
 * often as "bad size", and an unsupported feature shows up as EOPNOTSUPP,
 * ENOTTY or as a silent success that kept nothing.
 */
#ifndef EXTALIGN_HINT_ERROR_H
#define EXTALIGN_HINT_ERROR_H

#include <stdbool.h>
#include <stddef.h>

struct ea_hint_failure {
	const char *fstype;   /* "ext4", "xfs", ... */
	int err;	      /* -errno from ea_hint_set()/ea_hint_clear() */
	unsigned dropped;     /* EA_DROPPED_* bits */
	bool has_data;	      /* the file had data when we tried */
	bool want_forcealign; /* forcealign was part of the request */
};

/* Kinds of failure, so callers can pick an exit status. */
enum ea_hint_failure_kind {
	EA_HINT_FAIL_UNSUPPORTED, /* this kernel or filesystem lacks it */
	EA_HINT_FAIL_HAS_DATA,	  /* needs an empty file: realign instead */
	EA_HINT_FAIL_OTHER,
};

/* Fill buf with the explanation and return buf. */
char *ea_hint_strerror(const struct ea_hint_failure *f, char *buf, size_t len);
enum ea_hint_failure_kind ea_hint_failure_kind(const struct ea_hint_failure *f);

#endif
