// SPDX-License-Identifier: LGPL-2.1-or-later
/* Pure helpers of realignment: names, range maths, checksum, rate limit. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/realign.h"
#include "name-table.h"

#define NSEC_PER_SEC 1000000000ULL
/* Credit a limiter may save up while the job waits between files. */
#define RATELIMIT_BURST_NS NSEC_PER_SEC

void ea_ratelimit_init(struct ea_ratelimit *rl, uint64_t rate, uint64_t now_ns)
{
	*rl = (struct ea_ratelimit){ .rate = rate, .start_ns = now_ns };
}

uint64_t ea_ratelimit_account(struct ea_ratelimit *rl, uint64_t n, uint64_t now_ns)
{
	unsigned __int128 due;
	uint64_t elapsed;

	if (!rl || !rl->rate)
		return 0;
	rl->bytes += n;
	/* 128 bits: bytes * 1e9 overflows 64 bits after 18 GB. */
	due = (unsigned __int128)rl->bytes * NSEC_PER_SEC / rl->rate;
	elapsed = now_ns > rl->start_ns ? now_ns - rl->start_ns : 0;
	if (due > elapsed)
		return (uint64_t)(due - elapsed);
	/*
	 * Behind schedule (a pause between files, a slow disk): cap the credit
	 * so that the next files do not run unlimited until it is used up.
	 */
	if (elapsed - due > RATELIMIT_BURST_NS)
		rl->start_ns = now_ns - (uint64_t)due - RATELIMIT_BURST_NS;
	return 0;
}

void ea_realign_leftover_name(char buf[static EA_REALIGN_LEFTOVER_MAX], uint64_t ino, uint64_t rnd)
{
	snprintf(buf, EA_REALIGN_LEFTOVER_MAX, EA_REALIGN_LEFTOVER_PREFIX "%" PRIu64 ".%016" PRIx64,
		 ino, rnd);
}

/* Parse 16 lower-case hex digits and nothing after them. */
static bool parse_rnd(const char *p, uint64_t *rnd)
{
	uint64_t v = 0;
	unsigned hex = 0;

	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++, hex++)
		v = v << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	if (hex != 16 || *p)
		return false;
	if (rnd)
		*rnd = v;
	return true;
}

bool rl_leftover_split(const char *name, uint64_t *ino, uint64_t *rnd)
{
	const size_t plen = strlen(EA_REALIGN_LEFTOVER_PREFIX);
	const char *p;
	uint64_t v = 0;

	if (!name || strncmp(name, EA_REALIGN_LEFTOVER_PREFIX, plen) != 0)
		return false;
	p = name + plen;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (*p++ != '.')
		return false;
	/* Exactly what ea_realign_leftover_name() writes: 16 lower-case hex digits. */
	if (!parse_rnd(p, rnd))
		return false;
	if (ino)
		*ino = v;
	return true;
}

bool ea_realign_leftover_parse(const char *name, uint64_t *ino)
{
	return rl_leftover_split(name, ino, NULL);
}

#define BATCH_RECORD_PREFIX EA_REALIGN_LEFTOVER_PREFIX "batch."

void rl_batch_record_name(char buf[static EA_REALIGN_LEFTOVER_MAX], uint64_t rnd)
{
	snprintf(buf, EA_REALIGN_LEFTOVER_MAX, BATCH_RECORD_PREFIX "%016" PRIx64, rnd);
}

bool rl_batch_record_parse(const char *name, uint64_t *rnd)
{
	const size_t plen = strlen(BATCH_RECORD_PREFIX);

	return name && strncmp(name, BATCH_RECORD_PREFIX, plen) == 0 && parse_rnd(name + plen, rnd);
}

size_t ea_ranges_align(struct ea_range *r, size_t n, uint64_t align, uint64_t size)
{
	uint64_t limit;
	size_t out = 0;

	if (!align)
		align = 1;
	limit = (size + align - 1) / align * align;
	for (size_t i = 0; i < n; i++) {
		uint64_t s = r[i].start / align * align;
		uint64_t e = (r[i].end + align - 1) / align * align;

		if (e > limit)
			e = limit;
		if (s >= e)
			continue;
		if (out && s <= r[out - 1].end) {
			if (e > r[out - 1].end)
				r[out - 1].end = e;
			continue;
		}
		r[out++] = (struct ea_range){ s, e };
	}
	return out;
}

void ea_csum_init(struct ea_csum *c)
{
	c->h = 0;
}

/*
 * The term of the 16 bytes (two words) at offset off, a multiple of 16.
 * Their place enters through a key that is a bijection of the offset (an
 * odd multiplier), so the same bytes elsewhere add something else; the two
 * words meet in one 64x64->128-bit multiply, folded.  The first version
 * mixed every word twice (splitmix's finalizer, of the word and of its
 * offset): 0.30 ms per MiB on this 2-core machine, read twice per
 * realigned byte (the copy and its verification); this takes 0.09.
 * Resume records name the version they were summed with (realign-resume.c).
 */
static uint64_t pair_term(uint64_t a, uint64_t b, uint64_t off)
{
	uint64_t k = (off + 0x9e3779b97f4a7c15ULL) * 0xd6e8feb86659fd93ULL;
	unsigned __int128 m;

	/* Zero bytes add nothing, so holes need not be read at all. */
	if (!(a | b))
		return 0;
	m = (unsigned __int128)(a ^ k) * (b ^ (k >> 32 | k << 32) ^ 0xa0761d6478bd642fULL);
	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

uint64_t rl_csum_terms(uint64_t off, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint64_t sum = 0, w[2];
	size_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		memcpy(w, p + i, 16);
		sum += pair_term(w[0], w[1], off + i);
	}
	if (i < n) {
		w[0] = w[1] = 0;
		memcpy(w, p + i, n - i);
		sum += pair_term(w[0], w[1], off + i);
	}
	return sum;
}

void ea_csum_update(struct ea_csum *c, uint64_t off, const void *buf, size_t n)
{
	c->h += rl_csum_terms(off, buf, n);
}

uint64_t ea_csum_final(const struct ea_csum *c)
{
	return c->h;
}

static const char *const outcome_names[] = {
	[EA_REALIGN_DONE] = "done",
	[EA_REALIGN_HINT_SET] = "hint-set",
	[EA_REALIGN_WOULD] = "would-realign",
	[EA_REALIGN_SKIPPED] = "skipped",
	[EA_REALIGN_UNSUPPORTED] = "unsupported",
	[EA_REALIGN_CANCELLED] = "cancelled",
	[EA_REALIGN_FAILED] = "failed",
};

static const struct {
	const char *name, *phrase;
} skip_names[EA_SKIP_COUNT] = {
	[EA_SKIP_NONE] = { "none", "not skipped" },
	[EA_SKIP_NOT_REGULAR] = { "not-regular", "not a regular file" },
	[EA_SKIP_SYMLINK] = { "symlink", "a symbolic link" },
	[EA_SKIP_OTHER_FS] = { "other-fs", "on another filesystem" },
	[EA_SKIP_IMMUTABLE] = { "immutable", "immutable" },
	[EA_SKIP_APPEND_ONLY] = { "append-only", "append-only" },
	[EA_SKIP_NODEFRAG] = { "nodefrag", "marked nodefrag" },
	[EA_SKIP_HARDLINKS] = { "hardlinks", "hard-linked (replacing would split the links)" },
	[EA_SKIP_OPEN] = { "open", "open by another process" },
	[EA_SKIP_LEASE_BROKEN] = { "lease-broken", "opened by another process during the copy" },
	[EA_SKIP_CHANGED] = { "changed", "changed during the copy" },
	[EA_SKIP_ALREADY_ALIGNED] = { "aligned", "already aligned" },
	[EA_SKIP_NO_SPACE] = { "no-space", "not enough free space for the copy" },
	[EA_SKIP_COPY_MISALIGNED] = { "copy-misaligned",
				      "the copy came out misaligned too (no aligned free space)" },
	[EA_SKIP_TRUNCATED] = { "truncated", "truncated by another process during the copy" },
	[EA_SKIP_EXTENDED] = { "extended", "extended by another process during the copy" },
	[EA_SKIP_WRITTEN] = { "written", "written by another process during the copy" },
	[EA_SKIP_LOGICAL_ONLY] = { "logical-only", "aligned in the file only, not on the device" },
};

static const char *const swap_names[] = {
	[EA_SWAP_NONE] = "none",       [EA_SWAP_EXCHANGE_RANGE] = "exchange-range",
	[EA_SWAP_SWAPEXT] = "swapext", [EA_SWAP_MOVE_EXT] = "move-ext",
	[EA_SWAP_RENAME] = "rename",   [EA_SWAP_IN_PLACE] = "in-place",
};

static const char *const verdict_names[] = {
	[EA_VERDICT_UNKNOWN] = "unknown",
	[EA_VERDICT_ALIGNED] = "aligned",
	[EA_VERDICT_MISALIGNED] = "misaligned",
};

/* ea_realign_outcome_name(), ea_realign_swap_name(), ea_align_verdict_name() */
DEFINE_NAME_OF(ea_realign_outcome, enum ea_realign_outcome, outcome_names, "unknown")
DEFINE_NAME_OF(ea_realign_swap, enum ea_realign_swap, swap_names, "unknown")
DEFINE_NAME_OF(ea_align_verdict, enum ea_align_verdict, verdict_names, "unknown")

const char *ea_realign_skip_name(enum ea_realign_skip s)
{
	return (unsigned)s < EA_SKIP_COUNT ? skip_names[s].name : "unknown";
}

const char *ea_realign_skip_str(enum ea_realign_skip s)
{
	return (unsigned)s < EA_SKIP_COUNT ? skip_names[s].phrase : "skipped";
}
