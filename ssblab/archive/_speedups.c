/* Compiled hot loops of ssblab.archive; the pure-Python routes give the same bytes and rows (tests compare them).
 *
 * Python checks what the FlatBuffers hold and hands these functions plain buffers with their lengths; every read
 * here is bounds-checked, because the buffers come from untrusted blobs. Failures raise
 * ssblab.archive.errors.MalformedArchive naming what is wrong, except read_block's: it reads only regular blocks
 * and leaves the rest to the Python reader, which names the fault.
 *
 * read_block:    a MessageBlock blob's fields, when the blob is regular (the Python reader reports anything else).
 * decode_column: the content column (its ten FlexBuffer parts) into the block's texts (docs/archive-format.md §6).
 * block_digests: each message's sha256 id, each id feeding the next message's previous (§5); two blocks at a time.
 * message_texts: each message's signed JSON, once its block's ids are known.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "../core/_sha256.h" /* shared with ssblab.core._speedups */
#include "../core/_text.h"

static PyObject *Malformed; /* ssblab.archive.errors.MalformedArchive */

#define MAX_TEXTS ((int64_t)1 << 31) /* the decoders' limit on one block's texts (Arrow's 32-bit offsets) */

/* --- small helpers ------------------------------------------------------------------------------------------- */

static inline int64_t at64(const Py_buffer *b, Py_ssize_t i) {
    int64_t v;
    memcpy(&v, (const char *)b->buf + 8 * i, 8); /* buffers may come unaligned (bytes slices) */
    return v;
}

static int int64_buffer(const Py_buffer *b, const char *what, Py_ssize_t *count) {
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

static int pieces_of(Pieces *p, const Py_buffer *data, const Py_buffer *offsets, const char *what) {
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

/* A growing byte buffer (PyMem). */
typedef struct {
    unsigned char *data;
    size_t len, cap;
} Buf;

static int reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    unsigned char *grown = PyMem_Realloc(b->data, cap);
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    return 0;
}

static inline void put(Buf *b, const void *p, size_t len) { /* after reserve */
    if (!len) return; /* an empty Buf has no data pointer yet */
    memcpy(b->data + b->len, p, len);
    b->len += len;
}

static int put_bytes(Buf *b, const void *p, size_t len) {
    if (reserve(b, len) < 0) return -1;
    put(b, p, len);
    return 0;
}

static void put_base64(Buf *b, const unsigned char *raw, size_t len) { /* after reserve of 4 * ceil(len / 3) */
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

static void put_int(Buf *b, int64_t value) { /* after reserve of 20 */
    size_t len = int_len(value);
    write_int(b->data + b->len, value, len);
    b->len += len;
}

/* id_texts(digests) -> "%<base64>.sha256" of each 32-byte digest, 52 bytes each, end to end. */
static PyObject *id_texts(PyObject *self, PyObject *arg) {
    Py_buffer digests;
    if (PyObject_GetBuffer(arg, &digests, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t n = digests.len / 32;
    PyObject *out = digests.len % 32 ? NULL : PyBytes_FromStringAndSize(NULL, 52 * n);
    if (digests.len % 32) PyErr_SetString(PyExc_ValueError, "id_texts: not 32-byte digests");
    for (Py_ssize_t i = 0; out && i < n; i++) {
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out) + 52 * i;
        o[0] = '%';
        base64_into(o + 1, (const unsigned char *)digests.buf + 32 * i, 32);
        memcpy(o + 45, ".sha256", 7);
    }
    PyBuffer_Release(&digests);
    return out;
}

/* --- decode_column ------------------------------------------------------------------------------------------- */

/* A canonical StreamVByte column (docs/archive-format.md §4; widths 1234, or 1248 when wide) as a new array of
 * *count values, or NULL with an error naming where. */
static uint64_t *svb_values(const unsigned char *codes, Py_ssize_t n_codes, const unsigned char *values,
                            Py_ssize_t n_values, int wide, Py_ssize_t *count, const char *where) {
    static const int WIDTHS[2][4] = {{1, 2, 3, 4}, {1, 2, 4, 8}};
    const int *widths = WIDTHS[wide != 0];
    const char *name = wide ? "1248" : "1234";
    Py_ssize_t used = 0, k = 0;
#define SLOT(j) (codes[(j) / 4] >> 2 * ((j) % 4) & 3)
    for (; used < n_values && k < 4 * n_codes; k++) used += widths[SLOT(k)];
    if (used != n_values) {
        PyErr_Format(Malformed, "%s: StreamVByte%s codes and values disagree in length", where, name);
        return NULL;
    }
    int padded = (k + 3) / 4 != n_codes;
    for (Py_ssize_t j = k; j < 4 * n_codes && !padded; j++) padded = SLOT(j) != 0;
    if (padded) {
        PyErr_Format(Malformed, "%s: StreamVByte%s codes are not canonical (padding or count)", where, name);
        return NULL;
    }
    uint64_t *out = PyMem_Malloc((k ? k : 1) * sizeof(uint64_t));
    if (!out) return (uint64_t *)PyErr_NoMemory();
    const unsigned char *v = values;
    for (Py_ssize_t j = 0; j < k; j++) {
        int code = SLOT(j);
        uint64_t value = 0;
        for (int b = 0; b < widths[code]; b++) value |= (uint64_t)*v++ << 8 * b;
        if ((value >> 8 != 0) + (value >> 16 != 0) + (value >> (wide ? 32 : 24) != 0) != code) {
            PyMem_Free(out);
            PyErr_Format(Malformed, "%s: StreamVByte%s value stored wider than needed (not canonical)", where, name);
            return NULL;
        }
        out[j] = value;
    }
#undef SLOT
    *count = k;
    return out;
}

static int64_t *svb1234(PyObject *codes, PyObject *values, Py_ssize_t *count, const char *where) {
    return (int64_t *)svb_values((const unsigned char *)PyBytes_AS_STRING(codes), PyBytes_GET_SIZE(codes),
                                 (const unsigned char *)PyBytes_AS_STRING(values), PyBytes_GET_SIZE(values), 0,
                                 count, where); /* 1234 values fit int64 */
}

/* svb_decode(codes, values, wide, where) -> the values as uint64, end to end. */
static PyObject *svb_decode(PyObject *self, PyObject *args) {
    Py_buffer codes, values;
    int wide;
    const char *where;
    if (!PyArg_ParseTuple(args, "y*y*ps", &codes, &values, &wide, &where)) return NULL;
    Py_ssize_t count;
    uint64_t *out = svb_values(codes.buf, codes.len, values.buf, values.len, wide, &count, where);
    PyObject *result = out ? PyBytes_FromStringAndSize((const char *)out, 8 * count) : NULL;
    PyMem_Free(out);
    PyBuffer_Release(&codes);
    PyBuffer_Release(&values);
    return result;
}

typedef struct {
    const unsigned char *codes;
    Py_ssize_t len, pos;
    int s;
    int64_t bases[4];
} Dense;

/* The next rank of an (s,c)-dense stream (docs/archive-format.md §6.3); -1 with an error set when malformed. */
static inline int64_t next_rank(Dense *d) {
    int64_t digits = 0;
    int continuers = 0;
    for (;;) {
        if (d->pos >= d->len) {
            PyErr_SetString(Malformed, "content tokens: the token stream ends inside a codeword");
            return -1;
        }
        int byte = d->codes[d->pos++];
        if (byte < d->s) return d->bases[continuers] + digits * d->s + byte;
        if (++continuers == 4) {
            PyErr_SetString(Malformed, "content tokens: a codeword longer than 4 bytes");
            return -1;
        }
        digits = digits * (256 - d->s) + (byte - d->s);
    }
}

/* A token's text; one of 16 bytes or fewer (most) is also held inline, so writing it reads no other memory. */
typedef struct {
    unsigned char inline_text[16];
    const unsigned char *p;
    int64_t len;
} Slice;

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

static inline Slice slice_of(const unsigned char *p, int64_t len) {
    Slice s = {.p = p, .len = len};
    if (len <= 16) copy_short(s.inline_text, p, len);
    return s;
}

enum { LITERAL, MSG_REF, FEED_REF, BLOB_REF, BASE64, SHARED };
static const char *const SIGILS[] = {"", "%", "@", "&"};
static const char *const SUFFIXES[] = {"", ".sha256", ".ed25519", ".sha256"};

/* The block dictionary (§6.2) as one text per rank; own refs and base64 entries are rendered into *scratch. */
typedef struct {
    Slice *token; /* by rank */
    Py_ssize_t n;
    int64_t hole; /* the rank of the leaf end (the first literal 0x00), or -1 */
    unsigned char *scratch;
} Entries;

/* The shared dictionary is large and a block's entries index it at random: ask for the offsets of the entry 16
 * ahead and the text of the one 8 ahead (whose offsets were asked for 8 entries ago), so lookups do not wait. */
static inline void prefetch_shared(const Pieces *shared, const int64_t *ids, Py_ssize_t n_ids, Py_ssize_t k) {
    if (k + 16 < n_ids && ids[k + 16] < shared->n) __builtin_prefetch((const char *)shared->offsets->buf + 8 * ids[k + 16]);
    if (k + 8 < n_ids && ids[k + 8] < shared->n) {
        int64_t at = at64(shared->offsets, ids[k + 8]);
        if (at >= 0 && at < shared->size) __builtin_prefetch(shared->data + at);
    }
}

static int read_entries(PyObject *const *parts, const Pieces *shared, Entries *e) {
    const unsigned char *kinds = (const unsigned char *)PyBytes_AS_STRING(parts[0]);
    const unsigned char *payload = (const unsigned char *)PyBytes_AS_STRING(parts[5]);
    Py_ssize_t n = PyBytes_GET_SIZE(parts[0]), n_payload = PyBytes_GET_SIZE(parts[5]), n_ids, n_sized;
    Py_ssize_t want_ids = 0, want_sized = 0, scratch = 0;
    int64_t *ids = NULL, *sized = NULL;
    int status = -1;
    for (Py_ssize_t r = 0; r < n; r++) {
        if (kinds[r] > SHARED) {
            PyErr_Format(Malformed, "content column: bad dictionary entry kind %d", kinds[r]);
            return -1;
        }
        want_ids += kinds[r] == SHARED;
        want_sized += kinds[r] == LITERAL || kinds[r] == BASE64;
    }
    if (!(ids = svb1234(parts[1], parts[2], &n_ids, "content shared ids")) ||
        !(sized = svb1234(parts[3], parts[4], &n_sized, "content entry lengths")))
        goto done;
    if (n_ids != want_ids || n_sized != want_sized) {
        PyErr_SetString(Malformed, "content column: entry kinds disagree with the shared ids or the lengths");
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t r = 0, j = 0; r < n; r++) {
        int kind = kinds[r];
        if (kind == SHARED) continue;
        int64_t len = kind == LITERAL || kind == BASE64 ? sized[j++] : 32;
        total += len;
        scratch += kind == LITERAL ? 0 : kind == BASE64 ? 4 * ((len + 2) / 3) : 45 + (int64_t)strlen(SUFFIXES[kind]);
    }
    if (total != n_payload) {
        PyErr_SetString(Malformed, "content column: the entry payloads do not add up");
        goto done;
    }
    e->n = n;
    e->hole = -1;
    e->token = PyMem_Malloc((n ? n : 1) * sizeof(Slice));
    e->scratch = PyMem_Malloc(scratch ? scratch : 1);
    if (!e->token || !e->scratch) {
        PyErr_NoMemory();
        goto done;
    }
    unsigned char *out = e->scratch;
    const unsigned char *at = payload;
    for (Py_ssize_t r = 0, j = 0, k = 0; r < n; r++) {
        int kind = kinds[r];
        if (kind == SHARED) {
            const unsigned char *text;
            int64_t len;
            prefetch_shared(shared, ids, n_ids, k);
            if (ids[k] >= shared->n || piece(shared, ids[k], &text, &len) < 0) {
                PyErr_Format(Malformed, "content column: a shared token id beyond %zd entries", shared->n);
                goto done;
            }
            e->token[r] = slice_of(text, len);
            k++;
            continue;
        }
        int64_t len = kind == LITERAL || kind == BASE64 ? sized[j++] : 32;
        if (kind == LITERAL) {
            e->token[r] = slice_of(at, len);
            if (memchr(at, 0, len)) { /* refs and base64 payloads are binary */
                if (len != 1) {
                    PyErr_SetString(Malformed, "content column: a token other than the leaf end contains a 0x00 byte");
                    goto done;
                }
                if (e->hole < 0) e->hole = r;
            }
        } else {
            unsigned char *text = out;
            if (kind != BASE64) *out++ = SIGILS[kind][0];
            base64_into(out, at, len);
            out += 4 * ((len + 2) / 3);
            if (kind != BASE64) {
                size_t suffix = strlen(SUFFIXES[kind]);
                memcpy(out, SUFFIXES[kind], suffix);
                out += suffix;
            }
            e->token[r] = slice_of(text, out - text);
        }
        at += len;
    }
    status = 0;
done:
    PyMem_Free(ids);
    PyMem_Free(sized);
    return status;
}

/* A walk over the ranks: each text as its skeleton's parts with the tokens of its leaves between them. */
typedef struct {
    Dense dense;
    const Entries *entries;
    const Pieces *parts; /* every skeleton's parts end to end */
    const Py_buffer *first, *holes;
    Py_ssize_t n_skeletons;
    const int64_t *skeleton; /* per message */
    Py_ssize_t n;
} Walk;

/* The texts being written: a bytes object grown as needed (resized to its length at the end). */
typedef struct {
    PyObject *bytes;
    unsigned char *data;
    int64_t len, cap;
} Out;

static int grow(Out *o, int64_t need) { /* need: at most MAX_TEXTS + 16 (emit's slack) */
    int64_t cap = o->cap * 2 > need ? o->cap * 2 : need;
    cap = cap < MAX_TEXTS + 16 ? cap : MAX_TEXTS + 16;
    if (_PyBytes_Resize(&o->bytes, cap) < 0) return -1;
    o->data = (unsigned char *)PyBytes_AS_STRING(o->bytes);
    o->cap = cap;
    return 0;
}

static inline int emit(const unsigned char *p, int64_t len, Out *o) {
    if (o->len + len >= MAX_TEXTS) {
        PyErr_SetString(Malformed, "content column: texts too large");
        return -1;
    }
    if (o->len + len > o->cap && grow(o, o->len + len) < 0) return -1;
    if (len > 64)
        memcpy(o->data + o->len, p, len);
    else
        copy_short(o->data + o->len, p, len);
    o->len += len;
    return 0;
}

/* emit for a token: short ones as one 16-byte move from the table (the texts keep 16 bytes of slack at the end,
 * trimmed when done). */
static inline int emit_token(const Slice *t, Out *o) {
    if (t->len > 16) return emit(t->p, t->len, o);
    if (o->len + t->len >= MAX_TEXTS) {
        PyErr_SetString(Malformed, "content column: texts too large");
        return -1;
    }
    if (o->len + 16 > o->cap && grow(o, o->len + 16) < 0) return -1;
    memcpy(o->data + o->len, t->inline_text, 16);
    o->len += t->len;
    return 0;
}

static inline int emit_part(const Walk *w, int64_t k, Out *o) {
    const unsigned char *p;
    int64_t len;
    if (piece(w->parts, k, &p, &len) < 0) {
        PyErr_SetString(Malformed, "content column: a skeleton part outside the skeletons");
        return -1;
    }
    return emit(p, len, o);
}

/* Where strict UTF-8 (what Python's decoder accepts: no overlongs, surrogates or code points past U+10FFFF)
 * fails in s, or -1. */
static Py_ssize_t utf8_error(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        i += (Py_ssize_t)ascii_run(s + i, (size_t)(n - i));
        if (i == n) break;
        size_t len = utf8_sequence(s + i, s + n);
        if (!len) return i;
        i += (Py_ssize_t)len;
    }
    return -1;
}

/* Writes every message's text; offsets gets where each ends, plain the length of its ASCII start (what an id's
 * binary form leaves as it is). Each text is checked to be UTF-8 on its own as soon as it is written. */
static int walk(Walk *w, Out *out, int64_t *offsets, int64_t *plain) {
    const Slice *token = w->entries->token;
    int64_t hole = w->entries->hole, n_entries = w->entries->n;
    for (Py_ssize_t i = 0; i < w->n; i++) {
        int64_t sk = w->skeleton[i];
        if (sk >= w->n_skeletons) {
            PyErr_Format(Malformed, "content column: unknown skeleton id %lld", (long long)sk);
            return -1;
        }
        int64_t first = at64(w->first, sk), holes = at64(w->holes, sk);
        if (first < 0 || holes < 0 || first + holes >= w->parts->n) {
            PyErr_SetString(Malformed, "content column: a skeleton beyond the skeleton parts");
            return -1;
        }
        if (emit_part(w, first, out) < 0) return -1;
        for (int64_t k = 1; k <= holes; k++) {
            for (;;) {
                if (w->dense.pos >= w->dense.len) {
                    PyErr_SetString(Malformed, "content column: fewer leaves than skeleton holes");
                    return -1;
                }
                int64_t rank = next_rank(&w->dense);
                if (rank < 0) return -1;
                if (rank >= n_entries) {
                    PyErr_Format(Malformed, "content column: token rank %lld beyond %lld entries", (long long)rank,
                                 (long long)n_entries);
                    return -1;
                }
                if (rank == hole) break;
                if (emit_token(&token[rank], out) < 0) return -1;
            }
            if (emit_part(w, first + k, out) < 0) return -1;
        }
        offsets[i + 1] = out->len;
        const unsigned char *text = out->data + offsets[i]; /* checked while it is in cache */
        size_t len = (size_t)(out->len - offsets[i]);
        plain[i] = (int64_t)ascii_run(text, len);
        Py_ssize_t bad = (size_t)plain[i] < len ? utf8_error(text + plain[i], (Py_ssize_t)(len - plain[i])) : -1;
        if (bad >= 0) {
            PyErr_Format(Malformed, "content is not UTF-8 at byte %lld", (long long)(offsets[i] + plain[i] + bad));
            return -1;
        }
    }
    if (w->dense.pos != w->dense.len) {
        PyErr_SetString(Malformed, "content column: tokens after the last leaf");
        return -1;
    }
    return 0;
}

static PyObject *decode_column(PyObject *self, PyObject *args) {
    PyObject *parts;
    Py_ssize_t n;
    Py_buffer sd, so, pd, po, first, holes;
    if (!PyArg_ParseTuple(args, "O!ny*y*y*y*y*y*", &PyTuple_Type, &parts, &n, &sd, &so, &pd, &po, &first, &holes))
        return NULL;
    PyObject *result = NULL, *texts = NULL, *offsets = NULL, *plain = NULL;
    Entries entries = {0};
    int64_t *skeleton = NULL;
    Pieces shared, skeleton_parts;
    Py_ssize_t n_first, n_holes, n_skel;
    if (PyTuple_GET_SIZE(parts) != 10) {
        PyErr_SetString(Malformed, "content column: the wrong parts");
        goto done;
    }
    PyObject *const *p = &PyTuple_GET_ITEM(parts, 0);
    for (int k = 0; k < 10; k++) {
        if (!PyBytes_Check(p[k])) {
            PyErr_SetString(PyExc_TypeError, "decode_column: every part must be bytes");
            goto done;
        }
    }
    int s = PyBytes_GET_SIZE(p[6]) == 1 ? (unsigned char)PyBytes_AS_STRING(p[6])[0] : 0;
    if (s < 1) {
        PyErr_Format(Malformed, "content tokens: dense code parameter s=%d outside 1..255", s);
        goto done;
    }
    if (int64_buffer(&first, "first", &n_first) < 0 || int64_buffer(&holes, "holes", &n_holes) < 0 ||
        pieces_of(&shared, &sd, &so, "shared") < 0 || pieces_of(&skeleton_parts, &pd, &po, "parts") < 0 ||
        read_entries(p, &shared, &entries) < 0 || !(skeleton = svb1234(p[8], p[9], &n_skel, "content skeletons")))
        goto done;
    if (n_skel != n) {
        PyErr_Format(Malformed, "content column: %zd skeleton ids for %zd messages, or an unknown id", n_skel, n);
        goto done;
    }
    Walk w = {.dense = {.codes = (const unsigned char *)PyBytes_AS_STRING(p[7]), .len = PyBytes_GET_SIZE(p[7]), .s = s},
              .entries = &entries, .parts = &skeleton_parts, .first = &first, .holes = &holes,
              .n_skeletons = n_first < n_holes ? n_first : n_holes, .skeleton = skeleton, .n = n};
    int64_t width = s; /* ranks coded by codewords of one length: s, s*c, s*c**2 */
    for (int len = 1; len < 4; len++) { /* bases: the first rank of each codeword length */
        w.dense.bases[len] = w.dense.bases[len - 1] + width;
        width *= 256 - s;
    }
    /* Room for 16 bytes a rank byte (texts run near 10) and a skeleton's worth a message: growing copies the texts,
     * while room never written is never paged in. Never 0 (the shared empty bytes); capped where walk stops. */
    int64_t room = 16 * (int64_t)w.dense.len + 128 * (int64_t)n + 64;
    Out out = {.cap = room < MAX_TEXTS + 16 ? room : MAX_TEXTS + 16};
    if (!(out.bytes = PyBytes_FromStringAndSize(NULL, out.cap)) ||
        !(offsets = PyBytes_FromStringAndSize(NULL, 8 * (n + 1))) || !(plain = PyBytes_FromStringAndSize(NULL, 8 * n)))
        goto done;
    out.data = (unsigned char *)PyBytes_AS_STRING(out.bytes);
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(offsets); /* a bytes object's data is 8-aligned */
    ends[0] = 0;
    int failed = walk(&w, &out, ends, (int64_t *)PyBytes_AS_STRING(plain)) < 0;
    texts = out.bytes; /* owned here from now on, whatever walk did to it */
    if (failed || _PyBytes_Resize(&texts, out.len) < 0) goto done;
    result = PyTuple_Pack(3, texts, offsets, plain);
done:
    Py_XDECREF(texts);
    Py_XDECREF(offsets);
    Py_XDECREF(plain);
    PyMem_Free(entries.token);
    PyMem_Free(entries.scratch);
    PyMem_Free(skeleton);
    PyBuffer_Release(&sd);
    PyBuffer_Release(&so);
    PyBuffer_Release(&pd);
    PyBuffer_Release(&po);
    PyBuffer_Release(&first);
    PyBuffer_Release(&holes);
    return result;
}

/* --- read_block ---------------------------------------------------------------------------------------------- */

/* A FlatBuffer being read: every position checked to lie inside it. */
typedef struct {
    const unsigned char *p;
    size_t n;
} Fb;

static inline int fb_u32(const Fb *b, size_t at, uint32_t *v) {
    if (at > b->n || b->n - at < 4) return -1;
    memcpy(v, b->p + at, 4); /* FlatBuffers are little-endian, as the hosts this builds on */
    return 0;
}

static inline int fb_u16(const Fb *b, size_t at, uint16_t *v) {
    if (at > b->n || b->n - at < 2) return -1;
    memcpy(v, b->p + at, 2);
    return 0;
}

/* Where field i of the table at pos lies (0 when absent), as the generated Python accessors find it; -1 when the
 * table or its vtable is not inside the buffer. */
static int64_t fb_field(const Fb *b, size_t pos, int i) {
    uint32_t back;
    uint16_t size, at;
    if (fb_u32(b, pos, &back) < 0) return -1;
    int64_t vtable = (int64_t)pos - (int32_t)back;
    if (vtable < 0 || fb_u16(b, vtable, &size) < 0) return -1;
    if (4 + 2 * i >= size) return 0;
    if (fb_u16(b, vtable + 4 + 2 * i, &at) < 0) return -1;
    return at ? (int64_t)pos + at : 0;
}

/* The table a present field points to; -1 when absent or outside. */
static int64_t fb_table(const Fb *b, size_t pos, int i) {
    int64_t at = fb_field(b, pos, i);
    uint32_t rel;
    if (at <= 0 || fb_u32(b, at, &rel) < 0 || (uint64_t)at + rel >= b->n) return -1;
    return at + rel;
}

/* A [ubyte] field as a new bytes object (empty when absent, as the Python accessors give it); NULL when it does not
 * lie inside the buffer (no error set). */
static PyObject *fb_bytes(const Fb *b, size_t pos, int i) {
    int64_t at = fb_field(b, pos, i);
    uint32_t rel, len;
    if (at < 0) return NULL;
    if (at == 0) return PyBytes_FromStringAndSize(NULL, 0);
    if (fb_u32(b, at, &rel) < 0 || fb_u32(b, (uint64_t)at + rel, &len) < 0) return NULL;
    size_t start = (size_t)at + rel + 4;
    if (start > b->n || b->n - start < len) return NULL;
    return PyBytes_FromStringAndSize((const char *)b->p + start, len);
}

/* A Hash32 struct field: its 32 bytes, None when absent, NULL when outside. */
static PyObject *fb_hash(const Fb *b, size_t pos, int i) {
    int64_t at = fb_field(b, pos, i);
    if (at < 0 || (at > 0 && ((size_t)at > b->n || b->n - at < 32))) return NULL;
    return at ? PyBytes_FromStringAndSize((const char *)b->p + at, 32) : Py_NewRef(Py_None);
}

static int fb_scalar(const Fb *b, size_t pos, int i, size_t width, uint64_t *v) {
    int64_t at = fb_field(b, pos, i);
    *v = 0;
    if (at < 0 || (at > 0 && ((size_t)at > b->n || b->n - at < width))) return -1;
    if (at) memcpy(v, b->p + at, width);
    return 0;
}

/* (codes, values) of a StreamVByte table field; NULL when absent or outside. */
static PyObject *fb_svb(const Fb *b, size_t pos, int i) {
    int64_t at = fb_table(b, pos, i);
    if (at < 0) return NULL;
    PyObject *codes = fb_bytes(b, at, 0), *values = codes ? fb_bytes(b, at, 1) : NULL;
    PyObject *out = values ? PyTuple_Pack(2, codes, values) : NULL;
    Py_XDECREF(codes);
    Py_XDECREF(values);
    return out;
}

/* (length, (value codes, values), (length codes, values)) of a RunLengthColumn field; NULL when absent or outside. */
static PyObject *fb_runs(const Fb *b, size_t pos, int i) {
    int64_t at = fb_table(b, pos, i);
    uint64_t length;
    if (at < 0 || fb_scalar(b, at, 0, 4, &length) < 0) return NULL;
    PyObject *values = fb_svb(b, at, 1), *lengths = values ? fb_svb(b, at, 2) : NULL;
    PyObject *out = lengths ? Py_BuildValue("(KOO)", (unsigned long long)length, values, lengths) : NULL;
    Py_XDECREF(values);
    Py_XDECREF(lengths);
    return out;
}

/* The DictionarySet field: six (kind, blob id, size) or None; NULL when absent or outside. */
static PyObject *fb_dicts(const Fb *b, size_t pos, int i) {
    int64_t at = fb_table(b, pos, i);
    if (at < 0) return NULL;
    PyObject *out = PyTuple_New(6);
    for (int k = 0; out && k < 6; k++) {
        int64_t ref = fb_field(b, at, k) ? fb_table(b, at, k) : 0;
        uint64_t kind, size;
        PyObject *id = ref > 0 ? fb_hash(b, ref, 1) : NULL, *item = NULL;
        if (ref == 0)
            item = Py_NewRef(Py_None);
        else if (id && id != Py_None && fb_scalar(b, ref, 0, 1, &kind) == 0 && fb_scalar(b, ref, 2, 4, &size) == 0)
            item = Py_BuildValue("(KOK)", (unsigned long long)kind, id, (unsigned long long)size);
        Py_XDECREF(id);
        if (!item) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, k, item);
    }
    return out;
}

/* An unsigned little-endian integer of width bytes (1, 2, 4 or 8) at buf[at:]; -1 when outside. */
static int flex_uint(const unsigned char *buf, size_t n, int64_t at, size_t width, uint64_t *v) {
    if (at < 0 || (size_t)at > n || n - at < width) return -1;
    *v = 0;
    memcpy(v, buf + at, width);
    return 0;
}

/* The content column's FlexBuffer as its ten blobs, when it is exactly a vector of ten blobs lying inside it
 * (what block._read_flex reads); NULL otherwise (no error set). */
static PyObject *flex_parts(PyObject *column) {
    const unsigned char *buf = (const unsigned char *)PyBytes_AS_STRING(column);
    size_t n = PyBytes_GET_SIZE(column);
    if (n < 3) return NULL;
    size_t width = buf[n - 1], packed = buf[n - 2], elem_width = (size_t)1 << (packed & 3);
    uint64_t rel, size;
    int64_t root = (int64_t)n - 2 - (int64_t)width;
    if ((width != 1 && width != 2 && width != 4 && width != 8) || packed >> 2 != 10 /* VECTOR */ ||
        flex_uint(buf, n, root, width, &rel) < 0 || rel > (uint64_t)root)
        return NULL;
    int64_t vector = root - (int64_t)rel;
    if (flex_uint(buf, n, vector - (int64_t)elem_width, elem_width, &size) < 0 || size != 10) return NULL;
    PyObject *parts = PyTuple_New(10);
    for (int k = 0; parts && k < 10; k++) {
        int64_t at = vector + k * (int64_t)elem_width, type_at = vector + 10 * (int64_t)elem_width + k;
        uint64_t ref, len;
        PyObject *item = NULL;
        if (type_at >= 0 && (size_t)type_at < n && buf[type_at] >> 2 == 25 /* BLOB */ &&
            flex_uint(buf, n, at, elem_width, &ref) == 0 && ref <= (uint64_t)at) {
            int64_t blob = at - (int64_t)ref;
            size_t blob_width = (size_t)1 << (buf[type_at] & 3);
            if (flex_uint(buf, n, blob - (int64_t)blob_width, blob_width, &len) == 0 && len <= n - blob)
                item = PyBytes_FromStringAndSize((const char *)buf + blob, len);
        }
        if (!item) Py_CLEAR(parts);
        else PyTuple_SET_ITEM(parts, k, item);
    }
    return parts;
}

/* read_block(data) -> the raw fields of a MessageBlock blob, or None when anything about it is irregular (then the
 * Python reader, which names what is wrong, reads it instead):
 * (length, sequence base, first timestamp, last timestamp, author, previous or None, last message hash,
 *  timestamp deltas (codes, values), types (length, values svb, lengths svb), object signatures (likewise),
 *  crypto signatures, the content column's ten parts, the six dictionary refs (kind, blob id, size) or None). */
static PyObject *read_block(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "read_block takes bytes");
        return NULL;
    }
    Fb b = {(const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg)};
    uint32_t root_at;
    uint64_t version, kind, classic_kind, scalars[4];
    if (b.n < 12 || memcmp(b.p + 4, "BIP2", 4) || fb_u32(&b, 0, &root_at) < 0) return Py_NewRef(Py_None);
    if (fb_scalar(&b, root_at, 0, 2, &version) < 0 || version != 1 || fb_scalar(&b, root_at, 1, 1, &kind) < 0 ||
        kind != 1 /* MessageBlock */)
        return Py_NewRef(Py_None);
    int64_t block = fb_table(&b, root_at, 2), sketch = block < 0 ? -1 : fb_table(&b, block, 0);
    int64_t classic = -1, classic_sketch = -1;
    if (sketch >= 0 && fb_scalar(&b, block, 3, 1, &classic_kind) == 0 && classic_kind == 1) {
        classic = fb_table(&b, block, 4);
        classic_sketch = classic < 0 ? -1 : fb_table(&b, classic, 0);
    }
    if (classic_sketch < 0) return Py_NewRef(Py_None);
    for (int k = 0; k < 4; k++)
        if (fb_scalar(&b, sketch, k, k < 2 ? 4 : 8, &scalars[k]) < 0) return Py_NewRef(Py_None);
    PyObject *fields[10] = {
        fb_hash(&b, classic_sketch, 0), fb_hash(&b, classic_sketch, 1), fb_hash(&b, classic_sketch, 2),
        fb_svb(&b, block, 1), fb_runs(&b, block, 2), fb_runs(&b, classic, 1), fb_bytes(&b, classic, 2),
        fb_bytes(&b, classic, 3), NULL, fb_dicts(&b, block, 5),
    };
    fields[8] = fields[7] ? flex_parts(fields[7]) : NULL;
    PyObject *out = NULL;
    int complete = !PyErr_Occurred() && fields[0] != Py_None && fields[2] != Py_None;
    for (int k = 0; k < 10 && complete; k++) complete = fields[k] != NULL;
    if (complete)
        out = Py_BuildValue("(KKKKOOOOOOOOO)", (unsigned long long)scalars[0], (unsigned long long)scalars[1],
                            (unsigned long long)scalars[2], (unsigned long long)scalars[3], fields[0], fields[1],
                            fields[2], fields[3], fields[4], fields[5], fields[6], fields[8], fields[9]);
    else if (!PyErr_Occurred())
        out = Py_NewRef(Py_None);
    for (int k = 0; k < 10; k++) Py_XDECREF(fields[k]);
    return out;
}

/* --- block_digests and message_texts -------------------------------------------------------------------------- */

enum { F_PREVIOUS, F_SEQUENCE, F_TIMESTAMP, F_CONTENT, F_SIGNATURE, N_FIELDS };

typedef struct {
    const char *text; /* a constant part, or NULL for a field */
    Py_ssize_t len;
    int field;
} Part;

static void free_layouts(Part **layouts, Py_ssize_t count) {
    for (Py_ssize_t j = 0; layouts && j < count; j++) PyMem_Free(layouts[j]);
    PyMem_Free(layouts);
}

/* The layouts as Part arrays: each a tuple of bytes (constant text) and ints (an F_* field, each at most once). */
static Part **read_layouts(PyObject *layouts, Py_ssize_t *count) {
    if (!PyTuple_Check(layouts)) {
        PyErr_SetString(PyExc_TypeError, "layouts must be a tuple");
        return NULL;
    }
    *count = PyTuple_GET_SIZE(layouts);
    Part **out = PyMem_Calloc(*count ? *count : 1, sizeof(Part *));
    if (!out) return (Part **)PyErr_NoMemory();
    for (Py_ssize_t j = 0; j < *count; j++) {
        PyObject *layout = PyTuple_GET_ITEM(layouts, j);
        if (!PyTuple_Check(layout) || PyTuple_GET_SIZE(layout) > 2 * N_FIELDS + 1) {
            PyErr_SetString(PyExc_TypeError, "a layout must be a tuple of constant texts between fields");
            goto fail;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(layout);
        out[j] = PyMem_Calloc(n + 1, sizeof(Part)); /* ends with a Part whose field is N_FIELDS */
        if (!out[j]) {
            PyErr_NoMemory();
            goto fail;
        }
        int seen = 0;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *item = PyTuple_GET_ITEM(layout, k);
            if (PyBytes_Check(item)) {
                out[j][k].text = PyBytes_AS_STRING(item);
                out[j][k].len = PyBytes_GET_SIZE(item);
            } else {
                long field = PyLong_Check(item) ? PyLong_AsLong(item) : -1;
                if (field < 0 || field >= N_FIELDS || seen >> field & 1) {
                    PyErr_SetString(PyExc_ValueError, "a layout part is neither bytes nor a field not named before");
                    goto fail;
                }
                seen |= 1 << field;
                out[j][k].field = (int)field;
            }
        }
        if (!(seen >> F_CONTENT & 1)) {
            PyErr_SetString(PyExc_ValueError, "a layout without the content");
            goto fail;
        }
        out[j][n].field = N_FIELDS;
    }
    return out;
fail:
    free_layouts(out, *count);
    return NULL;
}

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

static void release_rows(Rows *r) {
    Py_buffer *held[] = {&r->contents, &r->offsets, &r->plain, &r->layout_of, &r->timestamps, &r->signatures};
    for (int k = 0; k < r->held; k++) PyBuffer_Release(held[k]);
    r->held = 0;
    free_layouts(r->layouts, r->n_layouts);
    r->layouts = NULL;
}

/* rows_of((contents, offsets, plain, layout_of, layouts, timestamps, sequence_base, signatures, previous, where)) */
static int rows_of(PyObject *args, Rows *r) {
    PyObject *layouts, *previous;
    memset(r, 0, sizeof *r);
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 10) {
        PyErr_SetString(PyExc_TypeError, "a block's rows are a tuple of ten");
        return -1;
    }
    Py_buffer *bufs[] = {&r->contents, &r->offsets, &r->plain, &r->layout_of, &r->timestamps, &r->signatures};
    PyObject *items[] = {PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1), PyTuple_GET_ITEM(args, 2),
                         PyTuple_GET_ITEM(args, 3), PyTuple_GET_ITEM(args, 5), PyTuple_GET_ITEM(args, 7)};
    for (; r->held < 6; r->held++)
        if (PyObject_GetBuffer(items[r->held], bufs[r->held], PyBUF_SIMPLE) < 0) goto fail;
    layouts = PyTuple_GET_ITEM(args, 4), previous = PyTuple_GET_ITEM(args, 8), r->where = PyTuple_GET_ITEM(args, 9);
    r->sequence_base = PyLong_AsLongLong(PyTuple_GET_ITEM(args, 6));
    if (PyErr_Occurred()) goto fail;
    Py_ssize_t n_offsets, n_plain, n_stamps;
    if (int64_buffer(&r->layout_of, "layout_of", &r->n) < 0 || int64_buffer(&r->offsets, "offsets", &n_offsets) < 0 ||
        int64_buffer(&r->plain, "plain", &n_plain) < 0 || int64_buffer(&r->timestamps, "timestamps", &n_stamps) < 0)
        goto fail;
    if (n_offsets != r->n + 1 || n_plain != r->n || n_stamps != r->n) {
        PyErr_SetString(PyExc_ValueError, "a block's offsets, layouts and timestamps are of different rows");
        goto fail;
    }
    if (previous != Py_None && !(PyBytes_Check(previous) && PyBytes_GET_SIZE(previous) == 32)) {
        PyErr_SetString(PyExc_ValueError, "a block's previous id must be 32 bytes or None");
        goto fail;
    }
    r->previous = previous == Py_None ? NULL : (const unsigned char *)PyBytes_AS_STRING(previous);
    if (!PyUnicode_Check(r->where)) {
        PyErr_SetString(PyExc_TypeError, "a block's name must be a str");
        goto fail;
    }
    if (!(r->layouts = read_layouts(layouts, &r->n_layouts))) goto fail;
    return 0;
fail:
    release_rows(r);
    return -1;
}

/* One message's text as the parts it is made of (docs/archive-format.md §5), ready to hash or to join: the envelope
 * before the content, the content (its ASCII start where it lies, the rest transcoded when hashing), and the
 * envelope after it. The messages of a block share a key order, and only four fields differ from one to the next:
 * the envelope is drawn once and those fields are written over it while their lengths stay. */
typedef struct {
    Sha256Part parts[4];
    size_t n;
    Buf envelope;                        /* the text before the content, then the text after it */
    int64_t drawn;                       /* the layout + 1 the envelope holds, 0 for none */
    size_t head;                         /* where the content goes in it */
    size_t at[N_FIELDS], len[N_FIELDS]; /* where each field's text is in it, and how long */
    Buf binary;                          /* the content past its ASCII start, as Node's binary string */
} Framed;

static inline void add_part(Framed *f, const unsigned char *p, size_t len) {
    if (len) f->parts[f->n++] = (Sha256Part){p, len};
}

/* The length of a field's text in message i (previous: prev, or null); -1 with an error when it has none. */
static ssize_t field_len(const Rows *r, Py_ssize_t i, int field, const unsigned char *prev) {
    switch (field) {
    case F_PREVIOUS:
        return prev ? 54 : 4;
    case F_SEQUENCE:
        return (ssize_t)int_len(r->sequence_base + i);
    case F_TIMESTAMP:
        return (ssize_t)int_len(at64(&r->timestamps, i));
    default: /* F_SIGNATURE */
        if (64 * (i + 1) > r->signatures.len) {
            PyErr_Format(Malformed, "%U, message %zd: no signature bytes", r->where, i);
            return -1;
        }
        return 102;
    }
}

/* A field's text in message i at o (field_len bytes). */
static void write_field(unsigned char *o, const Rows *r, Py_ssize_t i, int field, size_t len, const unsigned char *prev) {
    switch (field) {
    case F_PREVIOUS:
        if (!prev) {
            memcpy(o, "null", 4);
            return;
        }
        memcpy(o, "\"%", 2);
        base64_into(o + 2, prev, 32);
        memcpy(o + 46, ".sha256\"", 8);
        return;
    case F_SEQUENCE:
        write_int(o, r->sequence_base + i, len);
        return;
    case F_TIMESTAMP:
        write_int(o, at64(&r->timestamps, i), len);
        return;
    default: /* F_SIGNATURE */
        o[0] = '"';
        base64_into(o + 1, (const unsigned char *)r->signatures.buf + 64 * i, 64);
        memcpy(o + 89, ".sig.ed25519\"", 13);
    }
}

/* The envelope of message i in layout which: its fields written over the last one when it is of the same layout
 * and their lengths stay, else drawn anew. */
static int envelope(const Rows *r, Py_ssize_t i, int64_t which, const unsigned char *prev, Framed *f) {
    const Part *layout = r->layouts[which];
    size_t lens[N_FIELDS];
    int redraw = f->drawn != which + 1;
    for (const Part *p = layout; p->text || p->field != N_FIELDS; p++) {
        if (p->text || p->field == F_CONTENT) continue;
        ssize_t len = field_len(r, i, p->field, prev);
        if (len < 0) return -1;
        lens[p->field] = (size_t)len;
        redraw |= lens[p->field] != f->len[p->field];
    }
    if (!redraw) {
        for (const Part *p = layout; p->text || p->field != N_FIELDS; p++)
            if (!p->text && p->field != F_CONTENT)
                write_field(f->envelope.data + f->at[p->field], r, i, p->field, lens[p->field], prev);
        return 0;
    }
    f->envelope.len = 0;
    for (const Part *p = layout; p->text || p->field != N_FIELDS; p++) {
        if (p->text) {
            if (put_bytes(&f->envelope, p->text, p->len) < 0) return -1;
        } else if (p->field == F_CONTENT) {
            f->head = f->envelope.len;
        } else {
            if (reserve(&f->envelope, lens[p->field]) < 0) return -1;
            write_field(f->envelope.data + f->envelope.len, r, i, p->field, lens[p->field], prev);
            f->at[p->field] = f->envelope.len, f->len[p->field] = lens[p->field];
            f->envelope.len += lens[p->field];
        }
    }
    f->drawn = which + 1;
    return 0;
}

/* Message i of the block in parts: its text, or with binary set the form its id hashes (Node's Buffer.from(text,
 * "binary"): the low byte of each UTF-16 unit; the envelope is ASCII, so only a content that is not changes). Its
 * previous id is prev, or null when prev is NULL. */
static int frame_message(const Rows *r, Py_ssize_t i, const unsigned char *prev, int binary, Framed *f) {
    int64_t a = at64(&r->offsets, i), z = at64(&r->offsets, i + 1), which = at64(&r->layout_of, i);
    if (a < 0 || z < a || z > r->contents.len) {
        PyErr_Format(Malformed, "%U, message %zd: content offsets outside the texts", r->where, i);
        return -1;
    }
    const unsigned char *content = (const unsigned char *)r->contents.buf + a;
    size_t content_len = (size_t)(z - a), plain = binary ? (size_t)at64(&r->plain, i) : content_len;
    if (plain > content_len) {
        PyErr_Format(Malformed, "%U, message %zd: an ASCII start beyond its content", r->where, i);
        return -1;
    }
    f->binary.len = 0;
    if (plain < content_len) {
        size_t bad_at;
        if (reserve(&f->binary, content_len - plain) < 0) return -1;
        ssize_t written = binary_bytes(content + plain, content_len - plain, f->binary.data, &bad_at);
        if (written < 0) {
            PyErr_Format(Malformed, "%U, message %zd: content is not UTF-8", r->where, i);
            return -1;
        }
        f->binary.len = (size_t)written;
    }
    f->n = 0;
    if (which == -1) { /* verbatim: the content is the whole message */
        add_part(f, content, plain);
        add_part(f, f->binary.data, f->binary.len);
        return 0;
    }
    if (which < 0 || which >= r->n_layouts) {
        PyErr_Format(Malformed, "%U, message %zd: unknown envelope layout", r->where, i);
        return -1;
    }
    if (envelope(r, i, which, prev, f) < 0) return -1;
    add_part(f, f->envelope.data, f->head);
    add_part(f, content, plain);
    add_part(f, f->binary.data, f->binary.len);
    add_part(f, f->envelope.data + f->head, f->envelope.len - f->head);
    return 0;
}

/* sha256(data, portable=False): for tests, which compare both routes with hashlib. */
static PyObject *sha256_py(PyObject *self, PyObject *args) {
    Py_buffer data;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "y*|p", &data, &portable)) return NULL;
    unsigned char digest[32];
    void (*chosen)(uint32_t *, const unsigned char *, size_t) = sha256_blocks;
    if (portable) sha256_blocks = blocks_portable;
    sha256(data.buf, data.len, digest);
    sha256_blocks = chosen;
    PyBuffer_Release(&data);
    return PyBytes_FromStringAndSize((const char *)digest, 32);
}

/* sha256_streams(messages, portable=False): each message (a list of bytes parts) hashed as block_digests hashes,
 * part by part and two messages side by side; for tests, which compare it with hashlib. */
static PyObject *sha256_streams(PyObject *self, PyObject *args) {
    PyObject *messages, *result = NULL;
    int portable = 0;
    if (!PyArg_ParseTuple(args, "O!|p", &PyList_Type, &messages, &portable)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    Sha256Part parts[2][64];
    Sha256Stream hash[2];
    void (*chosen)(uint32_t *, const unsigned char *, size_t) = sha256_blocks;
    void (*chosen_pair)(uint32_t *, const unsigned char *, uint32_t *, const unsigned char *) = sha256_pair;
    if (portable) sha256_blocks = blocks_portable, sha256_pair = pair_portable;
    if (!(result = PyList_New(n))) goto done;
    for (Py_ssize_t m = 0; m < n; m += 2) {
        int lanes = m + 1 < n ? 2 : 1;
        for (int k = 0; k < lanes; k++) {
            PyObject *list = PyList_GET_ITEM(messages, m + k);
            if (!PyList_Check(list) || PyList_GET_SIZE(list) > 64) {
                PyErr_SetString(PyExc_TypeError, "a message is a list of at most 64 bytes parts");
                goto fail;
            }
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(list); j++) {
                PyObject *part = PyList_GET_ITEM(list, j);
                if (!PyBytes_Check(part)) {
                    PyErr_SetString(PyExc_TypeError, "a part must be bytes");
                    goto fail;
                }
                parts[k][j] = (Sha256Part){(const unsigned char *)PyBytes_AS_STRING(part), PyBytes_GET_SIZE(part)};
            }
            sha256_stream_start(&hash[k], parts[k], PyList_GET_SIZE(list));
        }
        while (hash[0].stage < 2 || (lanes == 2 && hash[1].stage < 2)) sha256_advance(&hash[0], lanes == 2 ? &hash[1] : NULL);
        for (int k = 0; k < lanes; k++) {
            PyObject *digest = PyBytes_FromStringAndSize(NULL, 32);
            if (!digest) goto fail;
            sha256_digest(hash[k].state, (unsigned char *)PyBytes_AS_STRING(digest));
            PyList_SET_ITEM(result, m + k, digest);
        }
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    sha256_blocks = chosen, sha256_pair = chosen_pair;
    return result;
}

/* A block whose ids are being computed: one message at a time, a block of SHA-256 at a time. */
typedef struct {
    Rows rows;
    Py_ssize_t i; /* the message being hashed */
    unsigned char *digests;
    Framed framed;
    Sha256Stream hash;
} Chain;

static void release_framed(Chain *c) {
    release_rows(&c->rows);
    PyMem_Free(c->framed.envelope.data);
    PyMem_Free(c->framed.binary.data);
}

/* Starts hashing message c->i, whose previous is the id just computed (the block's own for the first). */
static int chain_next(Chain *c) {
    const unsigned char *prev = c->i ? c->digests + 32 * (c->i - 1) : c->rows.previous;
    if (frame_message(&c->rows, c->i, prev, 1, &c->framed) < 0) return -1;
    sha256_stream_start(&c->hash, c->framed.parts, c->framed.n);
    return 0;
}

/* block_digests(blocks) -> each block's 32-byte message ids end to end. Within a block each id is in the next
 * message, so one chain is as slow as SHA-256's latency; two blocks' chains are hashed side by side instead. */
static PyObject *block_digests(PyObject *self, PyObject *arg) {
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "block_digests takes a list of blocks' rows");
        return NULL;
    }
    Py_ssize_t n_blocks = PyList_GET_SIZE(arg), ready = 0, taken = 0;
    PyObject *result = PyList_New(n_blocks);
    Chain *chains = PyMem_Calloc(n_blocks ? n_blocks : 1, sizeof(Chain));
    if (!result || !chains) {
        if (result) PyErr_NoMemory();
        goto fail;
    }
    for (; ready < n_blocks; ready++) {
        Chain *c = &chains[ready];
        if (rows_of(PyList_GET_ITEM(arg, ready), &c->rows) < 0) goto fail;
        PyObject *digests = PyBytes_FromStringAndSize(NULL, 32 * c->rows.n);
        if (!digests) {
            release_rows(&c->rows);
            goto fail;
        }
        PyList_SET_ITEM(result, ready, digests);
        c->digests = (unsigned char *)PyBytes_AS_STRING(digests);
    }
    Chain *lane[2] = {NULL, NULL};
    for (;;) {
        for (int k = 0; k < 2; k++) /* an idle lane takes the next block with messages */
            while (!lane[k] && taken < n_blocks) {
                Chain *c = &chains[taken++];
                if (c->rows.n && chain_next(c) < 0) goto fail;
                if (c->rows.n) lane[k] = c;
            }
        if (!lane[0] && !lane[1]) break;
        sha256_advance(lane[0] ? &lane[0]->hash : NULL, lane[1] ? &lane[1]->hash : NULL);
        for (int k = 0; k < 2; k++) {
            Chain *c = lane[k];
            if (!c || c->hash.stage < 2) continue;
            sha256_digest(c->hash.state, c->digests + 32 * c->i);
            if (++c->i == c->rows.n) {
                lane[k] = NULL;
            } else if (chain_next(c) < 0) {
                goto fail;
            }
        }
    }
    for (Py_ssize_t b = 0; b < n_blocks; b++) release_framed(&chains[b]);
    PyMem_Free(chains);
    return result;
fail:
    for (Py_ssize_t b = 0; chains && b < ready; b++)
        release_framed(&chains[b]);
    PyMem_Free(chains);
    Py_XDECREF(result);
    return NULL;
}

/* message_texts(rows, digests) -> each message's signed JSON: with the ids known, no message waits on another. */
static PyObject *message_texts(PyObject *self, PyObject *args) {
    PyObject *block;
    Py_buffer digests;
    if (!PyArg_ParseTuple(args, "Oy*", &block, &digests)) return NULL;
    Rows r;
    Framed f = {0};
    PyObject *texts = NULL;
    if (rows_of(block, &r) < 0) {
        PyBuffer_Release(&digests);
        return NULL;
    }
    if (digests.len != 32 * r.n) {
        PyErr_SetString(PyExc_ValueError, "message_texts: not one 32-byte digest a message");
        goto done;
    }
    if (!(texts = PyList_New(r.n))) goto done;
    for (Py_ssize_t i = 0; i < r.n; i++) {
        const unsigned char *prev = i ? (const unsigned char *)digests.buf + 32 * (i - 1) : r.previous;
        if (frame_message(&r, i, prev, 0, &f) < 0) goto fail;
        size_t len = 0;
        for (size_t k = 0; k < f.n; k++) len += f.parts[k].len;
        PyObject *text = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
        if (!text) goto fail;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(text);
        for (size_t k = 0; k < f.n; k++) memcpy(out, f.parts[k].p, f.parts[k].len), out += f.parts[k].len;
        PyList_SET_ITEM(texts, i, text);
    }
    goto done;
fail:
    Py_CLEAR(texts);
done:
    release_rows(&r);
    PyMem_Free(f.envelope.data);
    PyMem_Free(f.binary.data);
    PyBuffer_Release(&digests);
    return texts;
}

/* --- flattening and tokens ----------------------------------------------------------------------------------- */

/* Character classes of the text.LEAF and text.TOKEN expressions. */

static inline int is_b64(unsigned c) { return B64_VALUE[c] >= 0; }
static inline int is_alpha(unsigned c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static inline int in_number(unsigned c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

static unsigned char LEAF_START[256]; /* the bytes a text.LEAF match can start with, filled at import */

/* The token classes of text.TOKEN's alternatives, by the byte a token starts with (filled at import). */
enum { T_OTHER, T_ALPHA, T_DIGIT, T_B64_SIGN, T_SPACE, T_NEWLINE, T_HIGH, T_SIGIL };
static unsigned char TOKEN_START[256];

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

/* The end of the JSON string starting with the quote at s[i] (past its closing quote), or 0 when unterminated:
 * the "[^"\\]*(?:\\.[^"\\]*)*" of text's expressions. Quotes and backslashes are looked for a word at a time, inline:
 * most strings are keys and short values, where two calls to memchr cost more than the scan. */
static size_t string_end(const unsigned char *s, size_t n, size_t i) {
    size_t j = i + 1;
    while (j + 8 <= n) {
        uint64_t word = load_word(s + j), hit = bytes_equal(word, '"') | bytes_equal(word, '\\');
        if (!hit) {
            j += 8;
            continue;
        }
        j += (size_t)__builtin_ctzll(hit) >> 3;
        if (s[j] == '"') return j + 1;
        j += 2; /* a backslash escapes the byte after it */
    }
    for (; j < n; j++) {
        if (s[j] == '"') return j + 1;
        if (s[j] == '\\') j++;
    }
    return 0;
}

/* put for pieces of a few bytes (most leaves and structure runs), by fixed-size moves rather than a call. */
static inline void put_few(Buf *b, const unsigned char *p, size_t len) { /* after reserve */
    if (len <= 16)
        copy_short(b->data + b->len, p, (int64_t)len);
    else
        memcpy(b->data + b->len, p, len);
    b->len += len;
}

/* text.flatten of one content text: its skeleton onto skel, its leaves (each ended by 0x00) onto leaves. The
 * scan is text.LEAF's, alternative by alternative, at each position in turn (what re.split does). */
static int flatten_one(const unsigned char *s, size_t n, int keys_as_data, Buf *skel, Buf *leaves) {
    /* a hole takes at most a byte more than its leaf, and a leaf its 0x00 end: neither part outgrows 2n */
    if (reserve(skel, 2 * n) < 0 || reserve(leaves, 2 * n) < 0) return -1;
    for (size_t i = 0; i < n;) {
        size_t run = i; /* bytes that cannot start a leaf go to the skeleton in one copy */
        while (run < n && !LEAF_START[s[run]]) run++;
        if (run > i) {
            put_few(skel, s + i, run - i);
            i = run;
            continue;
        }
        unsigned c = s[i];
        size_t end = 0; /* the end of a leaf candidate starting at i, 0 for none */
        int key = 0;
        if (c == '"') {
            end = string_end(s, n, i); /* 0: unterminated, no match here */
            key = end && end < n && s[end] == ':';
        } else if (is_digit(c) || (c == '-' && i + 1 < n && is_digit(s[i + 1]))) {
            end = i + (c == '-') + 1;
            while (end < n && in_number(s[end])) end++;
        } else if (c == 't' || c == 'f' || c == 'n') {
            const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t len = strlen(word);
            if (n - i >= len && !memcmp(s + i, word, len)) end = i + len;
        }
        if (!end) {
            put_few(skel, s + i, 1);
            i++;
            continue;
        }
        if (c == '"' && key && !keys_as_data) { /* a key stays in the skeleton */
            put_few(skel, s + i, end + 1 - i);
        } else {
            int quoted = c == '"';
            const char *hole = !quoted ? "\0" : key ? "\"\0\":" : "\"\0\"";
            put_few(skel, (const unsigned char *)hole, !quoted ? 1 : key ? 4 : 3);
            put_few(leaves, s + i + quoted, end - i - 2 * quoted);
            leaves->data[leaves->len++] = 0;
        }
        i = end + key;
    }
    return 0;
}

/* How many bytes from p on pass test, 8 at a time; a byte that fails must come before the readable bytes end. */
static inline size_t run_of(const unsigned char *p, uint64_t (*test)(uint64_t)) {
    for (size_t n = 0;; n += 8) {
        uint64_t stop = ~test(load_word(p + n)) & HIGHS;
        if (stop) return n + ((size_t)__builtin_ctzll(stop) >> 3);
    }
}

/* The long base64 alternative at p, whose first `known` bytes are base64: its length, or `otherwise` when the run
 * is shorter than 20. */
static size_t base64_or(const unsigned char *p, size_t known, size_t otherwise) {
    size_t run = known + run_of(p + known, b64_bytes);
    if (run < 20) return otherwise;
    if (p[run] == '=') run += 1 + (p[run + 1] == '=');
    return run;
}

/* The length of the text.TOKEN match at p (the alternatives in order; every byte starts one), avail bytes before the
 * end of the leaf text. A leaf text ends with a 0x00, which no run holds, and keeps 8 readable bytes past its end
 * (pad), so runs are measured a word at a time and stop inside it. */
static inline size_t token_at(const unsigned char *p, size_t avail) {
    switch (TOKEN_START[*p]) {
    case T_ALPHA: {
        size_t word = run_of(p, alpha_bytes);
        return word < 20 && !is_b64(p[word]) ? word : base64_or(p, word, word);
    }
    case T_DIGIT: {
        size_t digits = run_of(p, digit_bytes);
        return digits < 20 && !is_b64(p[digits]) ? digits : base64_or(p, digits, digits);
    }
    case T_B64_SIGN:
        return base64_or(p, 1, 1);
    case T_SPACE:
        return is_alpha(p[1]) ? 1 + run_of(p + 1, alpha_bytes) : 1;
    case T_NEWLINE:
        return p[1] == ' ' ? 1 + run_of(p + 1, space_bytes) : 1;
    case T_HIGH:
        return run_of(p, high_bytes);
    case T_SIGIL: /* a ref: 43 base64 letters, then "=.sha256" or "=.ed25519" */
        if (avail >= 52 && p[44] == '=' && p[45] == '.' && run_of(p + 1, b64_bytes) == 43) {
            if (!memcmp(p + 46, "sha256", 6)) return 52;
            if (avail >= 53 && !memcmp(p + 46, "ed25519", 7)) return 53;
        }
        return 1;
    }
    return 1;
}

/* 8 zero bytes past the end of b, not counted in its length: what first_word and token_at read. */
static int pad(Buf *b) {
    if (reserve(b, 8) < 0) return -1;
    memset(b->data + b->len, 0, 8);
    return 0;
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

static int intern_grow(Intern *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    Interned *items = cap < ((size_t)1 << 31) ? PyMem_Realloc(t->items, cap * sizeof(Interned)) : NULL;
    if (items) t->items = items;
    Slot *slots = items ? PyMem_Calloc(2 * cap, sizeof(Slot)) : NULL;
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = 2 * cap - 1;
    t->cap = cap;
    for (size_t k = 0; k < t->n; k++) {
        const Interned *known = &t->items[k];
        place(slots, t->mask, known->hash, first_word(t->text.data + known->start, known->len), known->len, k);
    }
    return 0;
}

/* The index of the text p[:len] (p has 8 readable bytes past it), added when new; -1 on failure. */
static inline int64_t intern(Intern *t, const unsigned char *p, size_t len) {
    if (len == 1 && t->single[*p]) return t->single[*p] - 1;
    if (t->n == t->cap && intern_grow(t) < 0) return -1;
    if (len > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a token or skeleton of 4 GiB or more");
        return -1;
    }
    uint64_t head = first_word(p, len), h = hash_bytes(p, len);
    size_t at = h & t->mask;
    for (; t->slots[at].index; at = (at + 1) & t->mask) {
        const Slot *slot = &t->slots[at];
        if (slot->head == head && slot->len == len &&
            (len <= 8 || same_tail(t->text.data + t->items[slot->index - 1].start, p, len)))
            return slot->index - 1;
    }
    if (reserve(&t->text, len + 8) < 0) return -1;
    t->slots[at] = (Slot){head, (uint32_t)len, (uint32_t)(t->n + 1)};
    t->items[t->n] = (Interned){h, t->text.len, len};
    put(&t->text, p, len);
    memset(t->text.data + t->text.len, 0, 8); /* the padding */
    if (len == 1) t->single[*p] = (uint32_t)(t->n + 1);
    return (int64_t)t->n++;
}

/* The k-th distinct text of t as a new bytes object. */
static PyObject *interned_bytes(const Intern *t, size_t k) {
    return PyBytes_FromStringAndSize((const char *)t->text.data + t->items[k].start, t->items[k].len);
}

/* Cuts a padded leaf text into tokens, appending the index of each to stream (uint32: intern_grow keeps below 2**31
 * texts). */
static int tokenize(Intern *t, const Buf *leaves, Buf *stream) {
    if (reserve(stream, 4 * leaves->len) < 0) return -1; /* at most a token a byte */
    for (size_t i = 0; i < leaves->len;) {
        size_t len = token_at(leaves->data + i, leaves->len - i);
        int64_t k = intern(t, leaves->data + i, len);
        if (k < 0) return -1;
        uint32_t index = (uint32_t)k;
        memcpy(stream->data + stream->len, &index, 4);
        stream->len += 4;
        i += len;
    }
    return 0;
}

typedef struct { /* a token first met: its hash and first 8 bytes (zero-padded), where it lies, in how many blocks */
    uint64_t hash, head;
    const unsigned char *text;
    uint32_t len, count;
} Met;

/* repeated_tokens(texts, offsets, hashes) -> the tokens (bytes) met in more than one block, in the order first met:
 * what block._shared_candidates counts, without a Python object per token. Per block: its distinct tokens end to
 * end, their n + 1 int64 offsets and their int64 hash_bytes (what plan_block returns). */
static PyObject *repeated_tokens(PyObject *self, PyObject *args) {
    PyObject *texts, *offsets, *hashes, *out = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &texts, &PyList_Type, &offsets, &PyList_Type, &hashes))
        return NULL;
    Py_ssize_t n_blocks = PyList_GET_SIZE(texts), n_views = 0, total = 0;
    if (PyList_GET_SIZE(offsets) != n_blocks || PyList_GET_SIZE(hashes) != n_blocks) {
        PyErr_SetString(PyExc_ValueError, "repeated_tokens: texts, offsets and hashes of as many blocks");
        return NULL;
    }
    Py_buffer *views = PyMem_Calloc(3 * n_blocks + 1, sizeof(Py_buffer));
    Pieces *blocks = PyMem_Calloc(n_blocks + 1, sizeof(Pieces));
    uint64_t *slots = NULL; /* open addressing: a hash tag (high half) beside an index + 1 into met (0: empty) */
    Met *met = NULL;
    size_t n = 0, mask = 0;
    if (!views || !blocks) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t b = 0; b < n_blocks; b++) {
        Py_buffer *v = &views[3 * b];
        PyObject *parts[3] = {PyList_GET_ITEM(texts, b), PyList_GET_ITEM(offsets, b), PyList_GET_ITEM(hashes, b)};
        for (int k = 0; k < 3; k++, n_views++)
            if (PyObject_GetBuffer(parts[k], &v[k], PyBUF_SIMPLE) < 0) goto done;
        if (pieces_of(&blocks[b], &v[0], &v[1], "repeated_tokens") < 0) goto done;
        if (v[2].len != 8 * blocks[b].n) {
            PyErr_SetString(PyExc_ValueError, "repeated_tokens: one int64 hash per token");
            goto done;
        }
        total += blocks[b].n;
    }
    if ((uint64_t)total >= UINT32_MAX / 2) {
        PyErr_NoMemory(); /* indexes and lengths are 32-bit */
        goto done;
    }
    size_t size = 16;
    while (2 * size < 3 * (size_t)total) size *= 2; /* no fuller than 2/3, and less as tokens repeat */
    mask = size - 1;
    slots = PyMem_Calloc(size, sizeof(uint64_t));
    met = PyMem_Malloc((total + 1) * sizeof(Met));
    if (!slots || !met) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t b = 0; b < n_blocks; b++) {
        const Pieces *block = &blocks[b];
        const unsigned char *h = views[3 * b + 2].buf;
        for (Py_ssize_t k = 0; k < block->n; k++) {
            if (k + 16 < block->n) { /* most lookups miss the cache: fetch the slots a few tokens ahead */
                uint64_t ahead;
                memcpy(&ahead, h + 8 * (k + 16), 8);
                __builtin_prefetch(&slots[ahead & mask]);
            }
            const unsigned char *tok;
            int64_t len;
            uint64_t key;
            if (piece(block, k, &tok, &len) < 0 || len > UINT32_MAX) {
                PyErr_SetString(PyExc_ValueError, "repeated_tokens: offsets outside the texts");
                goto done;
            }
            memcpy(&key, h + 8 * k, 8);
            uint64_t head = 0, tag = key & 0xFFFFFFFF00000000ULL;
            memcpy(&head, tok, len < 8 ? len : 8);
            size_t at = key & mask;
            for (; slots[at]; at = (at + 1) & mask) {
                const Met *known = &met[(slots[at] & 0xFFFFFFFF) - 1];
                if ((slots[at] & 0xFFFFFFFF00000000ULL) == tag && known->hash == key && known->len == len &&
                    known->head == head && (len <= 8 || same_tail(known->text, tok, len)))
                    break;
            }
            if (!slots[at]) {
                slots[at] = tag | ++n;
                met[n - 1] = (Met){key, head, tok, (uint32_t)len, 0};
            }
            met[(slots[at] & 0xFFFFFFFF) - 1].count++;
        }
    }
    if (!(out = PyList_New(0))) goto done;
    for (size_t k = 0; k < n; k++) {
        PyObject *tok = met[k].count > 1 ? PyBytes_FromStringAndSize((const char *)met[k].text, met[k].len) : NULL;
        if (met[k].count > 1 && (!tok || PyList_Append(out, tok) < 0)) {
            Py_XDECREF(tok);
            Py_CLEAR(out);
            break;
        }
        Py_XDECREF(tok);
    }
done:
    for (Py_ssize_t k = 0; views && k < n_views; k++) PyBuffer_Release(&views[k]);
    PyMem_Free(views);
    PyMem_Free(blocks);
    PyMem_Free(slots);
    PyMem_Free(met);
    return out;
}

/* token_slots(data, offsets) -> the table encode_column finds shared tokens by (the pieces of data and offsets,
 * each distinct): a power of two of Slots, at least twice as many as tokens, placed as intern places them. */
static PyObject *token_slots(PyObject *self, PyObject *args) {
    Py_buffer data, offsets;
    if (!PyArg_ParseTuple(args, "y*y*", &data, &offsets)) return NULL;
    Pieces p;
    Buf padded = {0};
    PyObject *out = NULL;
    if (pieces_of(&p, &data, &offsets, "token_slots") < 0 || reserve(&padded, data.len + 8) < 0) goto done;
    put(&padded, data.buf, data.len);
    memset(padded.data + data.len, 0, 8); /* the padding first_word reads */
    size_t size = 16;
    while (size < 2 * (size_t)p.n) size *= 2;
    if (!(out = PyBytes_FromStringAndSize(NULL, size * sizeof(Slot)))) goto done;
    memset(PyBytes_AS_STRING(out), 0, size * sizeof(Slot));
    for (Py_ssize_t k = 0; k < p.n; k++) {
        const unsigned char *tok;
        int64_t len;
        if (piece(&p, k, &tok, &len) < 0 || len > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "token_slots: offsets outside the data");
            Py_CLEAR(out);
            goto done;
        }
        const unsigned char *text = padded.data + (tok - p.data);
        place((Slot *)PyBytes_AS_STRING(out), size - 1, hash_bytes(text, len), first_word(text, len), len, k);
    }
done:
    PyMem_Free(padded.data);
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    return out;
}

/* The id of the shared token tok, whose hash_bytes is h, in a token_slots table (made of these shared tokens), or
 * -1. A slot's first 8 bytes and length are the whole of a short token: only longer ones are compared with the
 * dictionary's text. */
static int64_t find_shared(const Py_buffer *slots, const Pieces *shared, const unsigned char *tok, size_t len,
                           uint64_t h) {
    const Slot *slot = slots->buf;
    size_t mask = slots->len / sizeof(Slot) - 1;
    uint64_t head = 0;
    memcpy(&head, tok, len < 8 ? len : 8); /* tok is a bytes object's: no padding to read a whole word from */
    for (size_t at = h & mask, probes = 0; slot[at].index && probes <= mask; at = (at + 1) & mask, probes++) {
        int64_t k = (int64_t)slot[at].index - 1, size;
        if (slot[at].head != head || slot[at].len != len || k >= shared->n) continue;
        if (len <= 8) return k;
        const unsigned char *start;
        if (piece(shared, k, &start, &size) == 0 && (size_t)size == len && same_tail(start, tok, len))
            return k;
    }
    return -1;
}

/* --- classify ------------------------------------------------------------------------------------------------ */

/* The bytes of canonical base64 (what b64encode gives back exactly) into raw; -1 when text is not canonical. */
/* text.entry_of: the kind of a token without the shared dictionary, and its payload (the token itself, or its
 * decoded bytes written to raw, which holds len bytes). */
static int entry_of(const unsigned char *tok, size_t len, unsigned char *raw, const unsigned char **payload,
                    size_t *size) {
    Py_ssize_t got;
    if (len >= 52 && tok[44] == '=') {
        for (int kind = MSG_REF; kind <= BLOB_REF; kind++) {
            size_t suffix = strlen(SUFFIXES[kind]);
            if (tok[0] == SIGILS[kind][0] && len == 45 + suffix && !memcmp(tok + 45, SUFFIXES[kind], suffix) &&
                (got = canonical_b64(tok + 1, 44, raw)) >= 0) {
                *payload = raw, *size = got;
                return kind;
            }
        }
    }
    if (len >= 20 && !memchr(" \n%&@", tok[0], 5) && (got = canonical_b64(tok, len, raw)) >= 0) {
        *payload = raw, *size = got;
        return BASE64;
    }
    *payload = tok, *size = len;
    return LITERAL;
}

/* shared_entries(tokens) -> text.shared_entry of each token: its kind byte, then its payload. */
static PyObject *shared_entries(PyObject *self, PyObject *tokens) {
    if (!PyList_Check(tokens)) {
        PyErr_SetString(PyExc_TypeError, "shared_entries takes a list of bytes");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    PyObject *out = PyList_New(n);
    Buf raw = {0}, entry = {0};
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *tok = PyList_GET_ITEM(tokens, i), *item = NULL;
        if (!PyBytes_Check(tok)) {
            PyErr_SetString(PyExc_TypeError, "shared_entries takes a list of bytes");
        } else if (raw.len = 0, entry.len = 0, reserve(&raw, PyBytes_GET_SIZE(tok)) == 0) {
            const unsigned char *payload;
            size_t size;
            unsigned char kind = (unsigned char)entry_of((const unsigned char *)PyBytes_AS_STRING(tok),
                                                         PyBytes_GET_SIZE(tok), raw.data, &payload, &size);
            if (put_bytes(&entry, &kind, 1) == 0 && put_bytes(&entry, payload, size) == 0)
                item = PyBytes_FromStringAndSize((const char *)entry.data, entry.len);
        }
        if (!item) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
    PyMem_Free(raw.data);
    PyMem_Free(entry.data);
    return out;
}

/* --- encode_column ------------------------------------------------------------------------------------------- */

/* The canonical StreamVByte of values: (n + 3) / 4 code bytes into codes, and each value into data in the fewest of
 * 1, 2, 3 or 4 bytes ("1234", every value below 2**32), or of 1, 2, 4 or 8 when wide ("1248"); data has room for 4
 * or 8 bytes a value. The bytes written to data, or -1 (a ValueError set) when a value does not fit. */
static Py_ssize_t svb_into(const uint64_t *values, Py_ssize_t n, int wide, unsigned char *codes, unsigned char *data) {
    memset(codes, 0, (n + 3) / 4);
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t x = values[i];
        if (!wide && x >> 32) {
            PyErr_Format(PyExc_ValueError, "StreamVByte1234: %llu does not fit", (unsigned long long)x);
            return -1;
        }
        int code = (x >= 1 << 8) + (x >= 1 << 16) + (wide ? x >= (uint64_t)1 << 32 : x >= 1 << 24);
        int width = wide ? 1 << code : code + 1;
        codes[i / 4] |= code << 2 * (i % 4);
        for (int b = 0; b < width; b++) data[len++] = (unsigned char)(x >> 8 * b);
    }
    return len;
}

/* svb_into as two new bytes objects. */
static int svb_encode(const uint64_t *values, Py_ssize_t n, int wide, PyObject **codes, PyObject **data) {
    *codes = PyBytes_FromStringAndSize(NULL, (n + 3) / 4);
    *data = PyBytes_FromStringAndSize(NULL, (wide ? 8 : 4) * n);
    if (!*codes || !*data) return -1;
    Py_ssize_t len = svb_into(values, n, wide, (unsigned char *)PyBytes_AS_STRING(*codes),
                              (unsigned char *)PyBytes_AS_STRING(*data));
    return len < 0 ? -1 : _PyBytes_Resize(data, len);
}

/* svb_encode(values, wide) -> (codes, values): the canonical StreamVByte of a uint64 buffer (svb.encode). */
static PyObject *svb_encode_py(PyObject *self, PyObject *args) {
    Py_buffer values;
    int wide;
    if (!PyArg_ParseTuple(args, "y*p", &values, &wide)) return NULL;
    PyObject *codes = NULL, *data = NULL, *out = NULL;
    if (values.len % 8)
        PyErr_SetString(PyExc_ValueError, "svb_encode: not a buffer of uint64");
    else if (svb_encode(values.buf, values.len / 8, wide, &codes, &data) == 0)
        out = PyTuple_Pack(2, codes, data);
    Py_XDECREF(codes);
    Py_XDECREF(data);
    PyBuffer_Release(&values);
    return out;
}

/* The tokens by falling count, ties by first appearance (a stable order): a counting sort, since counts are at
 * most the stream's length. -1 when a count is out of range. */
static int rank_tokens(const int64_t *count, Py_ssize_t n, Py_ssize_t n_stream, int64_t *order) {
    int64_t top = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (count[k] < 0 || count[k] > n_stream) return -1;
        top = count[k] > top ? count[k] : top;
    }
    int64_t *starts = PyMem_Calloc(top + 2, sizeof(int64_t));
    if (!starts) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) starts[top - count[k] + 1]++; /* bucket top - count: falling counts */
    for (int64_t b = 1; b <= top + 1; b++) starts[b] += starts[b - 1];
    for (Py_ssize_t k = 0; k < n; k++) order[starts[top - count[k]]++] = k;
    PyMem_Free(starts);
    return 0;
}

/* dense.best_s: the stopper count that codes the ranks in the fewest bytes (ties: the smaller). */
static int best_s(const int64_t *tail, int64_t alphabet) {
    int best = 0;
    int64_t best_size = -1;
    for (int s = 1; s < 256; s++) {
        int64_t bases[5] = {0}, width = s, size = 0;
        for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= 256 - s;
        if (bases[4] < alphabet) continue;
        for (int len = 0; len < 4; len++) size += tail[bases[len] < alphabet ? bases[len] : alphabet];
        if (best_size < 0 || size < best_size) best = s, best_size = size;
    }
    return best;
}

typedef struct { /* an (s,c)-dense codeword: len bytes, zero-padded to four */
    unsigned char bytes[4], len;
} Codeword;

typedef struct { /* a block dictionary entry: its kind, and its shared id or where its payload is */
    int kind;
    int64_t at, size;
} Entry;

/* encode_column(data, offsets, hashes, stream, shared_data, shared_offsets, shared_slots, skeleton_ids) ->
 * the ten parts of text.TextColumn. The block's distinct tokens come end to end with their n + 1 offsets, hashes
 * holds the hash_bytes of each as int64; the shared TOKEN dictionary comes as its tokens end to end and their
 * token_slots table. */
static PyObject *encode_column(PyObject *self, PyObject *args) {
    Py_buffer data, offsets, hashes, stream, shared_data, shared_offsets, slots, skeletons;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*", &data, &offsets, &hashes, &stream, &shared_data, &shared_offsets,
                          &slots, &skeletons))
        return NULL;
    Pieces distinct, shared;
    Py_ssize_t n = 0, n_stream = stream.len / 4, n_skel = skeletons.len / 8;
    PyObject *parts[10] = {0}, *result = NULL;
    int64_t *order = NULL, *rank_of = NULL, *occurrences = NULL, *tail = NULL, *ids = NULL, *sizes = NULL;
    int64_t *skel = NULL;
    Entry *entries = NULL;
    Buf kinds = {0}, payload = {0}, ranks = {0}, own = {0}; /* own: the payloads of the entries not shared */
    unsigned char *raw = NULL;
    if (pieces_of(&distinct, &data, &offsets, "encode_column") < 0 ||
        pieces_of(&shared, &shared_data, &shared_offsets, "encode_column") < 0)
        goto done;
    n = distinct.n;
    if (hashes.len != 8 * n || stream.len % 4 || (uintptr_t)stream.buf % 4 || skeletons.len % 8 ||
        slots.len < (Py_ssize_t)sizeof(Slot) || slots.len & (slots.len - 1) || (uintptr_t)slots.buf % _Alignof(Slot)) {
        PyErr_SetString(PyExc_ValueError, "encode_column: one int64 hash per token, an aligned uint32 stream, int64 "
                                          "skeleton ids, and a token_slots table");
        goto done;
    }
    order = PyMem_Malloc((n + 1) * sizeof(int64_t));
    rank_of = PyMem_Malloc((n + 1) * sizeof(int64_t));
    occurrences = PyMem_Calloc(n + 1, sizeof(int64_t));
    tail = PyMem_Calloc(n + 1, sizeof(int64_t));
    ids = PyMem_Malloc((n + 1) * sizeof(int64_t));
    sizes = PyMem_Malloc((n + 1) * sizeof(int64_t));
    skel = PyMem_Malloc((n_skel + 1) * sizeof(int64_t));
    if (!order || !rank_of || !occurrences || !tail || !ids || !sizes || !skel) {
        PyErr_NoMemory();
        goto done;
    }
    const uint32_t *tokens = stream.buf;
    for (Py_ssize_t i = 0; i < n_stream; i++) {
        if (tokens[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "encode_column: a token index beyond the tokens");
            goto done;
        }
        occurrences[tokens[i]]++;
    }
    if (rank_tokens(occurrences, n, n_stream, order) < 0) goto done;
    /* Each token's entry in the order met (the tokens lie in memory in that order), then the entries by rank. */
    entries = PyMem_Malloc((n + 1) * sizeof(Entry));
    if (!entries) {
        PyErr_NoMemory();
        goto done;
    }
    size_t raw_cap = 0, mask = slots.len / sizeof(Slot) - 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k + 8 < n) { /* the lookups wait on memory: fetch the slots a few tokens ahead */
            uint64_t ahead;
            memcpy(&ahead, (const char *)hashes.buf + 8 * (k + 8), 8);
            __builtin_prefetch((const Slot *)slots.buf + (ahead & mask));
        }
        const unsigned char *text;
        int64_t length;
        if (piece(&distinct, k, &text, &length) < 0) {
            PyErr_SetString(PyExc_ValueError, "encode_column: token offsets outside the tokens");
            goto done;
        }
        size_t len = (size_t)length;
        uint64_t h;
        memcpy(&h, (const char *)hashes.buf + 8 * k, 8);
        int64_t id = find_shared(&slots, &shared, text, len, h);
        if (id >= 0) {
            entries[k] = (Entry){SHARED, id, 0};
            continue;
        }
        if (len > raw_cap) {
            unsigned char *grown = PyMem_Realloc(raw, len);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            raw = grown, raw_cap = len;
        }
        const unsigned char *bytes;
        size_t size;
        int kind = entry_of(text, len, raw, &bytes, &size);
        entries[k] = (Entry){kind, (int64_t)own.len, (int64_t)size};
        if (put_bytes(&own, bytes, size) < 0) goto done;
    }
    Py_ssize_t n_ids = 0, n_sizes = 0;
    if (reserve(&kinds, n) < 0 || reserve(&payload, own.len) < 0) goto done;
    for (Py_ssize_t r = 0; r < n; r++) {
        const Entry *e = &entries[order[r]];
        rank_of[order[r]] = r;
        kinds.data[kinds.len++] = (unsigned char)e->kind;
        if (e->kind == SHARED) {
            ids[n_ids++] = e->at;
            continue;
        }
        put(&payload, own.data + e->at, e->size);
        if (e->kind == LITERAL || e->kind == BASE64) sizes[n_sizes++] = e->size;
    }
    for (Py_ssize_t k = 0; k < n; k++) tail[rank_of[k]] = occurrences[k];
    for (Py_ssize_t r = n - 1; r >= 0; r--) tail[r] += tail[r + 1]; /* tail[r]: how many ranks are >= r */
    int s = best_s(tail, n);
    if (!s) {
        PyErr_Format(PyExc_ValueError, "%zd distinct tokens do not fit a 4-byte dense code", n);
        goto done;
    }
    int64_t bases[5] = {0}, width = s, c = 256 - s;
    for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= c;
    /* dense.encode: each rank's codeword once, then one 4-byte copy a token */
    Codeword *codeword = PyMem_Malloc((n + 1) * sizeof(Codeword));
    if (!codeword || reserve(&ranks, 4 * n_stream + 8) < 0) {
        PyMem_Free(codeword);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) { /* by token, so that the stream is coded with one lookup a token */
        int64_t rank = rank_of[k];
        int len = 1;
        while (len < 4 && rank >= bases[len]) len++;
        int64_t rest = rank - bases[len - 1], digits = rest / s;
        Codeword *w = &codeword[k];
        memset(w, 0, sizeof *w);
        w->bytes[len - 1] = (unsigned char)(rest % s);
        for (int back = 1; back < len; back++, digits /= c) w->bytes[len - 1 - back] = (unsigned char)(s + digits % c);
        w->len = (unsigned char)len;
    }
    for (Py_ssize_t i = 0; i < n_stream; i++) {
        const Codeword *w = &codeword[tokens[i]];
        memcpy(ranks.data + ranks.len, w->bytes, 4); /* the buffer keeps room for a whole word past the last one */
        ranks.len += w->len;
    }
    PyMem_Free(codeword);
    memcpy(skel, skeletons.buf, skeletons.len);
    unsigned char s_byte = (unsigned char)s;
    if (!(parts[0] = PyBytes_FromStringAndSize((const char *)kinds.data, kinds.len)) ||
        svb_encode((uint64_t *)ids, n_ids, 0, &parts[1], &parts[2]) < 0 ||
        svb_encode((uint64_t *)sizes, n_sizes, 0, &parts[3], &parts[4]) < 0 ||
        !(parts[5] = PyBytes_FromStringAndSize((const char *)payload.data, payload.len)) ||
        !(parts[6] = PyBytes_FromStringAndSize((const char *)&s_byte, 1)) ||
        !(parts[7] = PyBytes_FromStringAndSize((const char *)ranks.data, ranks.len)) ||
        svb_encode((uint64_t *)skel, n_skel, 0, &parts[8], &parts[9]) < 0)
        goto done;
    result = PyTuple_New(10);
    for (int k = 0; result && k < 10; k++) PyTuple_SET_ITEM(result, k, Py_NewRef(parts[k]));
done:
    for (int k = 0; k < 10; k++) Py_XDECREF(parts[k]);
    PyMem_Free(order);
    PyMem_Free(rank_of);
    PyMem_Free(occurrences);
    PyMem_Free(tail);
    PyMem_Free(ids);
    PyMem_Free(sizes);
    PyMem_Free(skel);
    PyMem_Free(entries);
    PyMem_Free(kinds.data);
    PyMem_Free(payload.data);
    PyMem_Free(own.data);
    PyMem_Free(ranks.data);
    PyMem_Free(raw);
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&stream);
    PyBuffer_Release(&shared_data);
    PyBuffer_Release(&shared_offsets);
    PyBuffer_Release(&slots);
    PyBuffer_Release(&skeletons);
    return result;
}

/* --- block_blob ----------------------------------------------------------------------------------------------- */

/* A FlatBuffer built back to front, byte for byte as Python's flatbuffers.Builder lays it out for the same calls
 * (the canonical layout of docs/archive-format.md §3): the same padding before each value, and each table closed
 * with the same vtable, or pointed at an equal one written before. The bytes built so far are the last len of the
 * cap bytes at data; offsets count from the end, as the Python builder's do. A call after a failure does nothing:
 * failed is -1 when an error is set, 1 when a value does not fit its field (or the buffer passes the Python
 * builder's 2 GiB), which the Python route then reports. */
typedef struct {
    unsigned char *data;
    size_t cap, len, minalign;
    size_t object_end, fields[6]; /* the open table: where it started, and where each field is (0: absent) */
    int n_fields, failed;
    size_t *vtables; /* where each vtable written is */
    size_t n_vtables, vtables_cap;
} Builder;

#define BUILDER_MAX ((size_t)1 << 31)

/* Room for n more bytes in front of those built: where they go, or NULL after a failure. */
static unsigned char *b_room(Builder *b, size_t n) {
    if (b->failed) return NULL;
    if (n > BUILDER_MAX - b->len) {
        b->failed = 1;
        return NULL;
    }
    if (b->cap - b->len < n) {
        size_t cap = 2 * b->cap;
        while (cap - b->len < n) cap *= 2;
        unsigned char *grown = PyMem_Malloc(cap);
        if (!grown) {
            PyErr_NoMemory();
            b->failed = -1;
            return NULL;
        }
        memcpy(grown + cap - b->len, b->data + b->cap - b->len, b->len);
        PyMem_Free(b->data);
        b->data = grown, b->cap = cap;
    }
    b->len += n;
    return b->data + b->cap - b->len;
}

/* Builder.Prep: zeros so that, after `additional` bytes more, a value of `size` bytes is aligned. */
static void b_prep(Builder *b, size_t size, size_t additional) {
    b->minalign = size > b->minalign ? size : b->minalign;
    size_t pad = (0 - (b->len + additional)) & (size - 1);
    unsigned char *at = b_room(b, pad);
    if (at) memset(at, 0, pad);
}

static void b_place(Builder *b, uint64_t value, size_t width) { /* little-endian, as the host */
    unsigned char *at = b_room(b, width);
    if (at) memcpy(at, &value, width);
}

static void b_scalar(Builder *b, uint64_t value, size_t width) {
    b_prep(b, width, 0);
    b_place(b, value, width);
}

static void b_uoffset(Builder *b, size_t target) { /* PrependUOffsetTRelative */
    b_prep(b, 4, 0);
    b_place(b, b->len - target + 4, 4);
}

static size_t b_bytes(Builder *b, const void *p, size_t n) { /* CreateByteVector */
    b_prep(b, 4, n);
    unsigned char *at = b_room(b, n);
    if (at && n) memcpy(at, p, n);
    b_place(b, n, 4);
    return b->len;
}

static size_t b_hash(Builder *b, const unsigned char digest[32]) { /* flat.put_hash: a Hash32 struct */
    b_prep(b, 1, 32);
    unsigned char *at = b_room(b, 32);
    if (at) memcpy(at, digest, 32);
    return b->len;
}

static void b_start(Builder *b, int n_fields) {
    memset(b->fields, 0, sizeof b->fields);
    b->n_fields = n_fields;
    b->object_end = b->len;
}

static void b_field(Builder *b, int i) { b->fields[i] = b->len; }

static void b_add_scalar(Builder *b, int i, uint64_t value, size_t width) { /* defaults (0) are left out */
    if (!value) return;
    if (width < 8 && value >> 8 * width && !b->failed) b->failed = 1;
    b_scalar(b, value, width);
    b_field(b, i);
}

static void b_add_offset(Builder *b, int i, size_t target) {
    b_uoffset(b, target);
    b_field(b, i);
}

/* Builder.EndObject: the table's offset. */
static size_t b_end(Builder *b) {
    b_scalar(b, 0, 4); /* where the table's vtable offset goes */
    if (b->failed) return 0;
    size_t object = b->len, object_size = object - b->object_end;
    int n = b->n_fields;
    while (n > 0 && !b->fields[n - 1]) n--; /* trailing absent fields take no vtable entry */
    uint16_t vtable[2 + 6] = {(uint16_t)(2 * (n + 2)), (uint16_t)object_size};
    int fits = object_size <= UINT16_MAX;
    for (int i = 0; i < n; i++) {
        size_t at = b->fields[i] ? object - b->fields[i] : 0;
        fits = fits && at <= UINT16_MAX;
        vtable[2 + i] = (uint16_t)at;
    }
    if (!fits) {
        b->failed = 1;
        return 0;
    }
    size_t size = 2 * (n + 2), shared = 0;
    for (size_t k = 0; k < b->n_vtables && !shared; k++) {
        const unsigned char *known = b->data + b->cap - b->vtables[k];
        uint16_t known_size;
        memcpy(&known_size, known, 2);
        if (known_size == size && !memcmp(known, vtable, size)) shared = b->vtables[k];
    }
    if (!shared) {
        for (int i = n + 1; i >= 0; i--) b_scalar(b, vtable[i], 2);
        if (b->n_vtables == b->vtables_cap) {
            size_t cap = b->vtables_cap ? 2 * b->vtables_cap : 16;
            size_t *grown = PyMem_Realloc(b->vtables, cap * sizeof(size_t));
            if (!grown) {
                PyErr_NoMemory();
                b->failed = -1;
            }
            b->vtables = grown ? grown : b->vtables, b->vtables_cap = grown ? cap : b->vtables_cap;
        }
        if (b->failed) return 0;
        b->vtables[b->n_vtables++] = shared = b->len;
    }
    int32_t to_vtable = (int32_t)((int64_t)shared - (int64_t)object);
    memcpy(b->data + b->cap - object, &to_vtable, 4);
    return object;
}

/* Builder.Finish with a file identifier. */
static void b_finish(Builder *b, size_t root, const char identifier[4]) {
    b_prep(b, b->minalign, 8);
    b_prep(b, 4, 4);
    unsigned char *at = b_room(b, 4);
    if (at) memcpy(at, identifier, 4);
    b_uoffset(b, root);
}

/* flat.finish: the Bip2Blob of version 1 around a table of the union type data_type, as bytes; None when a value
 * did not fit its field (the Python builder then names it), NULL with an error set. */
static PyObject *b_blob(Builder *b, int data_type, size_t data) {
    b_start(b, 3);
    b_add_scalar(b, 0, 1, 2);
    b_add_scalar(b, 1, data_type, 1);
    b_add_offset(b, 2, data);
    b_finish(b, b_end(b), "BIP2");
    if (b->failed) return b->failed > 0 ? Py_NewRef(Py_None) : NULL;
    return PyBytes_FromStringAndSize((const char *)b->data + b->cap - b->len, (Py_ssize_t)b->len);
}

/* flat.put_svb: a StreamVByte1234 table of values (StreamVByte1248 when wide), coded in scratch, which has room
 * for (n + 3) / 4 + 8 * n bytes. */
static size_t b_svb(Builder *b, const uint64_t *values, size_t n, int wide, unsigned char *scratch) {
    Py_ssize_t n_codes = (n + 3) / 4, n_values = b->failed ? 0 : svb_into(values, n, wide, scratch, scratch + n_codes);
    if (n_values < 0) b->failed = -1;
    size_t codes = b_bytes(b, scratch, n_codes), data = b_bytes(b, scratch + n_codes, n_values);
    b_start(b, 2);
    b_add_offset(b, 0, codes);
    b_add_offset(b, 1, data);
    return b_end(b);
}

/* flat.put_rle: a RunLengthColumn of the maximal runs of n int64 ids (runs and lengths: room for n values each). */
static size_t b_runs(Builder *b, const Py_buffer *ids, size_t n, uint64_t *runs, uint64_t *lengths,
                     unsigned char *scratch) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = (uint64_t)at64(ids, i);
        if (!k || runs[k - 1] != id) runs[k] = id, lengths[k++] = 0;
        lengths[k - 1]++;
    }
    size_t values_at = b_svb(b, runs, k, 0, scratch), lengths_at = b_svb(b, lengths, k, 0, scratch);
    b_start(b, 3);
    b_add_scalar(b, 0, n, 4);
    b_add_offset(b, 1, values_at);
    b_add_offset(b, 2, lengths_at);
    return b_end(b);
}

/* flat.put_sketch: a MessageBlockSketch. */
static size_t b_sketch(Builder *b, uint64_t length, uint64_t base, uint64_t first, uint64_t last) {
    b_start(b, 4);
    b_add_scalar(b, 0, length, 4);
    b_add_scalar(b, 1, base, 4);
    b_add_scalar(b, 2, first, 8);
    b_add_scalar(b, 3, last, 8);
    return b_end(b);
}

typedef struct { /* a dictionary chain head, as flat.DictRef */
    uint64_t kind, size;
    const unsigned char *blob_id;
} Head;

/* flat.put_dict_set of the six chain heads (a NULL blob_id: the chain is empty). */
static size_t b_dict_set(Builder *b, const Head heads[6]) {
    size_t at[6] = {0};
    for (int k = 0; k < 6; k++) {
        if (!heads[k].blob_id) continue;
        b_start(b, 3);
        b_add_scalar(b, 0, heads[k].kind, 1);
        b_hash(b, heads[k].blob_id);
        b_field(b, 1);
        b_add_scalar(b, 2, heads[k].size, 4);
        at[k] = b_end(b);
    }
    b_start(b, 6);
    for (int k = 0; k < 6; k++)
        if (heads[k].blob_id) b_add_offset(b, k, at[k]);
    return b_end(b);
}

/* BitWidth.U of flexbuffers: the log2 of the fewest bytes (1, 2, 4, 8) that hold value. */
static int flex_width(uint64_t value) { return value < 1 << 8 ? 0 : value < 1 << 16 ? 1 : value >> 32 ? 3 : 2; }

static size_t flex_pad(size_t at, size_t width) { return (0 - at) & (width - 1); }

/* Value.ElemWidth: the width of an offset to loc stored elem_index slots into a vector laid out from size. */
static int flex_offset_width(size_t size, size_t elem_index, size_t loc) {
    for (int w = 0; w < 4; w++) {
        size_t width = (size_t)1 << w, slot = size + flex_pad(size, width) + elem_index * width;
        if (flex_width(slot - loc) == w) return w;
    }
    return -1; /* flexbuffers raises: the offset is too big */
}

static void flex_put(Buf *out, uint64_t value, size_t width) { /* little-endian, after reserve */
    memset(out->data + out->len, 0, flex_pad(out->len, width));
    out->len += flex_pad(out->len, width);
    memcpy(out->data + out->len, &value, width);
    out->len += width;
}

/* block._flex_messages: the ten parts as a FlexBuffer vector of blobs, as flexbuffers.Builder lays it out. */
static int flex_blobs(PyObject *const *parts, Buf *out) {
    size_t loc[10], room = 128;
    int width[10], vector_width = 0; /* flexbuffers' narrowest, which holds the vector's size, 10 */
    for (int k = 0; k < 10; k++) room += PyBytes_GET_SIZE(parts[k]) + 16;
    out->len = 0;
    if (reserve(out, room) < 0) return -1;
    for (int k = 0; k < 10; k++) {
        size_t len = PyBytes_GET_SIZE(parts[k]);
        width[k] = flex_width(len);
        flex_put(out, len, (size_t)1 << width[k]);
        loc[k] = out->len;
        put(out, PyBytes_AS_STRING(parts[k]), len);
    }
    for (int k = 0; k < 10; k++) {
        int w = flex_offset_width(out->len, 1 + k, loc[k]);
        vector_width = w > vector_width ? w : vector_width;
        if (w < 0) return 1;
    }
    size_t slot = (size_t)1 << vector_width;
    flex_put(out, 10, slot);
    size_t vector = out->len;
    for (int k = 0; k < 10; k++) flex_put(out, out->len - loc[k], slot);
    for (int k = 0; k < 10; k++) out->data[out->len++] = (unsigned char)(25 << 2 | width[k]); /* BLOB */
    int root_width = flex_offset_width(out->len, 0, vector);
    if (root_width < 0) return 1;
    flex_put(out, out->len - vector, (size_t)1 << root_width);
    out->data[out->len++] = (unsigned char)(10 << 2 | vector_width); /* VECTOR */
    out->data[out->len++] = (unsigned char)(1 << root_width);
    return 0;
}

/* Whether an int lies in 0..max (its value into *value). */
static int fits_in(PyObject *number, uint64_t max, uint64_t *value) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
    *value = (uint64_t)v;
    return !overflow && v >= 0 && (uint64_t)v <= max;
}

/* The 32 bytes of a hash argument (None allowed when may_be_none: NULL then), or -1 with a ValueError. */
static int hash_arg(PyObject *arg, int may_be_none, const unsigned char **digest) {
    *digest = NULL;
    if (arg == Py_None && may_be_none) return 0;
    if (!PyBytes_Check(arg) || PyBytes_GET_SIZE(arg) != 32) {
        PyErr_SetString(PyExc_ValueError, "a Hash32 holds 32 bytes");
        return -1;
    }
    *digest = (const unsigned char *)PyBytes_AS_STRING(arg);
    return 0;
}

/* The dictionary chain heads argument: six None or (kind, blob id, size); 1 when a value does not fit its field. */
static int heads_arg(PyObject *heads, Head out[6]) {
    if (PyTuple_GET_SIZE(heads) != 6) {
        PyErr_SetString(PyExc_ValueError, "six dictionary heads, each None or (kind, blob id, size)");
        return -1;
    }
    int fits = 1;
    for (int k = 0; k < 6; k++) {
        PyObject *head = PyTuple_GET_ITEM(heads, k), *kind, *blob_id, *size;
        out[k] = (Head){0};
        if (head == Py_None) continue;
        if (!PyArg_ParseTuple(head, "O!OO!", &PyLong_Type, &kind, &blob_id, &PyLong_Type, &size) ||
            hash_arg(blob_id, 0, &out[k].blob_id) < 0)
            return -1;
        fits = fits_in(kind, UINT8_MAX, &out[k].kind) && fits_in(size, UINT32_MAX, &out[k].size) && fits;
    }
    return !fits;
}

/* block_blob(sequence_base, timestamps, type_ids, signature_ids, signatures, author, previous, last_hash, parts,
 * heads) -> the MessageBlock blob that block.encode_block's builder route makes of the same fields, or None when a
 * value does not fit its field (that route reports it). timestamps and the id columns: int64, one per message;
 * author, previous (None for the first block of a feed) and last_hash: 32 bytes; parts: the content column's ten
 * parts (text.TextColumn.parts); heads: the six dictionary chain heads, each None or (kind, blob id, size). */
static PyObject *block_blob(PyObject *self, PyObject *args) {
    PyObject *base_arg, *author_arg, *previous_arg, *last_arg, *parts, *heads_obj, *result = NULL;
    Py_buffer stamps, types, sigs, signatures;
    if (!PyArg_ParseTuple(args, "O!y*y*y*y*OOOO!O!", &PyLong_Type, &base_arg, &stamps, &types, &sigs, &signatures,
                          &author_arg, &previous_arg, &last_arg, &PyTuple_Type, &parts, &PyTuple_Type, &heads_obj))
        return NULL;
    Builder b = {0};
    Buf flex = {0};
    uint64_t *columns = NULL;
    unsigned char *scratch = NULL;
    const unsigned char *author, *previous, *last_hash;
    Head heads[6];
    size_t n = stamps.len / 8;
    uint64_t base;
    int misfit; /* a dictionary head that does not fit its fields */
    if (stamps.len % 8 || !n || types.len != stamps.len || sigs.len != stamps.len) {
        PyErr_SetString(PyExc_ValueError, "block_blob: one int64 timestamp, type id and signature id per message");
        goto done;
    }
    if (hash_arg(author_arg, 0, &author) < 0 || hash_arg(previous_arg, 1, &previous) < 0 ||
        hash_arg(last_arg, 0, &last_hash) < 0 || (misfit = heads_arg(heads_obj, heads)) < 0)
        goto done;
    if (PyTuple_GET_SIZE(parts) != 10) {
        PyErr_SetString(PyExc_ValueError, "block_blob: the content column's ten parts");
        goto done;
    }
    for (int k = 0; k < 10; k++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(parts, k))) {
            PyErr_SetString(PyExc_TypeError, "block_blob: the content column's parts are bytes");
            goto done;
        }
    int64_t first = at64(&stamps, 0), last = at64(&stamps, n - 1);
    if (misfit || !fits_in(base_arg, UINT32_MAX, &base) || n > UINT32_MAX || first < 0 || last < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    columns = PyMem_Malloc(3 * n * sizeof(uint64_t));
    scratch = PyMem_Malloc(9 * n + 8); /* the widest StreamVByte: n 8-byte values and their codes */
    b.cap = signatures.len + 10 * n + 4096;
    for (int k = 0; k < 10; k++) b.cap += PyBytes_GET_SIZE(PyTuple_GET_ITEM(parts, k)) + 16;
    b.data = PyMem_Malloc(b.cap);
    if (!columns || !scratch || !b.data) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *deltas = columns, *runs = columns + n, *lengths = columns + 2 * n;
    for (size_t i = 0; i < n; i++) { /* svb.zigzag of each step, as int64 arithmetic wraps */
        uint64_t step = i ? (uint64_t)at64(&stamps, i) - (uint64_t)at64(&stamps, i - 1) : 0;
        deltas[i] = step << 1 ^ (0 - (step >> 63));
    }
    /* block.encode_block, call for call */
    size_t sketch = b_sketch(&b, n, base, (uint64_t)first, (uint64_t)last);
    size_t deltas_at = b_svb(&b, deltas, n, 1, scratch);
    size_t types_at = b_runs(&b, &types, n, runs, lengths, scratch);
    /* block._put_classic */
    b_start(&b, 3);
    b_hash(&b, author);
    b_field(&b, 0);
    if (previous) {
        b_hash(&b, previous);
        b_field(&b, 1);
    }
    b_hash(&b, last_hash);
    b_field(&b, 2);
    size_t classic_sketch = b_end(&b);
    size_t sigs_at = b_runs(&b, &sigs, n, runs, lengths, scratch);
    size_t crypto = b_bytes(&b, signatures.buf, signatures.len);
    int flex_failed = b.failed ? 0 : flex_blobs(&PyTuple_GET_ITEM(parts, 0), &flex);
    if (flex_failed && !b.failed) b.failed = flex_failed;
    size_t messages = b_bytes(&b, flex.data, flex.len);
    b_start(&b, 4);
    b_add_offset(&b, 0, classic_sketch);
    b_add_offset(&b, 1, sigs_at);
    b_add_offset(&b, 2, crypto);
    b_add_offset(&b, 3, messages);
    size_t classic = b_end(&b);
    /* back in block.encode_block */
    size_t dicts = b_dict_set(&b, heads);
    b_start(&b, 6);
    b_add_offset(&b, 0, sketch);
    b_add_offset(&b, 1, deltas_at);
    b_add_offset(&b, 2, types_at);
    b_add_scalar(&b, 3, 1, 1); /* ClassicMessageBlock */
    b_add_offset(&b, 4, classic);
    b_add_offset(&b, 5, dicts);
    result = b_blob(&b, 1 /* MessageBlock */, b_end(&b));
done:
    PyMem_Free(b.data);
    PyMem_Free(b.vtables);
    PyMem_Free(flex.data);
    PyMem_Free(columns);
    PyMem_Free(scratch);
    PyBuffer_Release(&stamps);
    PyBuffer_Release(&types);
    PyBuffer_Release(&sigs);
    PyBuffer_Release(&signatures);
    return result;
}

/* bundle_blob(author, refs, heads) -> the Bundle blob that flat.build_bundle's builder route makes, or None when a
 * value does not fit its field (that route reports it). refs: each block's (blob id, length, sequence base, first
 * timestamp, last timestamp, previous blob id or None, last message hash); heads: as block_blob's. */
static PyObject *bundle_blob(PyObject *self, PyObject *args) {
    PyObject *author_arg, *refs, *heads_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OO!O!", &author_arg, &PyList_Type, &refs, &PyTuple_Type, &heads_obj)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(refs);
    const unsigned char *author;
    Head heads[6];
    int misfit;
    Builder b = {.cap = 1024 + 256 * (size_t)n};
    size_t *at = PyMem_Malloc((n + 1) * sizeof(size_t));
    if (!at || !(b.data = PyMem_Malloc(b.cap))) {
        PyErr_NoMemory();
        goto done;
    }
    if (hash_arg(author_arg, 0, &author) < 0 || (misfit = heads_arg(heads_obj, heads)) < 0) goto done;
    for (Py_ssize_t k = 0; k < n; k++) { /* flat.build_bundle, call for call */
        PyObject *blob_arg, *previous_arg, *last_arg, *numbers[4];
        const unsigned char *blob_id, *previous, *last_hash;
        uint64_t sketch[4];
        static const uint64_t MAX[4] = {UINT32_MAX, UINT32_MAX, UINT64_MAX >> 1, UINT64_MAX >> 1};
        if (!PyArg_ParseTuple(PyList_GET_ITEM(refs, k), "OO!O!O!O!OO", &blob_arg, &PyLong_Type, &numbers[0],
                              &PyLong_Type, &numbers[1], &PyLong_Type, &numbers[2], &PyLong_Type, &numbers[3],
                              &previous_arg, &last_arg) ||
            hash_arg(blob_arg, 0, &blob_id) < 0 || hash_arg(previous_arg, 1, &previous) < 0 ||
            hash_arg(last_arg, 0, &last_hash) < 0)
            goto done;
        for (int j = 0; j < 4; j++) misfit = misfit || !fits_in(numbers[j], MAX[j], &sketch[j]);
        if (misfit) break;
        size_t sketch_at = b_sketch(&b, sketch[0], sketch[1], sketch[2], sketch[3]);
        b_start(&b, 4);
        b_hash(&b, blob_id);
        b_field(&b, 0);
        b_add_offset(&b, 1, sketch_at);
        if (previous) {
            b_hash(&b, previous);
            b_field(&b, 2);
        }
        b_hash(&b, last_hash);
        b_field(&b, 3);
        at[k] = b_end(&b);
    }
    if (misfit) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    b_prep(&b, 4, 4 * (size_t)n); /* BundleStartMessageBlocksVector: StartVector(4, n, 4) */
    b_prep(&b, 4, 4 * (size_t)n);
    for (Py_ssize_t k = n - 1; k >= 0; k--) b_uoffset(&b, at[k]);
    b_place(&b, (uint64_t)n, 4);
    size_t vector = b.len, dicts = b_dict_set(&b, heads);
    b_start(&b, 3);
    b_hash(&b, author);
    b_field(&b, 0);
    b_add_offset(&b, 1, vector);
    b_add_offset(&b, 2, dicts);
    result = b_blob(&b, 4 /* Bundle */, b_end(&b));
done:
    PyMem_Free(at);
    PyMem_Free(b.data);
    PyMem_Free(b.vtables);
    return result;
}

/* --- skeletons and shared tokens ------------------------------------------------------------------------------ */

static int put_indent(Buf *out, int64_t depth) {
    for (int64_t k = 0; k < depth; k++)
        if (put_bytes(out, "  ", 2) < 0) return -1;
    return 0;
}

/* text._indent: JSON.stringify(_, null, 2)'s layout of a layout-free skeleton whose value sits at depth. */
static int indent_into(const unsigned char *s, size_t n, int64_t depth, Buf *out) {
    out->len = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t end = c == '"' ? string_end(s, n, i) : 0;
        if (end) {
            if (put_bytes(out, s + i, end - i) < 0) return -1;
            i = end;
            continue;
        }
        if ((c == '{' || c == '[') && i + 1 < n && s[i + 1] == (c == '{' ? '}' : ']')) {
            if (put_bytes(out, s + i, 2) < 0) return -1;
            i += 2;
            continue;
        }
        int failed = 0;
        if (c == '{' || c == '[') {
            depth++;
            failed = put_bytes(out, s + i, 1) < 0 || put_bytes(out, "\n", 1) < 0 || put_indent(out, depth) < 0;
        } else if (c == '}' || c == ']') {
            depth--;
            failed = put_bytes(out, "\n", 1) < 0 || put_indent(out, depth) < 0 || put_bytes(out, s + i, 1) < 0;
        } else if (c == ',') {
            failed = put_bytes(out, ",\n", 2) < 0 || put_indent(out, depth) < 0;
        } else if (c == ':') {
            failed = put_bytes(out, ": ", 2) < 0;
        } else {
            failed = put_bytes(out, s + i, 1) < 0;
        }
        if (failed) return -1;
        i++;
    }
    return 0;
}

static PyObject *indent(PyObject *self, PyObject *args) {
    Py_buffer compact;
    long long depth;
    if (!PyArg_ParseTuple(args, "y*L", &compact, &depth)) return NULL;
    Buf out = {0};
    PyObject *result = NULL;
    if (indent_into(compact.buf, compact.len, depth, &out) == 0)
        result = PyBytes_FromStringAndSize((const char *)out.data, out.len);
    PyMem_Free(out.data);
    PyBuffer_Release(&compact);
    return result;
}

/* text.store_skeleton: a layout byte (0 or 1: the depth that rebuilds it, 0xFF: none) and the body. */
static PyObject *store_skeleton(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "store_skeleton takes bytes");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(arg);
    size_t n = PyBytes_GET_SIZE(arg);
    Buf compact = {0}, rebuilt = {0};
    PyObject *result = NULL;
    if (put_bytes(&compact, "", 1) < 0) goto done; /* the layout byte, set below */
    for (size_t i = 0; i < n;) { /* text._LAYOUT: spaces and newlines outside strings go */
        size_t end = s[i] == '"' ? string_end(s, n, i) : 0;
        if (end) {
            if (put_bytes(&compact, s + i, end - i) < 0) goto done;
            i = end;
        } else if (s[i] == ' ' || s[i] == '\n') {
            i++;
        } else if (put_bytes(&compact, s + i, 1) < 0) {
            goto done;
        } else {
            i++;
        }
    }
    for (int depth = 0; depth < 2; depth++) {
        if (indent_into(compact.data + 1, compact.len - 1, depth, &rebuilt) < 0) goto done;
        if (rebuilt.len == n && (!n || !memcmp(rebuilt.data, s, n))) {
            compact.data[0] = (unsigned char)depth;
            result = PyBytes_FromStringAndSize((const char *)compact.data, compact.len);
            goto done;
        }
    }
    compact.len = 0;
    if (put_bytes(&compact, "\xff", 1) == 0 && put_bytes(&compact, s, n) == 0)
        result = PyBytes_FromStringAndSize((const char *)compact.data, compact.len);
done:
    PyMem_Free(compact.data);
    PyMem_Free(rebuilt.data);
    return result;
}

/* text.shared_token of each TOKEN dictionary entry (kind byte + payload), checked: dictionaries are untrusted. */
static PyObject *shared_tokens(PyObject *self, PyObject *entries) {
    if (!PyList_Check(entries)) {
        PyErr_SetString(PyExc_TypeError, "shared_tokens takes a list of bytes");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(entries);
    PyObject *out = PyList_New(n);
    Buf text = {0};
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i);
        if (!PyBytes_Check(entry)) {
            PyErr_SetString(PyExc_TypeError, "shared_tokens takes a list of bytes");
            Py_CLEAR(out);
            break;
        }
        const unsigned char *e = (const unsigned char *)PyBytes_AS_STRING(entry);
        size_t len = PyBytes_GET_SIZE(entry);
        int kind = len ? e[0] : SHARED;
        size_t size = len ? len - 1 : 0;
        PyObject *token = NULL;
        text.len = 0;
        if (kind == SHARED) {
            PyErr_SetString(Malformed, "TOKEN dictionary: entry without a usable kind byte");
        } else if (kind == LITERAL) {
            token = PyBytes_FromStringAndSize((const char *)e + 1, size);
        } else if (kind == BASE64 || (kind <= BLOB_REF && size == 32)) {
            size_t sigil = kind != BASE64, suffix = kind != BASE64 ? strlen(SUFFIXES[kind]) : 0;
            if (reserve(&text, sigil + 4 * ((size + 2) / 3) + suffix) == 0) {
                put(&text, SIGILS[kind != BASE64 ? kind : 0], sigil);
                put_base64(&text, e + 1, size);
                put(&text, SUFFIXES[kind != BASE64 ? kind : 0], suffix);
                token = PyBytes_FromStringAndSize((const char *)text.data, text.len);
            }
        } else {
            PyErr_Format(Malformed, "content column: bad dictionary entry (kind %d, %zu bytes)", kind, size);
        }
        if (!token) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, token);
    }
    PyMem_Free(text.data);
    return out;
}

/* --- plan_block ----------------------------------------------------------------------------------------------- */

static const char *const ENVELOPE[7] = {"previous", "author", "sequence", "timestamp", "hash", "content", "signature"};
enum { K_PREVIOUS, K_AUTHOR, K_SEQUENCE, K_TIMESTAMP, K_HASH, K_CONTENT, K_SIGNATURE };
static PyObject *ENVELOPE_KEYS[7], *TYPE_KEY; /* interned at import */

#define MAX_TIMESTAMP 9007199254740992.0 /* 2**53: integers beyond are not exact JavaScript numbers */

/* envelope._timestamp: an integral timestamp JavaScript prints as digits, or -1. */
static int64_t timestamp_of(PyObject *v) {
    if (v && PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        return d == d && d >= 0 && d < MAX_TIMESTAMP && (double)(int64_t)d == d ? (int64_t)d : -1;
    }
    if (!v || !PyLong_CheckExact(v)) return -1;
    int overflow;
    long long t = PyLong_AsLongLongAndOverflow(v, &overflow);
    return !overflow && t >= 0 && (double)t < MAX_TIMESTAMP ? t : -1; /* t == -1 with an error cannot happen */
}

/* envelope._signature: the 64 bytes of "<canonical base64>.sig.ed25519", into raw; 0 or -1 when not one. */
static int signature_of(PyObject *v, unsigned char raw[66]) {
    if (!v || !PyUnicode_Check(v) || !PyUnicode_IS_ASCII(v)) return -1;
    const unsigned char *text = PyUnicode_DATA(v);
    Py_ssize_t len = PyUnicode_GET_LENGTH(v);
    if (len < 12 || memcmp(text + len - 12, ".sig.ed25519", 12) || len - 12 > 88) return -1;
    return canonical_b64(text, len - 12, raw) == 64 ? 0 : -1;
}

/* The key order of a seven-key envelope (indexes into ENVELOPE), or -1 when value is something else. */
static int order_of(PyObject *value, int order[7]) {
    if (PyDict_GET_SIZE(value) != 7) return -1;
    Py_ssize_t pos = 0, j = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        if (!PyUnicode_Check(key) || !PyUnicode_IS_ASCII(key)) return -1;
        const char *text = PyUnicode_DATA(key);
        size_t len = PyUnicode_GET_LENGTH(key);
        order[j] = -1;
        for (int k = 0; k < 7 && order[j] < 0; k++)
            if (text[0] == ENVELOPE[k][0] && len == strlen(ENVELOPE[k]) && !memcmp(text, ENVELOPE[k], len)) order[j] = k;
        if (order[j++] < 0) return -1;
    }
    return 0;
}

typedef struct {
    const char *p;
    Py_ssize_t len;
} Text;

/* envelope.templates filled in: the text before and after the content, for this order and these values. */
static int frame(const int order[7], const Text values[7], Buf *head, Buf *tail) {
    head->len = tail->len = 0;
    if (put_bytes(head, "{\n", 2) < 0) return -1;
    Buf *side = head;
    for (int j = 0; j < 7; j++) {
        int k = order[j];
        if (k == K_CONTENT) {
            if (put_bytes(head, "  \"content\": ", 13) < 0) return -1;
            side = tail;
            continue;
        }
        if ((side == tail && put_bytes(tail, ",\n", 2) < 0) || put_bytes(side, "  \"", 3) < 0 ||
            put_bytes(side, ENVELOPE[k], strlen(ENVELOPE[k])) < 0 || put_bytes(side, "\": ", 3) < 0 ||
            put_bytes(side, values[k].p, values[k].len) < 0 || (side == head && put_bytes(head, ",\n", 2) < 0))
            return -1;
    }
    return put_bytes(tail, "\n}", 2);
}

static int quoted(Buf *b, const char *p, Py_ssize_t len) {
    b->len = 0;
    return put_bytes(b, "\"", 1) < 0 || put_bytes(b, p, len) < 0 || put_bytes(b, "\"", 1) < 0 ? -1 : 0;
}

/* block._type_of: content.type as UTF-8 (surrogates passed through), or None. */
static PyObject *type_of(PyObject *value) {
    PyObject *content = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_CONTENT]);
    PyObject *kind = content && PyDict_Check(content) ? PyDict_GetItemWithError(content, TYPE_KEY) : NULL;
    if (PyErr_Occurred()) return NULL;
    if (!kind || !PyUnicode_Check(kind)) return Py_NewRef(Py_None);
    if (PyUnicode_IS_ASCII(kind)) /* most types, without the codec machinery */
        return PyBytes_FromStringAndSize(PyUnicode_DATA(kind), PyUnicode_GET_LENGTH(kind));
    return PyUnicode_AsEncodedString(kind, "utf-8", "surrogatepass");
}

/* plan_block(messages, author, previous, first, keys_as_data) -> (timestamps, signatures, orders, order indexes,
 * types, type indexes, skeletons, skeleton indexes, distinct tokens end to end, their n + 1 int64 offsets, their
 * int64 hash_bytes, uint32 token stream): each list of distinct values first met first, each index an
 * int64 per message; block.plan of a block of Message tuples (value, encoded, id), or None when something is for
 * the Python route to report (a message that is not the author's next one, a text that will not encode, a content
 * holding 0x00).
 *
 * Most envelopes are settled from the encoding alone (split_text), without touching the parsed value; the
 * others take envelope.split's own route over the value (split_value). Contents are flattened where they lie in
 * the encodings, skeletons and types are interned, and each content's leaves are tokenized as soon as cut. */

static const size_t ENVELOPE_LEN[7] = {8, 6, 8, 9, 4, 7, 9};

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

/* At a line "  \"<envelope key>\": ", the key (into *key) and where its value starts; NULL for another line. */
static const unsigned char *key_of(const unsigned char *s, const unsigned char *end, int *key) {
    if (end - s < 7 || s[0] != ' ' || s[1] != ' ' || s[2] != '"') return NULL;
    for (int k = 0; k < 7; k++) {
        size_t len = ENVELOPE_LEN[k];
        if ((size_t)(end - s) >= len + 6 && s[3] == ENVELOPE[k][0] && !memcmp(s + 3, ENVELOPE[k], len) &&
            !memcmp(s + 3 + len, "\": ", 3)) {
            *key = k;
            return s + 6 + len;
        }
    }
    return NULL;
}

static inline int is_quoted(const unsigned char *v, size_t len, const char *text, Py_ssize_t text_len) {
    return len == (size_t)text_len + 2 && v[0] == '"' && v[len - 1] == '"' && !memcmp(v + 1, text, text_len);
}

/* Whether v (one envelope value as printed) is what split renders for key k; a signature goes into out->raw. */
static int value_ok(int k, const unsigned char *v, size_t len, const Expect *ex, Split *out) {
    switch (k) {
    case K_PREVIOUS:
        return ex->previous ? is_quoted(v, len, ex->previous, ex->previous_len) : len == 4 && !memcmp(v, "null", 4);
    case K_AUTHOR:
        return is_quoted(v, len, ex->author, ex->author_len);
    case K_SEQUENCE:
        return len == ex->sequence_len && !memcmp(v, ex->sequence, len);
    case K_HASH:
        return len == 8 && !memcmp(v, "\"sha256\"", 8);
    case K_TIMESTAMP: { /* digits as JavaScript prints an integer below 2**53 */
        if (len < 1 || len > 16 || (len > 1 && v[0] == '0')) return 0;
        uint64_t t = 0;
        for (size_t j = 0; j < len; j++) {
            if (!is_digit(v[j])) return 0;
            t = 10 * t + (v[j] - '0');
        }
        out->stamp = (int64_t)t;
        return t < ((uint64_t)1 << 53);
    }
    case K_SIGNATURE:
        return len == 102 && v[0] == '"' && !memcmp(v + 89, ".sig.ed25519\"", 13) &&
               canonical_b64(v + 1, 88, out->raw) == 64;
    }
    return 0;
}

static inline const unsigned char *last_newline(const unsigned char *from, const unsigned char *to) {
#ifdef __GLIBC__
    return memrchr(from, '\n', to - from);
#else
    while (to > from && to[-1] != '\n') to--;
    return to > from ? to - 1 : NULL;
#endif
}

/* envelope.split read off the encoding s: 1 when s is the seven-key envelope split expects, line by line (its
 * encoding is JSON.stringify(value, null, 2), so the lines are the value's keys in order); 0 when the value route
 * must decide. The content is one value: none of its lines but the closing bracket sits at indentation 2. */
static int split_text(const unsigned char *s, size_t n, const Expect *ex, Split *out) {
    const unsigned char *end = s + n, *p = s + 2, *v = NULL, *w;
    if (n < 4 || s[0] != '{' || s[1] != '\n' || s[n - 2] != '\n' || s[n - 1] != '}') return 0;
    int seen = 0, head = 0, key;
    for (;; head++) { /* the lines before the content */
        if (head == 7 || !(v = key_of(p, end, &key)) || seen >> key & 1) return 0;
        seen |= 1 << key;
        out->order[head] = key;
        if (key == K_CONTENT) break;
        const unsigned char *nl = memchr(v, '\n', end - v);
        if (!nl || nl[-1] != ',' || !value_ok(key, v, nl - 1 - v, ex, out)) return 0;
        p = nl + 1;
    }
    const unsigned char *e = end - 2; /* the newline ending the line being read, from the last one up */
    for (int j = 6; j > head; j--) {
        const unsigned char *ls = last_newline(v, e);
        if (!ls++ || (j < 6 && e[-1] != ',')) return 0;
        const unsigned char *value_end = j < 6 ? e - 1 : e; /* every line but the last ends with a comma */
        if (!(w = key_of(ls, value_end, &key)) || seen >> key & 1 || !value_ok(key, w, value_end - w, ex, out))
            return 0;
        seen |= 1 << key;
        out->order[j] = key;
        e = ls - 1;
    }
    const unsigned char *content_end = head < 6 ? e - 1 : e;
    if (content_end <= v || (head < 6 && *content_end != ',')) return 0;
    for (const unsigned char *q = v; (q = memchr(q, '\n', content_end - q)) && content_end - q > 3; q++)
        if (q[1] == ' ' && q[2] == ' ' && q[3] == '"') return 0;
    out->start = v - s, out->end = content_end - s;
    return 1;
}

/* content.type of a content text split_text settled: 1 with its UTF-8 span when it is a string without escapes,
 * 0 when there is none (not an object, no "type" key, not a string), -1 when the value must say (escapes). The
 * content's own keys are the lines at indentation 4. */
static int type_text(const unsigned char *c, size_t n, const unsigned char **type, size_t *len) {
    static const char KEY[] = "\n    \"type\": ";
    if (!n || c[0] != '{') return 0;
    const unsigned char *end = c + n;
    for (const unsigned char *q = c; (q = memchr(q, '\n', end - q)); q++) {
        if (end - q <= 13 || q[1] != ' ' || q[4] != ' ' || q[5] != '"' || memcmp(q, KEY, 13)) continue;
        if (q[13] != '"') return 0;
        const unsigned char *at = q + 14, *quote = memchr(at, '"', end - at);
        if (!quote || memchr(at, '\\', quote - at)) return -1;
        *type = at, *len = quote - at;
        return 1;
    }
    return 0;
}

typedef struct {
    Buf head, tail, numbers[2], previous;
} Frames;

/* envelope.split over the parsed value, as the Python route does it: 1 when derivable (order, stamp, signature and
 * the content span into out), 0 when verbatim, -2 when the message is not the author's next one, -1 on error. */
static int split_value(PyObject *value, const unsigned char *bytes, Py_ssize_t size, PyObject *author,
                       int64_t sequence, const Expect *ex, Frames *f, Split *out) {
    PyObject *seq = PyLong_FromLongLong(sequence);
    PyObject *got_author = seq ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_AUTHOR]) : NULL;
    PyObject *got_sequence = got_author || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SEQUENCE]) : NULL;
    int same = seq && !PyErr_Occurred() ? PyObject_RichCompareBool(got_author ? got_author : Py_None, author, Py_EQ) : -1;
    if (same == 1) same = PyObject_RichCompareBool(got_sequence ? got_sequence : Py_None, seq, Py_EQ);
    Py_XDECREF(seq);
    if (same <= 0) return same < 0 ? -1 : -2;
    PyObject *stamp_obj = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_TIMESTAMP]);
    PyObject *sig_obj = stamp_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SIGNATURE]) : NULL;
    PyObject *hash = sig_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_HASH]) : NULL;
    if (PyErr_Occurred()) return -1;
    out->stamp = timestamp_of(stamp_obj);
    if (order_of(value, out->order) < 0 || out->stamp < 0 || signature_of(sig_obj, out->raw) < 0 || !hash ||
        !PyUnicode_Check(hash) || PyUnicode_CompareWithASCIIString(hash, "sha256") != 0)
        return 0;
    Text texts[7];
    for (int k = 0; k < 2; k++) {
        f->numbers[k].len = 0;
        if (reserve(&f->numbers[k], 21) < 0) return -1;
        put_int(&f->numbers[k], k ? out->stamp : sequence);
    }
    texts[K_PREVIOUS] = (Text){"null", 4};
    if (ex->previous) {
        if (quoted(&f->previous, ex->previous, ex->previous_len) < 0) return -1;
        texts[K_PREVIOUS] = (Text){(const char *)f->previous.data, (Py_ssize_t)f->previous.len};
    }
    Buf author_text = {0}, sig = {0};
    int failed = quoted(&author_text, ex->author, ex->author_len) < 0 ||
                 quoted(&sig, PyUnicode_DATA(sig_obj), PyUnicode_GET_LENGTH(sig_obj)) < 0;
    texts[K_AUTHOR] = (Text){(const char *)author_text.data, (Py_ssize_t)author_text.len};
    texts[K_SEQUENCE] = (Text){(const char *)f->numbers[0].data, (Py_ssize_t)f->numbers[0].len};
    texts[K_TIMESTAMP] = (Text){(const char *)f->numbers[1].data, (Py_ssize_t)f->numbers[1].len};
    texts[K_HASH] = (Text){"\"sha256\"", 8};
    texts[K_CONTENT] = (Text){"", 0};
    texts[K_SIGNATURE] = (Text){(const char *)sig.data, (Py_ssize_t)sig.len};
    failed = failed || frame(out->order, texts, &f->head, &f->tail) < 0;
    PyMem_Free(author_text.data);
    PyMem_Free(sig.data);
    if (failed) return -1;
    Buf *h = &f->head, *t = &f->tail;
    if (size <= (Py_ssize_t)(h->len + t->len) || memcmp(bytes, h->data, h->len) ||
        memcmp(bytes + size - t->len, t->data, t->len))
        return 0;
    out->start = h->len, out->end = size - t->len;
    return 1;
}

typedef struct { /* a coded column: the distinct values (first met first) and where each is in the list */
    PyObject *list, *places;
} Coded;

/* The place of value in the column's list, appended when new; -1 on error. */
static Py_ssize_t place_of(Coded *c, PyObject *value) {
    PyObject *at = PyDict_GetItemWithError(c->places, value);
    if (at) return PyLong_AsSsize_t(at);
    if (PyErr_Occurred()) return -1;
    Py_ssize_t place = PyList_GET_SIZE(c->list);
    PyObject *number = PyLong_FromSsize_t(place);
    int failed = !number || PyDict_SetItem(c->places, value, number) < 0 || PyList_Append(c->list, value) < 0;
    Py_XDECREF(number);
    return failed ? -1 : place;
}

typedef struct { /* the last types met as UTF-8 text, with their places and keys-as-data flags */
    PyObject *names[32];
    Py_ssize_t places[32];
    int flags[32], n;
} Names;

/* The place of a type given as its UTF-8 text, and its keys-as-data flag (into *flag); -1 on error. */
static Py_ssize_t type_named(Coded *types, Names *seen, const unsigned char *p, size_t len, PyObject *keys_as_data,
                             int *flag) {
    for (int k = 0; k < seen->n; k++) {
        PyObject *name = seen->names[k];
        if ((size_t)PyBytes_GET_SIZE(name) == len && !memcmp(PyBytes_AS_STRING(name), p, len)) {
            *flag = seen->flags[k];
            return seen->places[k];
        }
    }
    PyObject *name = PyBytes_FromStringAndSize((const char *)p, len);
    Py_ssize_t place = name && (*flag = PySet_Contains(keys_as_data, name)) >= 0 ? place_of(types, name) : -1;
    if (place >= 0 && seen->n < 32) {
        seen->names[seen->n] = name, seen->places[seen->n] = place, seen->flags[seen->n++] = *flag;
        return place;
    }
    Py_XDECREF(name);
    return place;
}

/* The place of the type the value route finds (block._type_of), and its keys-as-data flag; -1 on error. */
static Py_ssize_t type_valued(Coded *types, PyObject *value, PyObject *keys_as_data, int *flag) {
    PyObject *type = type_of(value);
    *flag = 0;
    if (!type || (type != Py_None && (*flag = PySet_Contains(keys_as_data, type)) < 0)) {
        Py_XDECREF(type);
        return -1;
    }
    Py_ssize_t place = place_of(types, type);
    Py_DECREF(type);
    return place;
}

/* The place of a key order (None when verbatim) among the block's orders, its tuple made when new; -1 on error,
 * -2 past 17 distinct orders (the Python route then plans the block). */
static Py_ssize_t order_place(Coded *orders, int codes[17], const int order[7], int derivable) {
    int code = -1;
    for (int k = 0; k < 7 && derivable; k++) code = (code < 0 ? 0 : code) * 7 + order[k];
    Py_ssize_t n = PyList_GET_SIZE(orders->list);
    for (Py_ssize_t k = 0; k < n; k++)
        if (codes[k] == code) return k;
    if (n == 17) return -2;
    PyObject *keys = derivable ? PyTuple_New(7) : Py_NewRef(Py_None);
    if (!keys) return -1;
    for (int k = 0; k < 7 && derivable; k++) PyTuple_SET_ITEM(keys, k, Py_NewRef(ENVELOPE_KEYS[order[k]]));
    int failed = PyList_Append(orders->list, keys) < 0;
    Py_DECREF(keys);
    codes[n] = code;
    return failed ? -1 : n;
}

/* Whether a block's list item is a Message tuple (value, encoded, id), whose items may be read. */
static inline int is_message(PyObject *msg) { return PyTuple_Check(msg) && PyTuple_GET_SIZE(msg) == 3; }

/* A feed's messages sit apart in memory (interleaved with other feeds' when generated or received together):
 * fetch each message's tuple 16 messages ahead, its encoding and id 8 ahead, then the encoding's lines 4 ahead,
 * so that reading them does not wait on memory. */
static inline void prefetch_messages(PyObject *messages, Py_ssize_t i) {
    Py_ssize_t n = PyList_GET_SIZE(messages);
    if (i + 16 < n) { /* all of the tuple: with its GC header before it, it may straddle two cache lines */
        PyObject *ahead = PyList_GET_ITEM(messages, i + 16);
        __builtin_prefetch(ahead);
        __builtin_prefetch(((PyTupleObject *)ahead)->ob_item + 2);
    }
    PyObject *msg = i + 8 < n ? PyList_GET_ITEM(messages, i + 8) : NULL;
    if (msg && is_message(msg)) {
        __builtin_prefetch(PyTuple_GET_ITEM(msg, 1));
        __builtin_prefetch(PyTuple_GET_ITEM(msg, 2));
    }
    msg = i + 4 < n ? PyList_GET_ITEM(messages, i + 4) : NULL;
    if (msg && is_message(msg) && PyBytes_Check(PyTuple_GET_ITEM(msg, 1))) {
        const char *s = PyBytes_AS_STRING(PyTuple_GET_ITEM(msg, 1));
        Py_ssize_t size = PyBytes_GET_SIZE(PyTuple_GET_ITEM(msg, 1));
        for (Py_ssize_t at = 64; at < size; at += 64) __builtin_prefetch(s + at);
        __builtin_prefetch(s + size - 1);
    }
}

static PyObject *plan_block(PyObject *self, PyObject *args) {
    PyObject *messages, *author, *previous, *keys_as_data;
    PyObject *first_arg;
    if (!PyArg_ParseTuple(args, "O!UOO!O!", &PyList_Type, &messages, &author, &previous, &PyLong_Type, &first_arg,
                          &PyFrozenSet_Type, &keys_as_data))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    PyObject *result = NULL, *skeletons = NULL, *distinct = NULL, *offsets = NULL, *hashes = NULL;
    PyObject *token_stream = NULL, *stamps = PyBytes_FromStringAndSize(NULL, 8 * n), *signatures = PyBytes_FromStringAndSize(NULL, 64 * n);
    PyObject *order_index = PyBytes_FromStringAndSize(NULL, 8 * n), *type_index = PyBytes_FromStringAndSize(NULL, 8 * n);
    PyObject *skeleton_index = PyBytes_FromStringAndSize(NULL, 8 * n);
    Coded orders = {PyList_New(0), NULL}, types = {PyList_New(0), PyDict_New()};
    int codes[17];
    Names names = {0};
    Frames frames = {0};
    Buf skeleton = {0}, leaves = {0}, stream = {0};
    Intern shapes = {0}, tokens = {0};
    Expect ex = {0};
    if (!stamps || !signatures || !order_index || !type_index || !skeleton_index || !orders.list || !types.list || !types.places)
        goto done;
    int overflow;
    long long first = PyLong_AsLongLongAndOverflow(first_arg, &overflow);
    if (overflow || first > LLONG_MAX - n) goto fallback; /* the sequences must not overflow */
    if (!(ex.author = PyUnicode_AsUTF8AndSize(author, &ex.author_len))) goto fallback;
    if (previous != Py_None && !(PyUnicode_Check(previous) && (ex.previous = PyUnicode_AsUTF8AndSize(previous, &ex.previous_len))))
        goto fallback;
    int64_t last = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        prefetch_messages(messages, i);
        PyObject *msg = PyList_GET_ITEM(messages, i);
        if (!is_message(msg)) goto fallback;
        PyObject *value = PyTuple_GET_ITEM(msg, 0), *enc = PyTuple_GET_ITEM(msg, 1), *id = PyTuple_GET_ITEM(msg, 2);
        if (!PyBytes_Check(enc) || !PyUnicode_Check(id)) goto fallback; /* the value is read only when needed */
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(enc);
        Py_ssize_t size = PyBytes_GET_SIZE(enc);
        Buf seq = {(unsigned char *)ex.sequence, 0, sizeof ex.sequence};
        put_int(&seq, first + i);
        ex.sequence_len = seq.len;
        Split sp;
        int derivable = split_text(s, size, &ex, &sp), flag = 0, kind = -1;
        const unsigned char *type_p = NULL;
        size_t type_len = 0;
        if (derivable) {
            kind = type_text(s + sp.start, sp.end - sp.start, &type_p, &type_len);
        } else {
            if (!PyDict_Check(value)) goto fallback;
            derivable = split_value(value, s, size, author, first + i, &ex, &frames, &sp);
            if (derivable == -2) goto fallback; /* not one feed in order: the Python route raises NotArchivable */
            if (derivable < 0) goto done;
        }
        int64_t type = kind == 1   ? type_named(&types, &names, type_p, type_len, keys_as_data, &flag)
                       : kind == 0 ? place_of(&types, Py_None)
                                   : type_valued(&types, value, keys_as_data, &flag);
        int64_t order = order_place(&orders, codes, sp.order, derivable);
        if (type < 0 || order == -1) goto done;
        if (order == -2) goto fallback;
        memcpy(PyBytes_AS_STRING(type_index) + 8 * i, &type, 8);
        memcpy(PyBytes_AS_STRING(order_index) + 8 * i, &order, 8);
        last = derivable ? sp.stamp : last;
        memcpy(PyBytes_AS_STRING(stamps) + 8 * i, &last, 8);
        if (derivable)
            memcpy(PyBytes_AS_STRING(signatures) + 64 * i, sp.raw, 64);
        else
            memset(PyBytes_AS_STRING(signatures) + 64 * i, 0, 64), sp.start = 0, sp.end = size;
        const unsigned char *content = s + sp.start;
        size_t content_len = sp.end - sp.start;
        if (memchr(content, 0, content_len)) goto fallback; /* not a V8 encoding: the Python route reports it */
        skeleton.len = leaves.len = 0; /* tokenized while in cache: the tables keep each distinct text */
        if (flatten_one(content, content_len, derivable && flag, &skeleton, &leaves) < 0 || pad(&skeleton) < 0 ||
            pad(&leaves) < 0)
            goto done;
        int64_t shape = intern(&shapes, skeleton.data, skeleton.len);
        if (shape < 0 || tokenize(&tokens, &leaves, &stream) < 0) goto done;
        memcpy(PyBytes_AS_STRING(skeleton_index) + 8 * i, &shape, 8);
        if (!(ex.previous = PyUnicode_AsUTF8AndSize(id, &ex.previous_len))) goto fallback;
    }
    if (!(skeletons = PyList_New(shapes.n)) ||
        !(distinct = PyBytes_FromStringAndSize((const char *)tokens.text.data, tokens.text.len)) ||
        !(offsets = PyBytes_FromStringAndSize(NULL, 8 * (tokens.n + 1))) ||
        !(hashes = PyBytes_FromStringAndSize(NULL, 8 * tokens.n)))
        goto done;
    for (size_t k = 0; k < shapes.n; k++) {
        PyObject *item = interned_bytes(&shapes, k);
        if (!item) goto done;
        PyList_SET_ITEM(skeletons, k, item);
    }
    int64_t *starts = (int64_t *)PyBytes_AS_STRING(offsets); /* a bytes object's data is 8-aligned */
    for (size_t k = 0; k < tokens.n; k++) {
        memcpy(PyBytes_AS_STRING(hashes) + 8 * k, &tokens.items[k].hash, 8);
        starts[k] = (int64_t)tokens.items[k].start;
    }
    starts[tokens.n] = (int64_t)tokens.text.len;
    if ((token_stream = PyBytes_FromStringAndSize((const char *)stream.data, stream.len)))
        result = PyTuple_Pack(12, stamps, signatures, orders.list, order_index, types.list, type_index, skeletons,
                              skeleton_index, distinct, offsets, hashes, token_stream);
    goto done;
fallback:
    PyErr_Clear();
    result = Py_NewRef(Py_None);
done:
    for (int k = 0; k < names.n; k++) Py_DECREF(names.names[k]);
    Py_XDECREF(orders.list);
    Py_XDECREF(types.list);
    Py_XDECREF(types.places);
    Py_XDECREF(order_index);
    Py_XDECREF(type_index);
    Py_XDECREF(stamps);
    Py_XDECREF(signatures);
    Py_XDECREF(skeleton_index);
    Py_XDECREF(skeletons);
    Py_XDECREF(distinct);
    Py_XDECREF(offsets);
    Py_XDECREF(hashes);
    Py_XDECREF(token_stream);
    Buf *bufs[] = {&frames.head, &frames.tail, &frames.numbers[0], &frames.numbers[1], &frames.previous, &skeleton,
                   &leaves, &stream, &shapes.text, &tokens.text};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) PyMem_Free(bufs[k]->data);
    PyMem_Free(shapes.slots);
    PyMem_Free(shapes.items);
    PyMem_Free(tokens.slots);
    PyMem_Free(tokens.items);
    return result;
}

/* --- module -------------------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"indent", indent, METH_VARARGS, "indent(compact, depth) -> the skeleton laid out as text._indent does"},
    {"store_skeleton", store_skeleton, METH_O, "store_skeleton(skeleton) -> its stored form, as text.store_skeleton"},
    {"shared_tokens", shared_tokens, METH_O, "shared_tokens(entries) -> the token of each TOKEN dictionary entry"},
    {"encode_column", encode_column, METH_VARARGS,
     "encode_column(data, offsets, hashes, stream, shared_data, shared_offsets, shared_slots, skeleton_ids) "
     "-> the ten parts of text.TextColumn"},
    {"block_blob", block_blob, METH_VARARGS,
     "block_blob(sequence_base, timestamps, type_ids, signature_ids, signatures, author, previous, last_hash, parts, "
     "heads) -> the MessageBlock blob of these fields, as block.encode_block builds it, or None"},
    {"bundle_blob", bundle_blob, METH_VARARGS,
     "bundle_blob(author, refs, heads) -> the Bundle blob of these block refs, as flat.build_bundle builds it, or None"},
    {"token_slots", token_slots, METH_VARARGS,
     "token_slots(data, offsets) -> the hash table of distinct tokens that encode_column looks shared tokens up in"},
    {"plan_block", plan_block, METH_VARARGS,
     "plan_block(messages, author, previous, first, keys_as_data) -> (int64 timestamps, signatures, orders, "
     "order indexes, types, type indexes, skeletons, skeleton indexes, distinct tokens end to end, their int64 "
     "offsets, their int64 hashes, uint32 token indexes) or None"},
    {"repeated_tokens", repeated_tokens, METH_VARARGS,
     "repeated_tokens(texts, offsets, hashes) -> the tokens met in more than one block (each block's distinct "
     "tokens end to end, their int64 offsets and hashes), first met first"},
    {"shared_entries", shared_entries, METH_O, "shared_entries(tokens) -> text.shared_entry of each token"},
    {"id_texts", id_texts, METH_O, "id_texts(digests) -> the message id of each 32-byte digest, 52 bytes each"},
    {"svb_decode", svb_decode, METH_VARARGS, "svb_decode(codes, values, wide, where) -> uint64 values end to end"},
    {"svb_encode", svb_encode_py, METH_VARARGS, "svb_encode(values, wide) -> (codes, values) of a uint64 buffer"},
    {"read_block", read_block, METH_O,
     "read_block(data) -> the raw fields of a MessageBlock blob, or None when the Python reader must read it"},
    {"decode_column", decode_column, METH_VARARGS,
     "decode_column(parts, n, shared_data, shared_offsets, skeleton_parts_data, skeleton_parts_offsets, first, "
     "holes) -> (the n texts end to end, n + 1 int64 offsets, n int64 lengths of their ASCII starts); checked to be "
     "UTF-8"},
    {"sha256", sha256_py, METH_VARARGS, "sha256(data, portable=False) -> the digest block_digests uses (for tests)"},
    {"sha256_streams", sha256_streams, METH_VARARGS,
     "sha256_streams(messages, portable=False) -> the digest of each list of parts, hashed as block_digests does "
     "(for tests)"},
    {"block_digests", block_digests, METH_O,
     "block_digests(blocks) -> each block's 32-byte message ids end to end; a block is (contents, offsets, "
     "layout_of, layouts, timestamps, sequence_base, signatures, previous, where)"},
    {"message_texts", message_texts, METH_VARARGS,
     "message_texts(block, digests) -> each message's signed JSON, given the block's ids"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_speedups", .m_methods = methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    for (const char *c = "\"-0123456789tfn"; *c; c++) LEAF_START[(unsigned char)*c] = 1;
    for (int c = 0; c < 256; c++)
        TOKEN_START[c] = is_alpha(c) ? T_ALPHA : is_digit(c) ? T_DIGIT : c == '+' || c == '/' ? T_B64_SIGN
                         : c == ' ' ? T_SPACE : c == '\n' ? T_NEWLINE : c >= 0x80 ? T_HIGH
                         : c == '%' || c == '&' || c == '@' ? T_SIGIL : T_OTHER;
    text_init();
    sha256_init();
    for (int k = 0; k < 7; k++)
        if (!(ENVELOPE_KEYS[k] = PyUnicode_InternFromString(ENVELOPE[k]))) return NULL;
    if (!(TYPE_KEY = PyUnicode_InternFromString("type"))) return NULL;
    PyObject *errors = PyImport_ImportModule("ssblab.archive.errors");
    Malformed = errors ? PyObject_GetAttrString(errors, "MalformedArchive") : NULL;
    Py_XDECREF(errors);
    return Malformed ? PyModule_Create(&module) : NULL;
}
