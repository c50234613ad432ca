/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Realignment: rewrite a file whose data landed before its extent size hint
 * so that it carries the hint and aligned extents, without ever losing data.
 * Shared by "extalign realign" and the daemon.  The library never prints,
 * never exits and keeps no global state; everything it needs comes in
 * struct ea_realign_opts, everything it learnt goes out in
 * struct ea_realign_result.
 *
 * One file goes through these steps (ea_realign_file):
 *   1. checks: a regular file (no symlink), not immutable, append-only or
 *      FS_XFLAG_NODEFRAG, on the expected filesystem, not already aligned;
 *   2. a write lease (F_SETLEASE F_WRLCK): it fails when anybody else has the
 *      file open, and breaks when anybody opens or truncates it later;
 *   3. an unnamed O_TMPFILE in the same directory gets the hint (read back:
 *      a hint the kernel silently drops makes the outcome UNSUPPORTED); the
 *      free-space check (ea_realign_space_check) skips a file that would not
 *      fit; then, piece by piece, whole units are allocated (fallocate,
 *      over the data and the original's unwritten preallocation) and the
 *      data is written into them, hole by hole (SEEK_DATA/SEEK_HOLE), with
 *      plain reads and writes or O_DIRECT, never reflink or copy offload;
 *      fsync;
 *   4. verify: checksum of the copy read back equals the checksum of what was
 *      read from the original, FIEMAP of the copy is logically aligned (and
 *      physically where promised), else skipped as copy-misaligned;
 *   5. replace (see enum ea_realign_swap for which path runs when), after a
 *      last check that size, mtime and ctime are unchanged and the lease is
 *      intact.
 * A kill at any point leaves the old file or the new one, complete: the copy
 * is unnamed until it is whole and synced; the only named leftover, the
 * rename path's ".extalign-realign.<ino>.<random>" in the file's directory,
 * is recorded under the state directory first and removed by
 * ea_realign_cleanup() at the next start.  A copy stopped by the deadline
 * or the cancel callback is kept the same way,
 * with the original's identity in its record, and the next call on the
 * unchanged file goes on from where it stopped (res.resumed_from, after 4 MiB copied).
 *
 * Lease breaks are noticed by polling F_GETLEASE between chunks.  The kernel
 * also sends SIGIO to the lease holder; ea_realign_file() blocks SIGIO in
 * the calling thread while it holds a lease and discards a pending one
 * before restoring the mask.  A multi-threaded caller must block or ignore
 * SIGIO in its other threads, or the signal's default action ends the
 * process.
 */
#ifndef EXTALIGN_REALIGN_H
#define EXTALIGN_REALIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "extalign/extent.h"

/* Where leftover records (and job progress) live unless opts say otherwise. */
#define EA_REALIGN_STATE_DIR "/var/lib/extalign/realign"

/*
 * How long a copy stopped by a deadline or a cancel is kept for the next run
 * (counted from when it was stopped): a file nobody realigns again must not
 * hold the space of its partial copy for ever.  Older ones are removed by
 * the next ea_realign_cleanup() and never resumed.
 */
#define EA_REALIGN_RESUME_MAX_AGE_S (7 * 24 * 3600)

/* Prefix of the rename path's named temporary: PREFIX<ino>.<16 hex digits>. */
#define EA_REALIGN_LEFTOVER_PREFIX ".extalign-realign."

enum ea_realign_outcome {
	EA_REALIGN_DONE,	/* rewritten and replaced */
	EA_REALIGN_HINT_SET,	/* no data blocks: hint set in place, nothing copied */
	EA_REALIGN_WOULD,	/* dry run: would be rewritten */
	EA_REALIGN_SKIPPED,	/* see skip; the file is untouched */
	EA_REALIGN_UNSUPPORTED, /* the filesystem keeps no hint / no way to replace */
	EA_REALIGN_CANCELLED,	/* cancel callback or deadline; file untouched */
	EA_REALIGN_FAILED,	/* err and step say why; the file is untouched */
};

enum ea_realign_skip {
	EA_SKIP_NONE,
	EA_SKIP_NOT_REGULAR,
	EA_SKIP_SYMLINK,
	EA_SKIP_OTHER_FS, /* st_dev differs from opts.dev */
	EA_SKIP_IMMUTABLE,
	EA_SKIP_APPEND_ONLY,
	EA_SKIP_NODEFRAG,	 /* FS_XFLAG_NODEFRAG */
	EA_SKIP_HARDLINKS,	 /* nlink > 1 and only the rename path could carry the hint */
	EA_SKIP_OPEN,		 /* open by another process (write lease refused) */
	EA_SKIP_LEASE_BROKEN,	 /* somebody opened or truncated it during the copy */
	EA_SKIP_CHANGED,	 /* size, mtime or ctime changed during the copy */
	EA_SKIP_ALREADY_ALIGNED, /* hint in place and extents aligned */
	EA_SKIP_NO_SPACE,	 /* less free space than the copy needs (res.space) */
	EA_SKIP_COPY_MISALIGNED, /* the filesystem placed the copy off the unit too */
	EA_SKIP_TRUNCATED,	 /* another process truncated it during the copy */
	EA_SKIP_EXTENDED,	 /* another process made it longer during the copy */
	EA_SKIP_WRITTEN,	 /* another process wrote to it during the copy */
	/* Hint in place, extents aligned in the file but not on the device,
	 * which this filesystem does not promise (no forcealign, no XFS stripe
	 * unit covering the hint): a copy would be as much luck.  opts.force
	 * rewrites it anyway. */
	EA_SKIP_LOGICAL_ONLY,
	EA_SKIP_COUNT
};

/* How the aligned copy replaced the original. */
enum ea_realign_swap {
	EA_SWAP_NONE,
	/*
	 * Inode-keeping swaps.  They move extents only: the inode keeps its own
	 * fsxattr, and the hint cannot be set on a file that has extents (XFS
	 * answers EINVAL), so they run only when the original already carries
	 * the wanted hint and merely its extents are off.  Tried in this order.
	 */
	EA_SWAP_EXCHANGE_RANGE, /* XFS_IOC_EXCHANGE_RANGE: needs the exchange feature */
	EA_SWAP_SWAPEXT,	/* XFS_IOC_SWAPEXT: the kernel re-checks mtime/ctime */
	EA_SWAP_MOVE_EXT,	/* EXT4_IOC_MOVE_EXT: whole units only (it stops at EOF) */
	/*
	 * The copy, which carries the hint, takes the original's name: linkat
	 * to a leftover name, renameat2(RENAME_EXCHANGE), check the lease once
	 * more (exchange back if it broke), unlink the old inode, fsync the
	 * directory.  New inode number; refused for hard-linked files.
	 */
	EA_SWAP_RENAME,
	EA_SWAP_IN_PLACE, /* no data blocks: the hint was set on the file itself */
};

/* How a FIEMAP result judges against the unit. */
enum ea_align_verdict {
	EA_VERDICT_UNKNOWN, /* not measured (skipped early, dry run, failure) */
	EA_VERDICT_ALIGNED,
	EA_VERDICT_MISALIGNED,
};

enum ea_realign_phase {
	EA_PHASE_CHECK,	    /* looking at the file */
	EA_PHASE_COPY,	    /* done/total are bytes copied of data bytes */
	EA_PHASE_VERIFY,    /* done/total are bytes read back */
	EA_PHASE_LINKED,    /* rename path: the copy has a (leftover) name */
	EA_PHASE_SWAP,	    /* about to replace */
	EA_PHASE_EXCHANGED, /* rename path: names exchanged, old inode at the leftover name */
	EA_PHASE_DONE,
};

struct ea_realign_progress {
	const char *path;
	enum ea_realign_phase phase;
	uint64_t done;
	uint64_t total;
};

/*
 * A token bucket shared by all files of a job, so a bandwidth limit holds
 * across files.  All times are CLOCK_MONOTONIC nanoseconds.
 */
struct ea_ratelimit {
	uint64_t rate;	   /* bytes per second, 0 for no limit */
	uint64_t start_ns; /* when accounting started */
	uint64_t bytes;	   /* accounted since start_ns */
};

void ea_ratelimit_init(struct ea_ratelimit *rl, uint64_t rate, uint64_t now_ns);
/* Account n bytes at now_ns; returns how long to sleep to stay at the rate. */
uint64_t ea_ratelimit_account(struct ea_ratelimit *rl, uint64_t n, uint64_t now_ns);

struct ea_realign_opts {
	uint32_t extsize;		/* bytes, required: a power of two, a block multiple */
	int forcealign;			/* -1 leave as is, 0 clear, 1 set (as struct ea_hint) */
	bool force;			/* rewrite even when hint and extents look right */
	bool dry_run;			/* check and probe the hint on a tmpfile; change nothing */
	bool assess;			/* like dry_run without the tmpfile: the checks only, for a
					 * background scan (a WOULD may still end UNSUPPORTED) */
	bool buffered;			/* no O_DIRECT even where it would work */
	dev_t dev;			/* skip files with another st_dev; 0 accepts any */
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 for none */
	struct ea_ratelimit *ratelimit; /* NULL for no limit */
	const char *state_dir;		/* NULL for EA_REALIGN_STATE_DIR */
	/* Called at phase changes and about every chunk; may be NULL. */
	void (*progress)(void *userdata, const struct ea_realign_progress *p);
	/* Polled between chunks; true aborts the file untouched.  May be NULL. */
	bool (*cancel)(void *userdata);
	void *userdata;
	/* NULL: a rename swap is durable when ea_realign_file() returns; else
	 * it is made durable with the batch's others (ea_realign_batch_flush). */
	struct ea_realign_batch *batch;
};

/*
 * Rename swaps made durable together.  A single rename swap syncs a record
 * naming its leftover before the link (the record and the state directory)
 * and the file's directory after the exchange, after which the record goes:
 * over many small files those are three log forces per file besides the
 * copy's own sync.  With a batch, each file's copy is still synced before
 * it gets a name, as without; the batch's files share one record, which
 * lists their directories and is synced once per new directory, before the
 * first link there; the directories' fsyncs and the record's removal wait
 * for the flush: one fsync per directory for up to EA_REALIGN_BATCH_MAX
 * files or EA_REALIGN_BATCH_MAX_AGE_NS, whichever comes first.  A crash
 * before the flush leaves each of those files either as it was or
 * realigned, whole (a journalled rename is all or nothing), and the record
 * names every leftover the batch may have left for ea_realign_cleanup(), as
 * a crash during a single swap does.  The record stays locked until the
 * flush, so a cleanup running meanwhile leaves it and its leftovers alone.
 */
#define EA_REALIGN_BATCH_MAX	    64
#define EA_REALIGN_BATCH_MAX_AGE_NS 1000000000ULL
struct ea_realign_batch;
struct ea_realign_batch *ea_realign_batch_new(void);
/*
 * Make the swaps since the last flush durable, then drop their records.
 * -errno of the first fsync() that failed: then the records stay (the
 * swaps happened; a later cleanup removes what a crash may bring back).
 */
int ea_realign_batch_flush(struct ea_realign_batch *b);
/* Flushes first; returns what that flush returned. */
int ea_realign_batch_free(struct ea_realign_batch *b);

/*
 * The space a copy takes.  It allocates whole units over the data and over
 * the original's unwritten preallocation before writing, so needed is
 * those units plus a margin for the extent maps.
 */
struct ea_realign_space {
	uint64_t copy;	    /* data bytes read and written (holes, unwritten excluded) */
	uint64_t prealloc;  /* unwritten bytes kept allocated */
	uint64_t needed;    /* free bytes the copy needs while it exists */
	uint64_t available; /* free bytes now (statvfs f_bavail) */
};

/*
 * The free-space check that ea_realign_file() runs before a copy, for a
 * caller that wants to know first (a scheduler, a dry run): fd is the open
 * original.  Fills *sp; returns 0 when the copy fits, -ENOSPC when it does
 * not, -EINVAL for a bad extsize or a file that is not regular, -errno.
 */
int ea_realign_space_check(int fd, uint32_t extsize, struct ea_realign_space *sp);

struct ea_realign_result {
	enum ea_realign_outcome outcome;
	enum ea_realign_skip skip;     /* when SKIPPED */
	enum ea_realign_swap swap;     /* path that ran (or would, for dry runs: NONE) */
	int err;		       /* -errno for FAILED and UNSUPPORTED */
	const char *step;	       /* static: where err happened, e.g. "copy" */
	const char *detail;	       /* static, may be NULL: the cause in words when err
					* alone would mislead (a checksum mismatch) */
	unsigned dropped;	       /* EA_DROPPED_* when the kernel kept no hint */
	const char *fs_type;	       /* static, "xfs", "ext4", ... */
	uint64_t size;		       /* file size */
	uint64_t bytes_copied;	       /* data bytes written to the copy, also when it was
					* then discarded (holes excluded) */
	struct ea_realign_space space; /* measured before the copy (also dry runs) */
	uint64_t resumed_from;	       /* offset a kept copy of an earlier run went on at */
	uint64_t resume_kept;	       /* CANCELLED: the copy is kept up to here for the next
					* run (a named leftover and its record) */
	uint64_t checksum;	       /* of the content, when verified */
	ino_t ino_before, ino_after;
	bool hint_before; /* the original carried the wanted hint */
	struct ea_align_report before, after;
	enum ea_align_verdict logical; /* after (before, when not rewritten) */
	enum ea_align_verdict physical;
	bool physical_guaranteed; /* forcealign kept, or XFS stripe unit covers extsize */
	uint64_t elapsed_ns;
};

/* Options with defaults: forcealign left alone, nothing else set. */
void ea_realign_opts_init(struct ea_realign_opts *o, uint32_t extsize);

/*
 * Realign the file at path (relative to AT_FDCWD).  Returns 0 when *res
 * holds an outcome (also SKIPPED, UNSUPPORTED, FAILED: look at res), or
 * -EINVAL for unusable options.  Never leaves the original changed unless
 * the outcome is DONE or HINT_SET.
 */
int ea_realign_file(const char *path, const struct ea_realign_opts *opts,
		    struct ea_realign_result *res);

/*
 * Remove what killed jobs left: for each record in state_dir (NULL for the
 * default) whose job is gone, the named leftover it points to, if it is one.
 * *removed counts leftover files unlinked.  Returns 0 or -errno; a missing
 * state directory is fine.
 */
int ea_realign_cleanup(const char *state_dir, unsigned *removed);

/*
 * Remove one leftover found by name in dirfd (a tree walk meets them) unless
 * a running job still owns it.  Returns 1 when removed, 0 when kept or not a
 * leftover name, -errno on failure.
 */
int ea_realign_cleanup_name(int dirfd, const char *name, const char *state_dir);

/* Building blocks, exported for the daemon and the unit tests. */

/* True when name is exactly a leftover name; *ino (may be NULL) gets the inode. */
bool ea_realign_leftover_parse(const char *name, uint64_t *ino);
/* Format PREFIX<ino>.<16 hex of rnd>; buf must hold EA_REALIGN_LEFTOVER_MAX. */
#define EA_REALIGN_LEFTOVER_MAX 64
void ea_realign_leftover_name(char buf[static EA_REALIGN_LEFTOVER_MAX], uint64_t ino, uint64_t rnd);

/* A data range of a file, [start, end) in bytes. */
struct ea_range {
	uint64_t start, end;
};

/*
 * Widen data ranges to multiples of align (for O_DIRECT), clip them to
 * round_up(size, align) and merge those that then touch or overlap.  Ranges
 * must be sorted and disjoint; works in place, returns the new count.
 */
size_t ea_ranges_align(struct ea_range *r, size_t n, uint64_t align, uint64_t size);

/*
 * The data ranges of an open file from SEEK_DATA/SEEK_HOLE, clipped to
 * size.  *ret is malloc()ed.  Filesystems without SEEK_DATA report one range.
 */
int ea_ranges_read(int fd, uint64_t size, struct ea_range **ret, size_t *n);

/*
 * 64-bit content checksum: the sum of a mix of each 16 bytes with their
 * offset, where zeros add nothing.  So chunks may come in any order and
 * holes need not be read: they count as the zeros they read as.  Not
 * cryptographic; it catches misplaced, lost and corrupted data.
 */
#define EA_CSUM_ALIGN 16
struct ea_csum {
	uint64_t h;
};
void ea_csum_init(struct ea_csum *c);
/* Fold in n bytes read at file offset off, a multiple of EA_CSUM_ALIGN; a
 * short tail is zero-padded. */
void ea_csum_update(struct ea_csum *c, uint64_t off, const void *buf, size_t n);
uint64_t ea_csum_final(const struct ea_csum *c);

/* Names for reports and JSON: "done", "open", "swapext", "aligned", ... */
const char *ea_realign_outcome_name(enum ea_realign_outcome o);
const char *ea_realign_skip_name(enum ea_realign_skip s);
/* A phrase for humans: "open by another process". */
const char *ea_realign_skip_str(enum ea_realign_skip s);
const char *ea_realign_swap_name(enum ea_realign_swap s);
const char *ea_align_verdict_name(enum ea_align_verdict v);

#endif
