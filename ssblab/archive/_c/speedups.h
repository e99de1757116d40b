/* The private header of ssblab.archive._speedups: the compiled hot loops of ssblab.archive, one unit a concern.
 *
 * The pure-Python routes give the same bytes and rows (tests compare them). Python checks what the FlatBuffers
 * hold and hands these functions plain buffers with their lengths; every read is bounds-checked, because the
 * buffers come from untrusted blobs. Failures raise ssblab.archive.errors.MalformedArchive naming what is wrong,
 * except read_block's: it reads only regular blocks and leaves the rest to the Python reader, which names the fault.
 *
 * decode.c:   decode_column, the content column (its ten FlexBuffer parts) into the block's texts (archive §6).
 * read.c:     read_block, a MessageBlock blob's fields when the blob is regular.
 * digests.c:  block_digests, each message's sha256 id, each feeding the next message's previous (§5), two blocks
 *             at a time; message_texts, each message's signed JSON once the ids are known; id_texts.
 * flatten.c:  content texts into skeletons and leaves, leaves into tokens, and the tables that intern them.
 * tokens.c:   the TOKEN dictionary: tokens repeated across blocks, its entries and its lookup table.
 * encode.c:   encode_column, a block's tokens into the content column.
 * svb.c:      StreamVByte columns both ways.
 * rows.c:     a decoded block's rows, as block_digests and message_texts take them.
 * builder.c, blob.c: the MessageBlock and Bundle blobs, laid out byte for byte as the Python builder does.
 * envelope.c, plan.c: plan_block, a block's messages split into columns in one pass.
 * module.c:   the method table and what is set up at import.
 *
 * Small helpers used by several units are static inline here; everything else is declared here and defined once.
 */
#ifndef SSBLAB_ARCHIVE_SPEEDUPS_H
#define SSBLAB_ARCHIVE_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "buf.h" /* shared with ssblab.core._speedups, found through setup.py's include_dirs */
#include "text.h"

extern PyObject *Malformed; /* ssblab.archive.errors.MalformedArchive, set by module.c at import */

#define MAX_TEXTS ((int64_t)1 << 31) /* the decoders' limit on one block's texts (Arrow's 32-bit offsets) */

/* --- small helpers ------------------------------------------------------------------------------------------- */

static inline int64_t at64(const Py_buffer *b, Py_ssize_t i) {
    int64_t v;
    memcpy(&v, (const char *)b->buf + 8 * i, 8); /* buffers may come unaligned (bytes slices) */
    return v;
}

static inline int int64_buffer(const Py_buffer *b, const char *what, Py_ssize_t *count) {
    if (b->len % 8) {
        PyErr_Format(PyExc_ValueError, "%s: not a buffer of int64", what);
        return -1;
    }
    *count = b->len / 8;
    return 0;
}

/* Pieces: a byte buffer and n + 1 int64 offsets into it (ssblab.archive.pieces.Pieces). */
typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
    const Py_buffer *offsets;
    Py_ssize_t n;
} Pieces;

static inline int pieces_of(Pieces *p, const Py_buffer *data, const Py_buffer *offsets, const char *what) {
    Py_ssize_t count;
    if (int64_buffer(offsets, what, &count) < 0) return -1;
    if (count < 1) {
        PyErr_Format(PyExc_ValueError, "%s: no offsets", what);
        return -1;
    }
    p->data = data->buf;
    p->size = data->len;
    p->offsets = offsets;
    p->n = count - 1;
    return 0;
}

/* Piece k as (start, length); -1 when its offsets do not lie inside the data. */
static inline int piece(const Pieces *p, Py_ssize_t k, const unsigned char **start, int64_t *len) {
    int64_t a = at64(p->offsets, k), b = at64(p->offsets, k + 1);
    if (a < 0 || b < a || b > p->size) return -1;
    *start = p->data + a;
    *len = b - a;
    return 0;
}

static inline void put_base64(Buf *b, const unsigned char *raw, size_t len) { /* after reserve of 4 * ceil(len / 3) */
    base64_into(b->data + b->len, raw, len);
    b->len += 4 * ((len + 2) / 3);
}

static const char DIGIT_PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* The length of value in decimal, with its sign: from its bit length (1233 / 4096 is just above log10(2)), then
 * one comparison. */
static inline size_t int_len(int64_t value) {
    static const uint64_t POWERS[20] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
                                        10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
                                        100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
                                        100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};
    uint64_t v = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    size_t digits = (size_t)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
    return (value < 0) + (v ? digits + (v >= POWERS[digits]) : 1);
}

/* value in decimal at o: int_len(value) bytes, two digits a step. */
static inline void write_int(unsigned char *o, int64_t value, size_t len) {
    uint64_t v = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    if (value < 0) *o++ = '-', len--;
    for (; len >= 2; v /= 100) len -= 2, memcpy(o + len, DIGIT_PAIRS + 2 * (v % 100), 2);
    if (len) *o = '0' + (unsigned char)v;
}

static inline void put_int(Buf *b, int64_t value) { /* after reserve of 20 */
    size_t len = int_len(value);
    write_int(b->data + b->len, value, len);
    b->len += len;
}

/* Copies len <= 64 bytes with fixed-size moves, overlapping: most tokens and skeleton parts are short, and a memcpy
 * of a variable length is a call or a slow string move. */
static inline void copy_short(unsigned char *to, const unsigned char *p, int64_t len) {
    if (len > 32) {
        memcpy(to, p, 32);
        memcpy(to + len - 32, p + len - 32, 32);
    } else if (len > 16) {
        memcpy(to, p, 16);
        memcpy(to + len - 16, p + len - 16, 16);
    } else if (len >= 8) {
        memcpy(to, p, 8);
        memcpy(to + len - 8, p + len - 8, 8);
    } else if (len >= 4) {
        memcpy(to, p, 4);
        memcpy(to + len - 4, p + len - 4, 4);
    } else if (len > 0) {
        to[0] = p[0], to[len / 2] = p[len / 2], to[len - 1] = p[len - 1];
    }
}

enum { LITERAL, MSG_REF, FEED_REF, BLOB_REF, BASE64, SHARED };
static const char *const SIGILS[] = {"", "%", "@", "&"};
static const char *const SUFFIXES[] = {"", ".sha256", ".ed25519", ".sha256"};

/* Character classes of the text.LEAF and text.TOKEN expressions. */

static inline int is_b64(unsigned c) { return B64_VALUE[c] >= 0; }
static inline int is_alpha(unsigned c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static inline int in_number(unsigned c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

/* Byte tests a word at a time: each gives the high bit of every byte of x that passes, exactly (no carry crosses a
 * byte). Words are loaded little-endian, the first byte lowest, as everything in this file assumes. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t load_word(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

static inline uint64_t bytes_between(uint64_t x, unsigned lo, unsigned hi) { /* lo < byte < hi; lo, hi <= 128 */
    uint64_t low7 = x & ~HIGHS;
    return (ONES * (127 + hi) - low7) & ~x & (low7 + ONES * (127 - lo)) & HIGHS;
}

static inline uint64_t bytes_equal(uint64_t x, unsigned char c) {
    uint64_t y = x ^ (ONES * c);
    return ~(((y & ~HIGHS) + ~HIGHS) | y | ~HIGHS);
}

static inline uint64_t alpha_bytes(uint64_t x) { return bytes_between(x | ONES * 0x20, 'a' - 1, 'z' + 1); }
static inline uint64_t digit_bytes(uint64_t x) { return bytes_between(x, '0' - 1, '9' + 1); }
static inline uint64_t space_bytes(uint64_t x) { return bytes_equal(x, ' '); }
static inline uint64_t high_bytes(uint64_t x) { return x & HIGHS; }
static inline uint64_t b64_bytes(uint64_t x) { /* [A-Za-z0-9+/]: '/' sits just below the digits */
    return alpha_bytes(x) | bytes_between(x, '/' - 1, '9' + 1) | bytes_equal(x, '+');
}

/* Distinct texts (a block's tokens, or its skeletons) by their bytes, in open addressing. A slot holds a text's
 * first 8 bytes (zero-padded) and length beside its index + 1 (0: an empty slot), so a short token (most are) is
 * found by reading one slot, and a longer one compares the rest of its text. The distinct texts are kept end to
 * end, padded, with their hashes (a table that grows places them again without hashing them again). */
typedef struct {
    uint64_t head;
    uint32_t len, index;
} Slot;

typedef struct {
    uint64_t hash;     /* hash_bytes of its text */
    size_t start, len; /* in Intern.text */
} Interned;

typedef struct {
    Slot *slots;
    size_t mask;
    Interned *items;
    size_t n, cap;
    Buf text;
    uint32_t single[256]; /* the index + 1 of each one-byte text met (a quarter of the tokens): no hash, no probe */
} Intern;

static inline uint64_t first_word(const unsigned char *p, size_t len) { /* p has 8 readable bytes */
    uint64_t word = load_word(p);
    return len >= 8 ? word : word & ((1ULL << (8 * len)) - 1);
}

/* Whether a and b agree from byte 8 to byte len (len > 8), compared a word at a time, the last word overlapping the
 * one before: inline, because a call to memcmp for these few bytes costs more than the compare. */
static inline int same_tail(const unsigned char *a, const unsigned char *b, size_t len) {
    for (size_t k = 8; k + 8 < len; k += 8)
        if (load_word(a + k) != load_word(b + k)) return 0;
    return load_word(a + len - 8) == load_word(b + len - 8);
}

static inline uint64_t rotate(uint64_t x, int bits) { return x << bits | x >> (64 - bits); }

#define MIX 0xFF51AFD7ED558CCDULL

/* A hash of p[:len] (p has 8 readable bytes past it). A short text (most tokens) takes one multiplication, whose
 * high bits are folded down into the low bits that index the tables; long texts (skeletons, boxes) go through four
 * lanes, whose multiplications do not wait on each other. */
static inline uint64_t hash_bytes(const unsigned char *p, size_t len) {
    if (len <= 8) {
        uint64_t h = (first_word(p, len) ^ (uint64_t)len << 59) * 0x9E3779B97F4A7C15ULL;
        return h ^ h >> 29;
    }
    uint64_t h = (0x9E3779B97F4A7C15ULL ^ len) * MIX;
    size_t k = 0;
    if (len >= 32) {
        uint64_t lane[4] = {h, h ^ 0x2545F4914F6CDD1DULL, h ^ 0x94D049BB133111EBULL, h ^ 0xBF58476D1CE4E5B9ULL};
        for (; k + 32 <= len; k += 32)
            for (int j = 0; j < 4; j++) {
                lane[j] = (lane[j] ^ load_word(p + k + 8 * j)) * MIX;
                lane[j] ^= lane[j] >> 32;
            }
        h = lane[0] ^ rotate(lane[1], 16) ^ rotate(lane[2], 32) ^ rotate(lane[3], 48);
    }
    for (; k + 8 <= len; k += 8) {
        h = (h ^ load_word(p + k)) * MIX;
        h ^= h >> 32;
    }
    h ^= first_word(p + k, len - k); /* then murmur3's finalizer: every input bit reaches the low bits */
    h = (h ^ (h >> 33)) * MIX;
    h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
}

static inline void place(Slot *slots, size_t mask, uint64_t h, uint64_t head, size_t len, size_t k) {
    size_t at = h & mask;
    while (slots[at].index) at = (at + 1) & mask;
    slots[at] = (Slot){head, (uint32_t)len, (uint32_t)(k + 1)};
}

/* --- what each unit gives the others --------------------------------------------------------------------------- */

/* flatten.c */
void flatten_init(void);
size_t string_end(const unsigned char *s, size_t n, size_t i);
int flatten_one(const unsigned char *s, size_t n, int keys_as_data, Buf *skel, Buf *leaves);
int pad(Buf *b);
int64_t intern(Intern *t, const unsigned char *p, size_t len);
void intern_free(Intern *t);
PyObject *interned_bytes(const Intern *t, size_t k);
int tokenize(Intern *t, const Buf *leaves, Buf *stream);

/* tokens.c */
int64_t find_shared(const Py_buffer *slots, const Pieces *shared, const unsigned char *tok, size_t len, uint64_t h);
int entry_of(const unsigned char *tok, size_t len, unsigned char *raw, const unsigned char **payload, size_t *size);

/* svb.c */
int64_t *svb1234(PyObject *codes, PyObject *values, Py_ssize_t *count, const char *where);
int svb_encode(const uint64_t *values, Py_ssize_t n, int wide, PyObject **codes, PyObject **data);
Py_ssize_t svb_into(const uint64_t *values, Py_ssize_t n, int wide, unsigned char *codes, unsigned char *data);

/* rows.c: a block's rows (what every message's text is made of) */
enum { F_PREVIOUS, F_SEQUENCE, F_TIMESTAMP, F_CONTENT, F_SIGNATURE, N_FIELDS };

typedef struct {
    const char *text; /* a constant part, or NULL for a field */
    Py_ssize_t len;
    int field;
} Part;

/* A decoded block's columns, as rebuild.block_args gives them: what every message's text is made of. */
typedef struct {
    Py_buffer contents, offsets, plain, layout_of, timestamps, signatures;
    int held; /* how many of the buffers above are held */
    Py_ssize_t n;
    long long sequence_base;
    const unsigned char *previous; /* the first message's previous id, or NULL for null */
    Part **layouts;
    Py_ssize_t n_layouts;
    PyObject *where; /* names the block in errors */
} Rows;


int rows_of(PyObject *args, Rows *r);
void release_rows(Rows *r);

/* builder.c: a FlatBuffer built back to front (see there) */
typedef struct {
    unsigned char *data;
    size_t cap, len, minalign;
    size_t object_end, fields[6]; /* the open table: where it started, and where each field is (0: absent) */
    int n_fields, failed;
    size_t *vtables; /* where each vtable written is */
    size_t n_vtables, vtables_cap;
} Builder;

typedef struct { /* a dictionary chain head, as flat.DictRef */
    uint64_t kind, size;
    const unsigned char *blob_id;
} Head;

void b_prep(Builder *b, size_t size, size_t additional);
void b_place(Builder *b, uint64_t value, size_t width);
void b_uoffset(Builder *b, size_t target);
size_t b_bytes(Builder *b, const void *p, size_t n);
size_t b_hash(Builder *b, const unsigned char digest[32]);
void b_start(Builder *b, int n_fields);
void b_field(Builder *b, int i);
void b_add_scalar(Builder *b, int i, uint64_t value, size_t width);
void b_add_offset(Builder *b, int i, size_t target);
size_t b_end(Builder *b);
PyObject *b_blob(Builder *b, int data_type, size_t data);
size_t b_svb(Builder *b, const uint64_t *values, size_t n, int wide, unsigned char *scratch);
size_t b_runs(Builder *b, const Py_buffer *ids, size_t n, uint64_t *runs, uint64_t *lengths, unsigned char *scratch);
size_t b_sketch(Builder *b, uint64_t length, uint64_t base, uint64_t first, uint64_t last);
size_t b_dict_set(Builder *b, const Head heads[6]);

/* envelope.c: one message's envelope split off its content */
enum { K_PREVIOUS, K_AUTHOR, K_SEQUENCE, K_TIMESTAMP, K_HASH, K_CONTENT, K_SIGNATURE };
extern PyObject *ENVELOPE_KEYS[7], *TYPE_KEY; /* interned by envelope_init */

typedef struct { /* what the next message's envelope must say */
    const char *previous; /* the previous id, NULL for none */
    Py_ssize_t previous_len;
    const char *author;
    Py_ssize_t author_len;
    char sequence[24];
    size_t sequence_len;
} Expect;

typedef struct { /* one message split: the content text is s[start:end] (all of it when verbatim) */
    int order[7];
    int64_t stamp;
    unsigned char raw[66];
    size_t start, end;
} Split;

typedef struct {
    Buf head, tail, numbers[2], previous;
} Frames;

int envelope_init(void);
int split_text(const unsigned char *s, size_t n, const Expect *ex, Split *out);
int type_text(const unsigned char *c, size_t n, const unsigned char **type, size_t *len);
int split_value(PyObject *value, const unsigned char *bytes, Py_ssize_t size, PyObject *author, int64_t sequence,
                const Expect *ex, Frames *f, Split *out);
PyObject *type_of(PyObject *value);

/* digests.c */
void digests_init(void);

/* --- the module's functions (module.c's method table) ---------------------------------------------------------- */

PyObject *decode_column(PyObject *self, PyObject *args);
PyObject *svb_decode(PyObject *self, PyObject *args);
PyObject *read_block(PyObject *self, PyObject *arg);
PyObject *id_texts(PyObject *self, PyObject *arg);
PyObject *block_digests(PyObject *self, PyObject *arg);
PyObject *message_texts(PyObject *self, PyObject *args);
PyObject *sha256_py(PyObject *self, PyObject *args);
PyObject *sha256_streams(PyObject *self, PyObject *args);
PyObject *indent(PyObject *self, PyObject *args);
PyObject *store_skeleton(PyObject *self, PyObject *arg);
PyObject *repeated_tokens(PyObject *self, PyObject *args);
PyObject *token_slots(PyObject *self, PyObject *args);
PyObject *shared_entries(PyObject *self, PyObject *tokens);
PyObject *shared_tokens(PyObject *self, PyObject *entries);
PyObject *encode_column(PyObject *self, PyObject *args);
PyObject *svb_encode_py(PyObject *self, PyObject *args);
PyObject *block_blob(PyObject *self, PyObject *args);
PyObject *bundle_blob(PyObject *self, PyObject *args);
PyObject *plan_block(PyObject *self, PyObject *args);

#endif
