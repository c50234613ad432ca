/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between the lib/realign*.c files only; not installed, not API. */
#ifndef EXTALIGN_REALIGN_INTERNAL_H
#define EXTALIGN_REALIGN_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "extalign/realign.h"

/* Interruptions of a copy, as negative returns next to -errno values. */
#define RL_LEASE_BROKEN (-ENOLCK)    /* F_GETLEASE no longer F_WRLCK */
#define RL_CANCELLED	(-ECANCELED) /* cancel callback or deadline */

#define RL_CHUNK (4U << 20) /* bytes per read/write: big enough to stream */

/* One file's job. */
struct rl_record_ref;

struct rl_ctx {
	const struct ea_realign_opts *o;
	struct ea_realign_result *res;
	const char *path;
	const char *base; /* last component of path, inside dirfd */
	int fd;		  /* the original, O_RDWR, carrying our write lease */
	int tmpfd;	  /* the O_TMPFILE copy */
	int dirfd;
	struct stat st; /* the original when the lease was taken */
	bool direct;	/* O_DIRECT on both descriptors */
	uint64_t dio_align;
	void *buf;	   /* RL_CHUNK bytes, aligned for O_DIRECT */
	bool buf_borrowed; /* the batch's (rl_batch_buffer()), not freed with the job */
	/* Resuming: everything below copied_to is in the copy, its checksum in csum. */
	uint64_t copied_to, partial_csum;
	bool resumed; /* tmpfd is a kept partial copy, named resume.name */
	struct rl_record_ref *resume;
};

/*
 * realign-csum.c: a chunk's checksum summed beside the I/O.  Between
 * rl_csum_start() and rl_csum_wait() the buffer must not change; every
 * started job is waited for, on every path (the thread reads the buffer).
 */
struct rl_csum_job {
	pthread_t thread;
	bool started, threaded;
	const void *buf;
	size_t n;
	uint64_t off, sum;
};
/* The sum of the terms of n bytes at file offset off (realign-util.c). */
uint64_t rl_csum_terms(uint64_t off, const void *buf, size_t n);
void rl_csum_start(struct rl_csum_job *j, const void *buf, size_t n, uint64_t off);
/* Adds the job's sum to cs; nothing if none was started. */
void rl_csum_wait(struct rl_csum_job *j, struct ea_csum *cs);

/* realign-job.c: the bottom layer, used by every stage below. */
uint64_t rl_now_ns(void);
/* 0, RL_LEASE_BROKEN or RL_CANCELLED. */
int rl_interrupted(const struct rl_ctx *c);
void rl_progress(const struct rl_ctx *c, enum ea_realign_phase phase, uint64_t done,
		 uint64_t total);
/*
 * 0 while size, nlink, mtime and (unless @exchanged) ctime are as at the
 * start and the lease holds; RL_LEASE_BROKEN, -ESTALE (changed) or -errno.
 */
int rl_unchanged(const struct rl_ctx *c, bool exchanged);

/*
 * realign-lease.c: the write lease on the original.  SIGIO stays blocked
 * while it is held (see realign.h); rl_lease_drop() restores the mask.
 */
struct rl_lease {
	int fd; /* -1 when none is held */
	bool masked;
	sigset_t old;
};
int rl_lease_take(struct rl_lease *l, int fd);
void rl_lease_drop(struct rl_lease *l);
/* fd (read-only) opened again for writing, the same inode or -ESTALE. */
int rl_reopen_rw(int fd, const char *path, const struct stat *want);
/*
 * What another process did to the file compared with ref: after a lease
 * break (wait: give the opener a moment to act) or a change seen.
 */
enum ea_realign_skip rl_what_happened(int fd, const struct stat *ref, bool wait);

/*
 * realign-record.c: a locked record that names a leftover until it is
 * gone.  Used by the stages, uses none of them.
 */
struct rl_record {
	int fd;	  /* locked record file, -1 when none */
	int sdir; /* the state directory */
	char name[EA_REALIGN_LEFTOVER_MAX];
};
const char *rl_state_dir(const char *state_dir); /* the default for NULL or "" */
/* Create and lock an empty record name in the state directory (made if need be). */
int rl_record_open(const char *state_dir, const char *name, struct rl_record *r);
/* A record naming dirfd's absolute path, durable. */
int rl_record_create(const char *state_dir, int dirfd, const char *name, struct rl_record *r);
/* dirfd's absolute path (malloc'ed), as a record keeps it. */
int rl_record_dir_path(int dirfd, char **ret);
void rl_record_remove(struct rl_record *r);
/* Open and lock the record name in sdir; -EBUSY while its job still runs. */
int rl_record_take(int sdir, const char *name);
/* Give the O_TMPFILE copy a name in dirfd (a leftover, until renamed). */
int rl_link_tmpfile(int tmpfd, int dirfd, const char *name);

/* realign-plan.c: what the copy reads and allocates. */
struct rl_plan {
	struct ea_range *data; /* to read and write, aligned for the copy's I/O */
	size_t n_data;
	struct ea_range *alloc; /* whole units to allocate, sorted; may pass EOF */
	size_t n_alloc;
	uint64_t data_bytes, alloc_bytes, prealloc_bytes;
};
int rl_plan_make(int fd, uint64_t size, uint64_t unit, uint64_t data_align, struct rl_plan *p);
void rl_plan_free(struct rl_plan *p);
/* Fill sp from the plan; -ENOSPC when it does not fit. */
int rl_space_of(int fd, const struct rl_plan *p, struct ea_realign_space *sp);

/* realign-copy.c */
int rl_copy(struct rl_ctx *c, const struct rl_plan *p, uint64_t *csum);
int rl_verify(struct rl_ctx *c, uint64_t csum);

/* realign-meta.c: before any data is written, what affects allocation. */
int rl_meta_early(int from, int to);
/* Owner, mode, xattrs (ACLs too), inode flags, then times. */
int rl_meta_copy(int from, int to, const struct stat *st);
int rl_restore_times(int fd, const struct stat *st);

/* realign-swap.c: 0 when swapped, -EOPNOTSUPP when no swap path applies. */
int rl_swap_keep_inode(struct rl_ctx *c);
int rl_swap_rename(struct rl_ctx *c);
/* True for answers meaning "this swap does not exist here", not "it failed". */
bool rl_swap_unavailable(int err);
/*
 * realign-batch.c.  Before a rename swap links its copy in dirfd: make sure
 * the batch's record (one for all its files) lists dirfd, durably, and give
 * the random part of the leftover name its files share.  Flushes first when
 * the batch is full or old, so a swap never outlives its record.
 */
int rl_batch_record_dir(struct ea_realign_batch *b, const char *state_dir, int dirfd,
			uint64_t *rnd);
/*
 * The batch's copy buffer (RL_CHUNK bytes, aligned for O_DIRECT), made on
 * first use and kept until the batch is freed: a buffer per file is an
 * mmap() and a munmap() and a page fault per 4 KiB touched, per file.
 * NULL when it cannot be made.
 */
void *rl_batch_buffer(struct ea_realign_batch *b);
/* Hand a finished rename swap's directory, and its own record if it has one
 * (rec->fd >= 0: a resumed copy's), to the batch.  0: the batch owns *rec
 * now; -errno: nothing taken, the caller makes the swap durable itself. */
int rl_batch_add(struct ea_realign_batch *b, int dirfd, struct rl_record *rec);
/*
 * A batch record, named rl_batch_record_name(rnd) in the state directory,
 * holds the absolute paths of the directories its swaps were made in, each
 * ended by a NUL; its leftovers are the files there named
 * ea_realign_leftover_name(any inode, rnd).
 */
void rl_batch_record_name(char buf[static EA_REALIGN_LEFTOVER_MAX], uint64_t rnd);
bool rl_batch_record_parse(const char *name, uint64_t *rnd);
/* A leftover name's two parts; false for any other name. */
bool rl_leftover_split(const char *name, uint64_t *ino, uint64_t *rnd);

/*
 * realign-resume.c: a copy stopped by a deadline or a cancel is kept, named
 * and recorded with the original's identity and how far it got, so the
 * next run over the same unchanged file goes on from there.
 */
#define RL_RESUME_MIN (4ULL << 20) /* less copied is not worth a named file */
struct rl_record_ref {
	struct rl_record rec;
	char name[EA_REALIGN_LEFTOVER_MAX]; /* the partial copy in c->dirfd */
};
/* Keep c->tmpfd for later; 0 or -errno (then nothing is kept). */
int rl_resume_save(struct rl_ctx *c);
/* A kept copy of this very file: returns its fd and fills c; 0 when none. */
int rl_resume_find(struct rl_ctx *c, struct rl_record_ref *ref);
/* Drop a kept copy (unlink it and its record). */
void rl_resume_drop(struct rl_ctx *c);
/*
 * For cleanup: true when the record (open as recfd, read into record) keeps a
 * copy whose original is unchanged and that is younger than
 * EA_REALIGN_RESUME_MAX_AGE_S.
 */
bool rl_resume_valid(int recfd, const char *record, size_t len);

#endif
