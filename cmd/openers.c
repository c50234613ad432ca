// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "openers.h"

/* Does the process whose /proc directory is pfd have (dev, ino) open? */
static bool has_open(int pfd, dev_t dev, ino_t ino)
{
	_cleanup_close_ int fdd = openat(pfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (fdd < 0 || !(d = fdopendir(fdd)))
		return false;
	fdd = -1; /* the DIR has it now */
	while (!found && (de = readdir(d))) {
		struct stat st;

		/* stat follows the magic link to the open file itself. */
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			found = st.st_dev == dev && st.st_ino == ino;
	}
	closedir(d);
	return found;
}

size_t openers_find(dev_t dev, ino_t ino, pid_t *pids, size_t max)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!proc)
		return 0;
	while (n < max && (de = readdir(proc))) {
		_cleanup_close_ int pfd = -1;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		pfd = openat(dirfd(proc), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd >= 0 && has_open(pfd, dev, ino))
			pids[n++] = (pid_t)pid;
	}
	closedir(proc);
	return n;
}

/* The command name of pid, or "?". */
static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[32];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(buf, len, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

const char *openers_text(const char *path, char *buf, size_t len)
{
	pid_t pids[4];
	struct stat st;
	size_t n, used = 0;

	buf[0] = '\0';
	if (lstat(path, &st) < 0)
		return buf;
	n = openers_find(st.st_dev, st.st_ino, pids, ARRAY_SIZE(pids));
	for (size_t i = 0; i < n && used < len; i++) {
		char comm[32];
		int w;

		comm_of(pids[i], comm, sizeof(comm));
		w = snprintf(buf + used, len - used, "%s pid %d %s%s", i ? "," : " (", (int)pids[i],
			     comm, i + 1 == n ? ")" : "");
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}
