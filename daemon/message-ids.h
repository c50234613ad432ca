/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MESSAGE_ID= of every extalignd message an administrator acts on, made
 * once with `systemd-id128 new` and never changed: journal queries and
 * alerts select on them (journalctl MESSAGE_ID=...).  Each has an entry in
 * daemon/extalignd.catalog, where `journalctl -x` finds the cause and the
 * remedy; tests/integration/catalog.sh checks that the two lists agree.
 */
#ifndef EXTALIGND_MESSAGE_IDS_H
#define EXTALIGND_MESSAGE_IDS_H

/* The configuration has errors: not starting. */
#define MSGID_CONFIG_REFUSED "06cde41c1b57401e8e23d1ee9a43ef1f"
/* A reload found errors: the old rules stay. */
#define MSGID_RELOAD_REFUSED "3f451cf463344483a3646ee70e903929"
/* Another extalignd holds the state or persistent directory. */
#define MSGID_ALREADY_RUNNING "f5e96ead4490416699a2b67a108d71d8"
/* A rule's tree is unsafe: a symlink on its path, or a file outside it. */
#define MSGID_RULE_DIR_UNSAFE "5fe8805bc4da404ab62022741da43cfd"
/* A rule's tree does not exist (at start, reload or rescan). */
#define MSGID_RULE_DIR_MISSING "c449111b3e2e43f199893724a1dbc170"
/* A tree cannot be watched: mark, watch or event reading failed. */
#define MSGID_WATCH_FAILED "8c4b015d77874dcd8477687ef1fd4f1b"
/* The event queue overflowed: the trees are walked again. */
#define MSGID_QUEUE_OVERFLOW "0615f789fc07421d8ee67a543d57aa6e"
/* The kernel accepted a hint and kept nothing. */
#define MSGID_HINT_UNSUPPORTED "c1be35cb8b69405d9fe596d759507f8c"
/* Setting a hint failed. */
#define MSGID_HINT_FAILED "05fe8cce3cc5435d9511fbeabb6764f5"
/* A file or tree could not be opened, read or walked. */
#define MSGID_FILE_UNREADABLE "8c532a2bd21043ceaca015522a358838"
/* A file had data before its hint: listed for realignment. */
#define MSGID_LATE_FILE "112094f9e8ce4c998f5a07944badfe4d"
/* A late file could not be listed: the queue is full. */
#define MSGID_LATE_LIST_FULL "5be3740fac704c1da1f8cad174cb165f"
/* A realignment job failed, was refused or is unsupported here. */
#define MSGID_REALIGN_FAILED "e746e2511a0e45bca00179e9a2091eac"
/* A realignment job died without an outcome. */
#define MSGID_REALIGN_ABORTED "53cd1688708e4f3caa4b360336b6a781"
/* The state file or the saved late list cannot be written. */
#define MSGID_STATE_UNWRITABLE "78813fc347f2436db067d39efc1d242d"
/* The metrics file cannot be written. */
#define MSGID_METRICS_UNWRITABLE "7a6920469d8f4023b5e0e6092ca55304"

#endif
