// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "extalign/e2fsck.h"
#include "extalign/macro.h"

/* The line the series adds to "e2fsck -V" (e2fsprogs/patches, 0003). */
#define KNOWS "Knows extent size hints and forcealign"

int ea_e2fsck_knows_forcealign(const char *path)
{
	char *const argv[] = { (char *)path, (char *)"-V", NULL };
	char *const envp[] = { (char *)"LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	char out[4096];
	size_t len = 0;
	int fds[2], status, r;
	pid_t pid;
	ssize_t n;

	if (access(path, X_OK) < 0)
		return negative_errno();
	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	/* It prints its version on stderr; take both, read nothing in. */
	r = posix_spawn_file_actions_init(&fa);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	if (!r)
		r = posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (r) {
		close(fds[0]);
		return -r;
	}
	while (len < sizeof(out) - 1 && ((n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0 ||
					 (n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	close(fds[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(out, "e2fsck"))
		return -EPROTO;
	return strstr(out, KNOWS) ? 1 : 0;
}
