// SPDX-License-Identifier: GPL-2.0
/*
 * asuser: run a command as another user, for the guest tests of what an
 * unprivileged user may do (busybox has no setpriv --reuid).
 *
 * usage: asuser UID GID CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end1, *end2;
	long uid, gid;

	if (argc < 4) {
		fprintf(stderr, "usage: asuser UID GID CMD [ARGS...]\n");
		return 125;
	}
	uid = strtol(argv[1], &end1, 10);
	gid = strtol(argv[2], &end2, 10);
	if (*end1 || *end2 || uid < 0 || gid < 0) {
		fprintf(stderr, "asuser: bad uid or gid\n");
		return 125;
	}
	if (setgroups(0, NULL) || setgid((gid_t)gid) || setuid((uid_t)uid)) {
		perror("asuser");
		return 125;
	}
	execvp(argv[3], argv + 3);
	perror("asuser: exec");
	return 127;
}
