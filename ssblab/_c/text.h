/* Byte-level text helpers shared by the compiled fast paths of ssblab.core and ssblab.archive: ASCII and strict
 * UTF-8 tests, standard base64 (canonical decoding, encoding) and Node's "binary" string of UTF-8.
 *
 * The small helpers are inline here; text.c holds the tables filled at import (text_init), once per extension
 * however many of its units include this file.
 */
#ifndef SSBLAB_TEXT_H
#define SSBLAB_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

static inline int ascii_word(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, 8);
    return !(word & 0x8080808080808080ULL);
}

/* The length of the ASCII run at the start of p: len when it is all ASCII. Texts are mostly ASCII, so x86-64
 * reads 64 bytes a step (SSE2 is part of x86-64). */
static inline size_t ascii_run(const unsigned char *p, size_t len) {
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 64 <= len; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32)), d = _mm_loadu_si128((const __m128i *)(p + i + 48));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) break;
    }
    for (; i + 16 <= len; i += 16) {
        int high = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(p + i)));
        if (high) return i + (size_t)__builtin_ctz((unsigned)high);
    }
#endif
    for (; i + 8 <= len && ascii_word(p + i); i += 8) {
    }
    while (i < len && p[i] < 0x80) i++;
    return i;
}

static inline int is_ascii(const unsigned char *p, size_t len) { return ascii_run(p, len) == len; }

/* The length of the valid UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF) at s, or 0. */
static inline size_t utf8_sequence(const unsigned char *s, const unsigned char *end) {
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return 0;
    if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of each base64 letter; -1 for every other byte. */
static const int8_t B64_VALUE[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
    -1,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, -1,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

/* Decodes canonical standard base64 (padded, zero bits under the padding) into raw (len * 3 / 4 bytes; may be
 * NULL to only check); the byte count, or -1. */
static inline ssize_t canonical_b64(const unsigned char *text, size_t len, unsigned char *raw) {
    if (len % 4) return -1;
    size_t pad = len && text[len - 1] == '=' ? (len > 1 && text[len - 2] == '=' ? 2 : 1) : 0;
    size_t whole = (len - pad) / 4 * 4, out = 0; /* letters in groups of four: three bytes each */
    for (size_t k = 0; k < whole; k += 4, out += 3) {
        int a = B64_VALUE[text[k]], b = B64_VALUE[text[k + 1]], c = B64_VALUE[text[k + 2]], d = B64_VALUE[text[k + 3]];
        if ((a | b | c | d) < 0) return -1;
        uint32_t acc = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        if (raw) raw[out] = acc >> 16, raw[out + 1] = acc >> 8 & 0xFF, raw[out + 2] = acc & 0xFF;
    }
    uint32_t acc = 0;
    for (size_t k = whole; k < len - pad; k++) {
        int v = B64_VALUE[text[k]];
        if (v < 0) return -1;
        acc = acc << 6 | (uint32_t)v;
    }
    if (pad == 2) { /* 2 letters: 12 bits, the low 4 unused and zero */
        if (acc & 0xF) return -1;
        if (raw) raw[out] = acc >> 4;
        out += 1;
    } else if (pad == 1) { /* 3 letters: 18 bits, the low 2 unused and zero */
        if (acc & 0x3) return -1;
        if (raw) raw[out] = acc >> 10, raw[out + 1] = acc >> 2 & 0xFF;
        out += 2;
    }
    return (ssize_t)out;
}

extern uint16_t B64_PAIRS[4096]; /* the two letters of each 12-bit value, filled by text_init */
extern int base64_avx2_ok;       /* set by text_init where the CPU has AVX2 */
size_t base64_avx2(unsigned char *o, const unsigned char *raw, size_t len);
void text_init(void); /* fills the tables that are not constants; call once, when the module loads */

static inline void base64_into(unsigned char *o, const unsigned char *raw, size_t len) { /* 4 * ceil(len / 3) letters */
    size_t i = 0;
    if (base64_avx2_ok && len >= 32) { /* never set where the CPU has no AVX2 */
        i = base64_avx2(o, raw, len);
        o += i / 3 * 4;
    }
    for (; i + 3 <= len; i += 3, o += 4) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
        memcpy(o, &B64_PAIRS[v >> 12], 2);
        memcpy(o + 2, &B64_PAIRS[v & 0xFFF], 2);
    }
    if (i < len) {
        uint32_t v = (uint32_t)raw[i] << 16 | (i + 1 < len ? (uint32_t)raw[i + 1] << 8 : 0);
        o[0] = B64[v >> 18], o[1] = B64[v >> 12 & 63];
        o[2] = i + 1 < len ? B64[v >> 6 & 63] : '=', o[3] = '=';
    }
}

/* Node's Buffer.from(text, "binary") of UTF-8 text: the low byte of each UTF-16 unit (what a message id hashes).
 * Lone surrogates in "surrogatepass" three-byte form are one unit each. Writes at most len bytes to o; returns
 * how many, or -1 with *bad_at set where the text is not UTF-8. */
static inline ssize_t binary_bytes(const unsigned char *u, size_t len, unsigned char *o, size_t *bad_at) {
    unsigned char *start = o;
    for (size_t i = 0; i < len;) {
        size_t run = ascii_run(u + i, len - i);
        if (run) {
            memcpy(o, u + i, run);
            o += run, i += run;
            continue;
        }
        unsigned c = u[i];
        size_t extra = c < 0xC2 ? 9 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : c < 0xF5 ? 3 : 9;
        if (extra == 9 || extra >= len - i) { /* a stray, overlong-only or cut character */
            *bad_at = i;
            return -1;
        }
        uint32_t point = c & (0x3F >> extra);
        for (size_t k = 1; k <= extra; k++) {
            if ((u[i + k] & 0xC0) != 0x80) {
                *bad_at = i;
                return -1;
            }
            point = point << 6 | (u[i + k] & 0x3F);
        }
        if (extra == 3) { /* a surrogate pair: the low bytes of both halves */
            point -= 0x10000;
            *o++ = (point >> 10) & 0xFF;
        }
        *o++ = point & 0xFF;
        i += extra + 1;
    }
    return o - start;
}

#endif
