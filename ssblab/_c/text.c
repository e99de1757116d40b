/* The state of text.h: the base64 letter-pair table and the AVX2 route, one copy per extension. */
#include "text.h"

uint16_t B64_PAIRS[4096];
int base64_avx2_ok;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_BASE64_AVX2 1

/* Base64 of raw, 24 bytes to 32 letters a step while 32 bytes are readable (W. Mula and D. Lemire's method: each
 * 3 bytes spread into four 6-bit indexes by multiplies, each index moved to its letter by a 16-entry table);
 * returns how many bytes it took. Lane 0 takes bytes 0-11 from its bytes 4-15, lane 1 bytes 12-23 from 0-11. */
__attribute__((target("avx2"))) size_t base64_avx2(unsigned char *o, const unsigned char *raw, size_t len) {
    const __m256i lanes = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    const __m256i spread = _mm256_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14,
                                            1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m256i shifts = _mm256_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                            '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0,
                                            'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                            '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
    size_t i = 0;
    for (; len - i >= 32; i += 24, o += 32) {
        __m256i in = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(raw + i)), lanes);
        in = _mm256_shuffle_epi8(in, spread);
        __m256i high = _mm256_mulhi_epu16(_mm256_and_si256(in, _mm256_set1_epi32(0x0fc0fc00)), _mm256_set1_epi32(0x04000040));
        __m256i low = _mm256_mullo_epi16(_mm256_and_si256(in, _mm256_set1_epi32(0x003f03f0)), _mm256_set1_epi32(0x01000010));
        __m256i index = _mm256_or_si256(high, low); /* 0..63 in each byte */
        __m256i row = _mm256_subs_epu8(index, _mm256_set1_epi8(51)); /* 0: a-z, 1-10: digits, 11: +, 12: / */
        row = _mm256_or_si256(row, _mm256_and_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(26), index), _mm256_set1_epi8(13)));
        _mm256_storeu_si256((__m256i *)o, _mm256_add_epi8(index, _mm256_shuffle_epi8(shifts, row)));
    }
    return i;
}
#else
size_t base64_avx2(unsigned char *o, const unsigned char *raw, size_t len) { return 0; }
#endif

void text_init(void) {
#ifdef HAVE_BASE64_AVX2
    base64_avx2_ok = __builtin_cpu_supports("avx2");
#endif
    for (int v = 0; v < 4096; v++) {
        unsigned char pair[2] = {B64[v >> 6], B64[v & 63]};
        memcpy(&B64_PAIRS[v], pair, 2);
    }
}
