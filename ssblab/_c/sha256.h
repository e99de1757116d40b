/* SHA-256 (FIPS 180-4) for the compiled fast paths of ssblab.core and ssblab.archive.
 *
 * Here rather than through hashlib because a call per message costs as much as hashing it. x86-64 CPUs with
 * the SHA extensions take the sha256rnds2 route (chosen once by sha256_init); others the portable one. The block
 * functions and the route chosen live in sha256.c (one copy per extension); the streaming helpers are inline.
 */
#ifndef SSBLAB_SHA256_H
#define SSBLAB_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

void blocks_portable(uint32_t state[8], const unsigned char *p, size_t count);
void pair_portable(uint32_t a[8], const unsigned char *pa, uint32_t b[8], const unsigned char *pb);
/* count 64-byte blocks of one hash, and one block of each of two independent hashes (set by sha256_init) */
extern void (*sha256_blocks)(uint32_t state[8], const unsigned char *p, size_t count);
extern void (*sha256_pair)(uint32_t a[8], const unsigned char *pa, uint32_t b[8], const unsigned char *pb);
void sha256(const unsigned char *data, size_t len, unsigned char digest[32]);
void sha256_init(void); /* chooses the SHA extensions' route where the CPU has them; call once, at import */

static const uint32_t SHA256_IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static inline void sha256_digest(const uint32_t state[8], unsigned char digest[32]) {
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) digest[4 * i + j] = (unsigned char)(state[i] >> (24 - 8 * j));
}


/* A message given as parts (spans of memory read in turn), hashed a block at a time: a caller can then advance two
 * messages side by side with sha256_pair, without first copying either into one buffer. A block that lies inside
 * one part is read where it is; only blocks across parts, and the padding, are assembled. */
typedef struct {
    const unsigned char *p;
    size_t len;
} Sha256Part;

typedef struct {
    uint32_t state[8];
    const Sha256Part *parts;
    size_t n_parts, at, off; /* the part being read, and how far into it */
    uint64_t bits;           /* the message's length in bits */
    int stage;               /* 0: message bytes left; 1: only the length block left; 2: every block given */
    unsigned char block[64];
} Sha256Stream;

static inline void sha256_stream_start(Sha256Stream *s, const Sha256Part *parts, size_t n_parts) {
    memcpy(s->state, SHA256_IV, sizeof s->state);
    s->parts = parts, s->n_parts = n_parts, s->at = s->off = 0, s->stage = 0;
    uint64_t len = 0;
    for (size_t k = 0; k < n_parts; k++) len += parts[k].len;
    s->bits = 8 * len;
}

/* The next 64-byte block of the padded message, while s->stage < 2. */
static inline const unsigned char *sha256_stream_next(Sha256Stream *s) {
    size_t fill = 0;
    if (s->stage == 0) {
        for (; s->at < s->n_parts; s->at++, s->off = 0) {
            const Sha256Part *part = &s->parts[s->at];
            size_t left = part->len - s->off;
            if (!fill && left >= 64) {
                const unsigned char *block = part->p + s->off;
                s->off += 64;
                if (s->off == part->len) s->at++, s->off = 0;
                return block;
            }
            size_t take = left < 64 - fill ? left : 64 - fill;
            if (take) memcpy(s->block + fill, part->p + s->off, take);
            fill += take;
            if (fill == 64) {
                s->off += take;
                if (s->off == part->len) s->at++, s->off = 0;
                return s->block;
            }
        }
        s->block[fill++] = 0x80;
        s->stage = 1;
        if (fill > 56) {
            memset(s->block + fill, 0, 64 - fill);
            return s->block;
        }
    }
    memset(s->block + fill, 0, 56 - fill);
    for (int i = 0; i < 8; i++) s->block[63 - i] = (unsigned char)(s->bits >> (8 * i));
    s->stage = 2;
    return s->block;
}

/* Each of two hashes (either may be NULL or finished) advanced by one block: side by side while both go on. */
static inline void sha256_advance(Sha256Stream *a, Sha256Stream *b) {
    int go_a = a && a->stage < 2, go_b = b && b->stage < 2;
    if (go_a && go_b)
        sha256_pair(a->state, sha256_stream_next(a), b->state, sha256_stream_next(b));
    else if (go_a || go_b)
        sha256_blocks(go_a ? a->state : b->state, sha256_stream_next(go_a ? a : b), 1);
}


#endif
