// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * notify-listen SOCKET LOG: a stand-in for systemd's end of NOTIFY_SOCKET.
 * Binds a datagram socket at SOCKET and appends every message it receives to
 * LOG, one "SEQ PID KEY=VALUE" line per assignment, SEQ counting messages
 * from 1 and PID from the sender's credentials, so tests can check both
 * what was sent and in which order (RELOADING=1 before READY=1).  Runs until
 * SIGTERM or SIGINT.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned long seq = 0;
	int one = 1, sock, logfd, sfd;
	sigset_t mask;

	if (argc != 3)
		errx(2, "usage: notify-listen SOCKET LOG");
	if (strlen(argv[1]) >= sizeof(sa.sun_path))
		errx(2, "socket path too long");
	strcpy(sa.sun_path, argv[1]);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sfd < 0 || sock < 0)
		err(1, "socket");
	unlink(sa.sun_path);
	if (bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err(1, "bind %s", sa.sun_path);
	/* Like systemd: learn the sender's pid from SCM_CREDENTIALS. */
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		err(1, "SO_PASSCRED");
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		err(1, "%s", argv[2]);

	for (;;) {
		struct pollfd p[2] = { { sock, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		char buf[4096], ctl[CMSG_SPACE(sizeof(struct ucred))];
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl,
			.msg_controllen = sizeof(ctl),
		};
		pid_t pid = 0;
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		if (p[1].revents)
			break;
		n = recvmsg(sock, &mh, 0);
		if (n < 0)
			continue;
		buf[n] = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				pid = uc.pid;
			}
		seq++;
		for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			dprintf(logfd, "%lu %d %s\n", seq, (int)pid, line);
	}
	unlink(sa.sun_path);
	return 0;
}
