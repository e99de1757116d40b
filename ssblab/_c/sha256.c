/* The block functions of sha256.h (portable, and SHA-NI on x86-64) and the route sha256_init chooses. */
#include "sha256.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI 1
#endif

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))

void blocks_portable(uint32_t state[8], const unsigned char *p, size_t count) {
    for (; count--; p += 64) {
        uint32_t w[64], v[8];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ w[i - 15] >> 3;
            uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ w[i - 2] >> 10;
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        memcpy(v, state, sizeof v);
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = v[7] + (ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) +
                          K256[i] + w[i];
            uint32_t t2 = (ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
            memmove(v + 1, v, 7 * sizeof *v);
            v[4] += t1;
            v[0] = t1 + t2;
        }
        for (int i = 0; i < 8; i++) state[i] += v[i];
    }
}

#ifdef HAVE_SHA_NI
#define SHA_NI __attribute__((target("sha,sse4.1,ssse3")))
#define SHA_NI_INLINE SHA_NI __attribute__((always_inline)) static inline

/* One hash being computed: the state as ABEF and CDGH lanes (what sha256rnds2 takes), the state at the start of
 * the block, and the last 16 schedule words. */
typedef struct {
    __m128i abef, cdgh, start_abef, start_cdgh, m[4];
} ShaLane;

SHA_NI_INLINE void lane_load(ShaLane *l, const uint32_t state[8]) {
    __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(state + 4)), 0x1B);
    l->abef = _mm_alignr_epi8(dcba, hgfe, 8);
    l->cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);
}

SHA_NI_INLINE void lane_store(const ShaLane *l, uint32_t state[8]) {
    __m128i feba = _mm_shuffle_epi32(l->abef, 0x1B), dchg = _mm_shuffle_epi32(l->cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)state, _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

/* Rounds 4k to 4k + 3 of the 64-byte block at p: each step adds 4 schedule words. */
SHA_NI_INLINE void lane_rounds(ShaLane *l, const unsigned char *p, int k) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); /* big-endian words */
    __m128i *w = &l->m[k % 4];
    if (k == 0) l->start_abef = l->abef, l->start_cdgh = l->cdgh;
    if (k < 4) {
        *w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * k)), swap);
    } else {
        __m128i next = l->m[(k + 1) % 4], third = l->m[(k + 2) % 4], last = l->m[(k + 3) % 4];
        *w = _mm_sha256msg1_epu32(*w, next);
        *w = _mm_add_epi32(*w, _mm_alignr_epi8(last, third, 4));
        *w = _mm_sha256msg2_epu32(*w, last);
    }
    __m128i wk = _mm_add_epi32(*w, _mm_loadu_si128((const __m128i *)(K256 + 4 * k)));
    l->cdgh = _mm_sha256rnds2_epu32(l->cdgh, l->abef, wk);
    l->abef = _mm_sha256rnds2_epu32(l->abef, l->cdgh, _mm_shuffle_epi32(wk, 0x0E));
    if (k == 15) l->abef = _mm_add_epi32(l->abef, l->start_abef), l->cdgh = _mm_add_epi32(l->cdgh, l->start_cdgh);
}

SHA_NI static void blocks_sha_ni(uint32_t state[8], const unsigned char *p, size_t count) {
    ShaLane lane;
    lane_load(&lane, state);
    for (; count--; p += 64)
        for (int k = 0; k < 16; k++) lane_rounds(&lane, p, k);
    lane_store(&lane, state);
}

/* Two hashes a block each, their rounds interleaved: one hash waits on the latency of each round, two fill it. */
SHA_NI static void pair_sha_ni(uint32_t a[8], const unsigned char *pa, uint32_t b[8], const unsigned char *pb) {
    ShaLane la, lb;
    lane_load(&la, a);
    lane_load(&lb, b);
    for (int k = 0; k < 16; k++) {
        lane_rounds(&la, pa, k);
        lane_rounds(&lb, pb, k);
    }
    lane_store(&la, a);
    lane_store(&lb, b);
}
#endif

void pair_portable(uint32_t a[8], const unsigned char *pa, uint32_t b[8], const unsigned char *pb) {
    blocks_portable(a, pa, 1);
    blocks_portable(b, pb, 1);
}

void (*sha256_blocks)(uint32_t state[8], const unsigned char *p, size_t count) = blocks_portable;
void (*sha256_pair)(uint32_t a[8], const unsigned char *pa, uint32_t b[8], const unsigned char *pb) = pair_portable;

void sha256(const unsigned char *data, size_t len, unsigned char digest[32]) {
    uint32_t state[8];
    memcpy(state, SHA256_IV, sizeof state);
    sha256_blocks(state, data, len / 64);
    unsigned char tail[128] = {0};
    size_t rest = len % 64, padded = rest < 56 ? 64 : 128;
    memcpy(tail, data + len - rest, rest);
    tail[rest] = 0x80;
    for (int i = 0; i < 8; i++) tail[padded - 1 - i] = (unsigned char)((uint64_t)len * 8 >> (8 * i));
    sha256_blocks(state, tail, padded / 64);
    sha256_digest(state, digest);
}

void sha256_init(void) {
#ifdef HAVE_SHA_NI
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) && (c & bit_SSSE3) && __get_cpuid_count(7, 0, &a, &b, &c, &d)
        && (b & bit_SHA))
        sha256_blocks = blocks_sha_ni, sha256_pair = pair_sha_ni;
#endif
}
