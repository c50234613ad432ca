// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The write lease a job holds on the original while it copies and swaps:
 * opening the file for writing without our own read-only descriptor in the
 * way, taking and dropping the lease with SIGIO blocked, and, once another
 * process broke it, what that process did.  Uses no other stage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "realign-internal.h"

int rl_reopen_rw(int fd, const char *path, const struct stat *want)
{
	char proc[64];
	struct stat st;
	int nfd;

	/* Through /proc the same inode for sure; the path only as a fallback. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	nfd = open(proc, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0 && errno == ENOENT)
		nfd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0)
		return negative_errno();
	if (fstat(nfd, &st) < 0 || st.st_ino != want->st_ino || st.st_dev != want->st_dev) {
		close(nfd);
		return -ESTALE;
	}
	return nfd;
}

/*
 * What another process did to the file, once it lets go of our lease: a
 * lease break only says that somebody opened or truncated it.  The opener
 * waited for us; give it a moment to act, then compare with the reference.
 */
enum ea_realign_skip rl_what_happened(int fd, const struct stat *ref, bool wait)
{
	for (int i = 0; i <= (wait ? 20 : 0); i++) {
		const struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0)
			break;
		if (st.st_size < ref->st_size)
			return EA_SKIP_TRUNCATED;
		if (st.st_size > ref->st_size)
			return EA_SKIP_EXTENDED;
		if (st.st_mtim.tv_sec != ref->st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != ref->st_mtim.tv_nsec)
			return EA_SKIP_WRITTEN;
		if (wait)
			nanosleep(&ms10, NULL);
	}
	return wait ? EA_SKIP_LEASE_BROKEN : EA_SKIP_CHANGED;
}

int rl_lease_take(struct rl_lease *l, int fd)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	l->fd = -1;
	l->masked = false;
	if (pthread_sigmask(SIG_BLOCK, &set, &l->old) == 0)
		l->masked = !sigismember(&l->old, SIGIO);
	if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		return negative_errno();
	l->fd = fd;
	return 0;
}

void rl_lease_drop(struct rl_lease *l)
{
	if (l->fd >= 0)
		fcntl(l->fd, F_SETLEASE, F_UNLCK);
	l->fd = -1;
	if (l->masked) {
		sigset_t set;
		const struct timespec zero = { 0, 0 };

		/* Swallow the break notice so the restored mask does not kill us. */
		sigemptyset(&set);
		sigaddset(&set, SIGIO);
		while (sigtimedwait(&set, NULL, &zero) == SIGIO)
			;
		pthread_sigmask(SIG_SETMASK, &l->old, NULL);
		l->masked = false;
	}
}
