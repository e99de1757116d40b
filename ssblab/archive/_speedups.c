/* Compiled hot loops of ssblab.archive; the pure-Python routes give the same bytes and rows (tests compare them).
 *
 * Python reads and checks the FlatBuffers structure and hands these functions plain buffers with their lengths;
 * every read here is still bounds-checked, because the buffers come from untrusted blobs. Failures raise
 * ssblab.archive.errors.MalformedArchive naming what is wrong.
 *
 * decode_column: the content column (its ten FlexBuffer parts) into the block's texts (docs/archive-format.md §6).
 * chain_ids:   each message's signed JSON and its sha256 id, each id feeding the next message's previous (§5).
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

static void put_base64(Buf *b, const unsigned char *raw, size_t len) { /* after reserve of 4 * ceil(len / 3) */
    base64_into(b->data + b->len, raw, len);
    b->len += 4 * ((len + 2) / 3);
}

static void put_int(Buf *b, int64_t value) { /* after reserve of 20 */
    char digits[20];
    int n = 0;
    uint64_t v = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    do digits[n++] = '0' + v % 10; while (v /= 10);
    if (value < 0) b->data[b->len++] = '-';
    while (n) b->data[b->len++] = digits[--n];
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

static inline Slice slice_of(const unsigned char *p, int64_t len) {
    Slice s = {.p = p, .len = len};
    if (len <= 16) memcpy(s.inline_text, p, len);
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
    unsigned char *to = o->data + o->len;
    if (len > 16) { /* most tokens are short: fixed-size moves, overlapping, beat a call to memcpy */
        memcpy(to, p, len);
    } else if (len >= 8) {
        memcpy(to, p, 8);
        memcpy(to + len - 8, p + len - 8, 8);
    } else if (len >= 4) {
        memcpy(to, p, 4);
        memcpy(to + len - 4, p + len - 4, 4);
    } else if (len > 0) {
        to[0] = p[0], to[len / 2] = p[len / 2], to[len - 1] = p[len - 1];
    }
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

static int walk(Walk *w, Out *out, int64_t *offsets) {
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
        if (offsets[i] < out->len && (out->data[offsets[i]] & 0xC0) == 0x80) { /* while the text is in cache */
            PyErr_Format(Malformed, "content is not UTF-8 at byte %lld", (long long)offsets[i]);
            return -1;
        }
    }
    if (w->dense.pos != w->dense.len) {
        PyErr_SetString(Malformed, "content column: tokens after the last leaf");
        return -1;
    }
    return 0;
}

/* Where strict UTF-8 (what Python's decoder accepts: no overlongs, surrogates or code points past U+10FFFF)
 * fails in s, or -1. */
static Py_ssize_t utf8_error(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (i + 8 <= n && ascii_word(s + i)) {
            i += 8;
        } else if (s[i] < 0x80) {
            i++;
        } else {
            size_t len = utf8_sequence(s + i, s + n);
            if (!len) return i;
            i += (Py_ssize_t)len;
        }
    }
    return -1;
}

static PyObject *decode_column(PyObject *self, PyObject *args) {
    PyObject *parts;
    Py_ssize_t n;
    Py_buffer sd, so, pd, po, first, holes;
    if (!PyArg_ParseTuple(args, "O!ny*y*y*y*y*y*", &PyTuple_Type, &parts, &n, &sd, &so, &pd, &po, &first, &holes))
        return NULL;
    PyObject *result = NULL, *texts = NULL, *offsets = NULL;
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
    Out out = {.cap = 8 * w.dense.len + 64 * n + 64}; /* a guess, never 0 (the shared empty bytes); grown */
    if (!(out.bytes = PyBytes_FromStringAndSize(NULL, out.cap)) ||
        !(offsets = PyBytes_FromStringAndSize(NULL, 8 * (n + 1))))
        goto done;
    out.data = (unsigned char *)PyBytes_AS_STRING(out.bytes);
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(offsets); /* a bytes object's data is 8-aligned */
    ends[0] = 0;
    int failed = walk(&w, &out, ends) < 0;
    texts = out.bytes; /* owned here from now on, whatever walk did to it */
    if (failed || _PyBytes_Resize(&texts, out.len) < 0) goto done;
    unsigned char *data = (unsigned char *)PyBytes_AS_STRING(texts);
    int64_t total = out.len;
    Py_ssize_t bad = utf8_error(data, total); /* and walk saw that no text starts inside a character */
    if (bad >= 0) {
        PyErr_Format(Malformed, "content is not UTF-8 at byte %zd", bad);
        goto done;
    }
    result = PyTuple_Pack(2, texts, offsets);
done:
    Py_XDECREF(texts);
    Py_XDECREF(offsets);
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

/* --- chain_ids ----------------------------------------------------------------------------------------------- */

enum { F_PREVIOUS, F_SEQUENCE, F_TIMESTAMP, F_CONTENT, F_SIGNATURE, N_FIELDS };

/* Appends UTF-8 text as Node's Buffer.from(text, "binary"): the low byte of each UTF-16 unit (what an id
 * hashes). The text was checked to be UTF-8 when decoded; a cut character still fails here, never reads past. */
static int put_binary(Buf *out, const unsigned char *u, size_t len, Py_ssize_t row) {
    if (reserve(out, len) < 0) return -1;
    size_t bad_at;
    ssize_t written = binary_bytes(u, len, out->data + out->len, &bad_at);
    if (written < 0) {
        PyErr_Format(Malformed, "message %zd: content is not UTF-8", row);
        return -1;
    }
    out->len += (size_t)written;
    return 0;
}

static int put_text(Buf *out, const unsigned char *p, size_t len, int binary, Py_ssize_t row) {
    if (binary) return put_binary(out, p, len, row);
    if (reserve(out, len) < 0) return -1;
    put(out, p, len);
    return 0;
}

typedef struct {
    const char *text; /* a constant part, or NULL for a field */
    Py_ssize_t len;
    int field;
} Part;

/* The layouts as Part arrays: each a tuple of bytes (constant text) and ints (an F_* field). */
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
        if (!PyTuple_Check(layout)) {
            PyErr_SetString(PyExc_TypeError, "a layout must be a tuple");
            goto fail;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(layout);
        out[j] = PyMem_Calloc(n + 1, sizeof(Part)); /* ends with a Part whose field is N_FIELDS */
        if (!out[j]) {
            PyErr_NoMemory();
            goto fail;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *item = PyTuple_GET_ITEM(layout, k);
            if (PyBytes_Check(item)) {
                out[j][k].text = PyBytes_AS_STRING(item);
                out[j][k].len = PyBytes_GET_SIZE(item);
            } else {
                long field = PyLong_Check(item) ? PyLong_AsLong(item) : -1;
                if (field < 0 || field >= N_FIELDS) {
                    PyErr_SetString(PyExc_ValueError, "a layout part is neither bytes nor a field");
                    goto fail;
                }
                out[j][k].field = (int)field;
            }
        }
        out[j][n].field = N_FIELDS;
    }
    return out;
fail:
    for (Py_ssize_t j = 0; j < *count; j++) PyMem_Free(out[j]);
    PyMem_Free(out);
    return NULL;
}

typedef struct {
    const Py_buffer *layout_of, *timestamps;
    const unsigned char *signatures;
    Py_ssize_t n_signatures;
    long long sequence_base;
    Part **layouts;
    Py_ssize_t n_layouts;
} Rows;

/* Renders row i, whose content is the given slice, into out (in binary form when binary is set); its previous
 * id is prev, or null when prev is NULL. */
static int render(const Rows *r, Py_ssize_t i, const unsigned char *content, size_t content_len,
                  const unsigned char *prev, int binary, Buf *out) {
    int64_t which = at64(r->layout_of, i);
    out->len = 0;
    if (which == -1) return put_text(out, content, content_len, binary, i); /* verbatim: the whole message */
    if (which < 0 || which >= r->n_layouts) {
        PyErr_Format(Malformed, "message %zd: unknown envelope layout", i);
        return -1;
    }
    for (const Part *p = r->layouts[which]; p->text || p->field != N_FIELDS; p++) {
        if (p->text) {
            if (reserve(out, p->len) < 0) return -1;
            put(out, p->text, p->len);
            continue;
        }
        switch (p->field) {
        case F_PREVIOUS:
            if (reserve(out, 54) < 0) return -1;
            if (!prev) {
                put(out, "null", 4);
                break;
            }
            put(out, "\"%", 2);
            put_base64(out, prev, 32);
            put(out, ".sha256\"", 8);
            break;
        case F_SEQUENCE:
            if (reserve(out, 21) < 0) return -1;
            put_int(out, r->sequence_base + i);
            break;
        case F_TIMESTAMP:
            if (reserve(out, 21) < 0) return -1;
            put_int(out, at64(r->timestamps, i));
            break;
        case F_CONTENT:
            if (put_text(out, content, content_len, binary, i) < 0) return -1;
            break;
        case F_SIGNATURE:
            if (64 * (i + 1) > r->n_signatures) {
                PyErr_Format(Malformed, "message %zd: no signature bytes", i);
                return -1;
            }
            if (reserve(out, 102) < 0) return -1;
            put(out, "\"", 1);
            put_base64(out, r->signatures + 64 * i, 64);
            put(out, ".sig.ed25519\"", 13);
            break;
        }
    }
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

static PyObject *chain_ids(PyObject *self, PyObject *args) {
    Py_buffer contents, offsets, layout_of, timestamps, signatures;
    PyObject *layouts, *previous;
    long long base;
    int keep;
    if (!PyArg_ParseTuple(args, "y*y*y*O!y*Ly*Op", &contents, &offsets, &layout_of, &PyTuple_Type, &layouts,
                          &timestamps, &base, &signatures, &previous, &keep))
        return NULL;
    PyObject *digests = NULL, *texts = NULL, *result = NULL;
    Buf text = {0}, binary = {0};
    Rows r = {.layout_of = &layout_of, .timestamps = &timestamps, .signatures = signatures.buf, .n_signatures = signatures.len,
              .sequence_base = base};
    Py_ssize_t n, n_offsets, n_stamps;
    if (int64_buffer(&layout_of, "layout_of", &n) < 0 || int64_buffer(&offsets, "offsets", &n_offsets) < 0 ||
        int64_buffer(&timestamps, "timestamps", &n_stamps) < 0)
        goto done;
    if (n_offsets != n + 1 || n_stamps != n) {
        PyErr_SetString(PyExc_ValueError, "chain_ids: offsets, layouts and timestamps of different rows");
        goto done;
    }
    if (previous != Py_None && !(PyBytes_Check(previous) && PyBytes_GET_SIZE(previous) == 32)) {
        PyErr_SetString(PyExc_ValueError, "chain_ids: previous must be 32 bytes or None");
        goto done;
    }
    if (!(r.layouts = read_layouts(layouts, &r.n_layouts))) goto done;
    digests = PyBytes_FromStringAndSize(NULL, 32 * n);
    texts = keep ? PyList_New(n) : Py_NewRef(Py_None);
    if (!digests || !texts) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(digests);
    const unsigned char *prev = previous == Py_None ? NULL : (const unsigned char *)PyBytes_AS_STRING(previous);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = at64(&offsets, i), z = at64(&offsets, i + 1);
        if (a < 0 || z < a || z > contents.len) {
            PyErr_Format(Malformed, "message %zd: content offsets outside the texts", i);
            goto done;
        }
        const unsigned char *content = (const unsigned char *)contents.buf + a;
        int ascii = is_ascii(content, z - a); /* the rest of the envelope is ASCII */
        if ((ascii || keep) && render(&r, i, content, z - a, prev, 0, &text) < 0) goto done;
        if (!ascii && render(&r, i, content, z - a, prev, 1, &binary) < 0) goto done;
        sha256(ascii ? text.data : binary.data, ascii ? text.len : binary.len, out + 32 * i);
        prev = out + 32 * i;
        if (keep) {
            PyObject *item = PyBytes_FromStringAndSize((const char *)text.data, text.len);
            if (!item) goto done;
            PyList_SET_ITEM(texts, i, item);
        }
    }
    result = PyTuple_Pack(2, digests, texts);
done:
    if (r.layouts) {
        for (Py_ssize_t j = 0; j < r.n_layouts; j++) PyMem_Free(r.layouts[j]);
        PyMem_Free(r.layouts);
    }
    PyMem_Free(text.data);
    PyMem_Free(binary.data);
    Py_XDECREF(digests);
    Py_XDECREF(texts);
    PyBuffer_Release(&contents);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&layout_of);
    PyBuffer_Release(&timestamps);
    PyBuffer_Release(&signatures);
    return result;
}

/* --- flatten_block ------------------------------------------------------------------------------------------- */

/* Character classes of the text.LEAF and text.TOKEN expressions. */

static inline int is_b64(unsigned c) { return B64_VALUE[c] >= 0; }
static inline int is_alpha(unsigned c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static inline int in_number(unsigned c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

static int put_bytes(Buf *b, const void *p, size_t len) {
    if (reserve(b, len) < 0) return -1;
    put(b, p, len);
    return 0;
}

static unsigned char LEAF_START[256]; /* the bytes a text.LEAF match can start with, filled at import */

/* text.flatten of one content text: its skeleton into skel, its leaves (each ended by 0x00) onto leaves. The
 * scan is text.LEAF's, alternative by alternative, at each position in turn (what re.split does). */
static int flatten_one(const unsigned char *s, size_t n, int keys_as_data, Buf *skel, Buf *leaves) {
    skel->len = 0;
    for (size_t i = 0; i < n;) {
        size_t run = i; /* bytes that cannot start a leaf go to the skeleton in one copy */
        while (run < n && !LEAF_START[s[run]]) run++;
        if (run > i) {
            if (put_bytes(skel, s + i, run - i) < 0) return -1;
            i = run;
            continue;
        }
        unsigned c = s[i];
        size_t end = 0; /* the end of a leaf candidate starting at i, 0 for none */
        int key = 0;
        if (c == '"') {
            size_t j = i + 1; /* the first quote not escaped by a backslash */
            for (;;) {
                const unsigned char *quote = j < n ? memchr(s + j, '"', n - j) : NULL;
                const unsigned char *slash = quote ? memchr(s + j, '\\', quote - (s + j)) : NULL;
                if (!quote || !slash) {
                    j = quote ? (size_t)(quote - s) : n;
                    break;
                }
                j = slash - s + 2;
            }
            if (j < n) { /* else unterminated: no match here */
                end = j + 1;
                key = end < n && s[end] == ':';
            }
        } else if (is_digit(c) || (c == '-' && i + 1 < n && is_digit(s[i + 1]))) {
            end = i + (c == '-') + 1;
            while (end < n && in_number(s[end])) end++;
        } else if (c == 't' || c == 'f' || c == 'n') {
            const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t len = strlen(word);
            if (n - i >= len && !memcmp(s + i, word, len)) end = i + len;
        }
        if (!end) {
            if (put_bytes(skel, s + i, 1) < 0) return -1;
            i++;
            continue;
        }
        if (c == '"' && key && !keys_as_data) { /* a key stays in the skeleton */
            if (put_bytes(skel, s + i, end + 1 - i) < 0) return -1;
        } else {
            int quoted = c == '"';
            const char *hole = !quoted ? "\0" : key ? "\"\0\":" : "\"\0\"";
            if (put_bytes(skel, hole, !quoted ? 1 : key ? 4 : 3) < 0 ||
                put_bytes(leaves, s + i + quoted, end - i - 2 * quoted) < 0 || put_bytes(leaves, "\0", 1) < 0)
                return -1;
        }
        i = end + key;
    }
    return 0;
}

/* The length of the text.TOKEN match at s[i] (the alternatives in order; every byte starts one). run_end caches
 * where the base64 run holding i ends. */
static size_t token_at(const unsigned char *s, size_t n, size_t i, size_t *run_end) {
    unsigned c = s[i];
    if ((c == '%' || c == '&' || c == '@') && n - i >= 52 && s[i + 44] == '=' && s[i + 45] == '.') {
        int ok = 1;
        for (size_t k = 1; k <= 43 && ok; k++) ok = is_b64(s[i + k]);
        if (ok && !memcmp(s + i + 46, "sha256", 6)) return 52;
        if (ok && n - i >= 53 && !memcmp(s + i + 46, "ed25519", 7)) return 53;
    }
    if (is_b64(c)) {
        if (i >= *run_end) {
            *run_end = i;
            while (*run_end < n && is_b64(s[*run_end])) (*run_end)++;
        }
        if (*run_end - i >= 20) {
            size_t end = *run_end;
            while (end < n && end < *run_end + 2 && s[end] == '=') end++;
            return end - i;
        }
    }
    size_t j = i + 1;
    if (is_alpha(c) || (c == ' ' && j < n && is_alpha(s[j]))) {
        while (j < n && is_alpha(s[j])) j++;
    } else if (is_digit(c)) {
        while (j < n && is_digit(s[j])) j++;
    } else if (c == '\n' && j < n && s[j] == ' ') {
        while (j < n && s[j] == ' ') j++;
    } else if (c >= 0x80) {
        while (j < n && s[j] >= 0x80) j++;
    }
    return j - i;
}

/* Distinct tokens by their bytes: open addressing over slots holding a hash tag (high half) and the token's
 * index + 1 (low half; 0 for an empty slot). Each token keeps its first 8 bytes beside its place in the leaf text,
 * so short tokens (most) compare without touching the text. The leaf text is padded with 8 zero bytes, so a
 * token's first word is read whole. */
typedef struct {
    uint64_t head;  /* the first 8 bytes, zero-padded */
    uint64_t start; /* in the leaf text */
    uint32_t len, count;
} Token;

typedef struct {
    uint64_t *slots;
    size_t mask;
    Token *tokens;
    size_t n, cap;
} Intern;

static inline uint64_t first_word(const unsigned char *p, size_t len) { /* p has 8 readable bytes */
    uint64_t word;
    memcpy(&word, p, 8);
    return len >= 8 ? word : word & ((1ULL << (8 * len)) - 1);
}

static inline uint64_t hash_bytes(const unsigned char *p, size_t len) {
    uint64_t h = (0x9E3779B97F4A7C15ULL ^ len) * 0xFF51AFD7ED558CCDULL, word;
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        memcpy(&word, p + k, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    h ^= first_word(p + k, len - k); /* then murmur3's finalizer: every input bit reaches the low bits */
    h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDULL;
    h = (h ^ (h >> 33)) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
}

static inline void place(Intern *t, uint64_t h, size_t k) {
    size_t at = h & t->mask;
    while (t->slots[at]) at = (at + 1) & t->mask;
    t->slots[at] = (h & 0xFFFFFFFF00000000ULL) | (uint64_t)(k + 1);
}

static int intern_grow(Intern *t, const unsigned char *text) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    Token *tokens = cap < ((size_t)1 << 31) ? PyMem_Realloc(t->tokens, cap * sizeof(Token)) : NULL;
    if (tokens) t->tokens = tokens;
    uint64_t *slots = tokens ? PyMem_Calloc(2 * cap, sizeof(uint64_t)) : NULL;
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = 2 * cap - 1;
    t->cap = cap;
    for (size_t k = 0; k < t->n; k++) place(t, hash_bytes(text + t->tokens[k].start, t->tokens[k].len), k);
    return 0;
}

/* The index of the token text[start:start+len], added when new; -1 on failure. */
static int64_t intern(Intern *t, const unsigned char *text, size_t start, size_t len) {
    if (t->n == t->cap && intern_grow(t, text) < 0) return -1;
    uint64_t h = hash_bytes(text + start, len), tag = h & 0xFFFFFFFF00000000ULL, head = first_word(text + start, len);
    for (size_t at = h & t->mask; t->slots[at]; at = (at + 1) & t->mask) {
        uint64_t slot = t->slots[at];
        Token *tok = &t->tokens[(slot & 0xFFFFFFFF) - 1];
        if ((slot & 0xFFFFFFFF00000000ULL) == tag && tok->len == len && tok->head == head &&
            (len <= 8 || !memcmp(text + tok->start + 8, text + start + 8, len - 8))) {
            tok->count++;
            return tok - t->tokens;
        }
    }
    place(t, h, t->n);
    t->tokens[t->n] = (Token){head, start, (uint32_t)len, 1};
    return (int64_t)t->n++;
}

/* flatten_block(contents, keys_as_data) -> (skeletons, distinct tokens, int64 counts, int64 token stream), or
 * None when a content holds 0x00 (the Python route raises NotArchivable for it). */
static PyObject *flatten_block(PyObject *self, PyObject *args) {
    PyObject *contents, *flags;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &contents, &PyList_Type, &flags)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(contents);
    if (PyList_GET_SIZE(flags) != n) {
        PyErr_SetString(PyExc_ValueError, "flatten_block: one keys-as-data flag per content");
        return NULL;
    }
    Buf skel = {0}, leaves = {0}, stream = {0};
    Intern t = {0};
    PyObject *skeletons = PyList_New(n), *distinct = NULL, *counts = NULL, *ranks = NULL, *result = NULL;
    if (!skeletons) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PyList_GET_ITEM(contents, i);
        if (!PyBytes_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "flatten_block: contents must be bytes");
            goto done;
        }
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(text);
        size_t len = PyBytes_GET_SIZE(text);
        if (memchr(p, 0, len)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        int keys_as_data = PyObject_IsTrue(PyList_GET_ITEM(flags, i));
        if (keys_as_data < 0 || flatten_one(p, len, keys_as_data, &skel, &leaves) < 0) goto done;
        PyObject *item = PyBytes_FromStringAndSize((const char *)skel.data, skel.len);
        if (!item) goto done;
        PyList_SET_ITEM(skeletons, i, item);
    }
    if (reserve(&leaves, 8) < 0) goto done;
    memset(leaves.data + leaves.len, 0, 8); /* the padding first_word reads */
    size_t run_end = 0;
    for (size_t i = 0; i < leaves.len;) {
        size_t len = token_at(leaves.data, leaves.len, i, &run_end);
        int64_t k = intern(&t, leaves.data, i, len);
        if (k < 0 || reserve(&stream, 8) < 0) goto done;
        memcpy(stream.data + stream.len, &k, 8);
        stream.len += 8;
        i += len;
    }
    if (!(distinct = PyList_New(t.n)) || !(counts = PyBytes_FromStringAndSize(NULL, 8 * t.n))) goto done;
    for (size_t k = 0; k < t.n; k++) {
        int64_t count = t.tokens[k].count;
        memcpy(PyBytes_AS_STRING(counts) + 8 * k, &count, 8);
        PyObject *item = PyBytes_FromStringAndSize((const char *)leaves.data + t.tokens[k].start, t.tokens[k].len);
        if (!item) goto done;
        PyList_SET_ITEM(distinct, k, item);
    }
    if ((ranks = PyBytes_FromStringAndSize((const char *)stream.data, stream.len)))
        result = PyTuple_Pack(4, skeletons, distinct, counts, ranks);
done:
    Py_XDECREF(skeletons);
    Py_XDECREF(distinct);
    Py_XDECREF(counts);
    Py_XDECREF(ranks);
    PyMem_Free(skel.data);
    PyMem_Free(leaves.data);
    PyMem_Free(stream.data);
    PyMem_Free(t.slots);
    PyMem_Free(t.tokens);
    return result;
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

/* StreamVByte1234 of values (each below 2**32) as two new bytes objects. */
static int svb_encode(const int64_t *values, Py_ssize_t n, PyObject **codes, PyObject **data) {
    *codes = PyBytes_FromStringAndSize(NULL, (n + 3) / 4);
    *data = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (!*codes || !*data) return -1;
    unsigned char *c = (unsigned char *)PyBytes_AS_STRING(*codes), *v = (unsigned char *)PyBytes_AS_STRING(*data);
    memset(c, 0, (n + 3) / 4);
    size_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t x = values[i];
        if (x < 0 || x >= (int64_t)1 << 32) {
            PyErr_Format(PyExc_ValueError, "StreamVByte1234: %lld does not fit", (long long)x);
            return -1;
        }
        int code = (x >= 1 << 8) + (x >= 1 << 16) + (x >= 1 << 24);
        c[i / 4] |= code << 2 * (i % 4);
        for (int b = 0; b <= code; b++) v[len++] = (unsigned char)(x >> 8 * b);
    }
    return _PyBytes_Resize(data, len);
}

typedef struct {
    const int64_t *count;
} ByCount;

static ByCount by_count; /* qsort has no context argument; the GIL serialises its users */

static int falling_count(const void *a, const void *b) { /* ties by first appearance: a stable order */
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int64_t cx = by_count.count[x], cy = by_count.count[y];
    return cx != cy ? (cx < cy ? 1 : -1) : (x > y) - (x < y);
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

/* encode_column(distinct, counts, stream, shared, skeleton_ids) -> the ten parts of text.TextColumn. */
static PyObject *encode_column(PyObject *self, PyObject *args) {
    PyObject *distinct, *shared, *skeletons;
    Py_buffer counts, stream;
    if (!PyArg_ParseTuple(args, "O!y*y*O!O!", &PyList_Type, &distinct, &counts, &stream, &PyDict_Type, &shared,
                          &PyList_Type, &skeletons))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(distinct), n_stream = stream.len / 8, n_skel = PyList_GET_SIZE(skeletons);
    PyObject *parts[10] = {0}, *result = NULL;
    int64_t *order = NULL, *rank_of = NULL, *tail = NULL, *ids = NULL, *sizes = NULL, *skel = NULL;
    Buf kinds = {0}, payload = {0}, ranks = {0};
    unsigned char *raw = NULL;
    if (counts.len != 8 * n || stream.len % 8) {
        PyErr_SetString(PyExc_ValueError, "encode_column: one int64 count per token and an int64 stream");
        goto done;
    }
    order = PyMem_Malloc((n + 1) * sizeof(int64_t));
    rank_of = PyMem_Malloc((n + 1) * sizeof(int64_t));
    tail = PyMem_Calloc(n + 1, sizeof(int64_t));
    ids = PyMem_Malloc((n + 1) * sizeof(int64_t));
    sizes = PyMem_Malloc((n + 1) * sizeof(int64_t));
    skel = PyMem_Malloc((n_skel + 1) * sizeof(int64_t));
    if (!order || !rank_of || !tail || !ids || !sizes || !skel) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) order[k] = k;
    by_count.count = counts.buf;
    qsort(order, n, sizeof(int64_t), falling_count);
    Py_ssize_t n_ids = 0, n_sizes = 0;
    size_t raw_cap = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        rank_of[order[r]] = r;
        PyObject *tok = PyList_GET_ITEM(distinct, order[r]);
        if (!PyBytes_Check(tok)) {
            PyErr_SetString(PyExc_TypeError, "encode_column: tokens must be bytes");
            goto done;
        }
        PyObject *id = PyDict_GetItemWithError(shared, tok);
        unsigned char kind = SHARED;
        if (id) {
            if ((ids[n_ids++] = PyLong_AsLongLong(id)) == -1 && PyErr_Occurred()) goto done;
        } else if (PyErr_Occurred()) {
            goto done;
        } else {
            size_t len = PyBytes_GET_SIZE(tok);
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
            kind = (unsigned char)entry_of((const unsigned char *)PyBytes_AS_STRING(tok), len, raw, &bytes, &size);
            if (put_bytes(&payload, bytes, size) < 0) goto done;
            if (kind == LITERAL || kind == BASE64) sizes[n_sizes++] = size;
        }
        if (put_bytes(&kinds, &kind, 1) < 0) goto done;
    }
    const int64_t *tokens = stream.buf;
    for (Py_ssize_t i = 0; i < n_stream; i++) {
        if (tokens[i] < 0 || tokens[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "encode_column: a token index beyond the tokens");
            goto done;
        }
        tail[rank_of[tokens[i]]]++;
    }
    for (Py_ssize_t r = n - 1; r >= 0; r--) tail[r] += tail[r + 1]; /* tail[r]: how many ranks are >= r */
    int s = best_s(tail, n);
    if (!s) {
        PyErr_Format(PyExc_ValueError, "%zd distinct tokens do not fit a 4-byte dense code", n);
        goto done;
    }
    int64_t bases[5] = {0}, width = s, c = 256 - s;
    for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= c;
    if (reserve(&ranks, 4 * n_stream) < 0) goto done;
    for (Py_ssize_t i = 0; i < n_stream; i++) { /* dense.encode */
        int64_t rank = rank_of[tokens[i]];
        int len = 1;
        while (len < 4 && rank >= bases[len]) len++;
        int64_t rest = rank - bases[len - 1], digits = rest / s;
        unsigned char *at = ranks.data + ranks.len + len - 1;
        *at = (unsigned char)(rest % s);
        for (int back = 1; back < len; back++, digits /= c) at[-back] = (unsigned char)(s + digits % c);
        ranks.len += len;
    }
    for (Py_ssize_t i = 0; i < n_skel; i++)
        if ((skel[i] = PyLong_AsLongLong(PyList_GET_ITEM(skeletons, i))) == -1 && PyErr_Occurred()) goto done;
    unsigned char s_byte = (unsigned char)s;
    if (!(parts[0] = PyBytes_FromStringAndSize((const char *)kinds.data, kinds.len)) ||
        svb_encode(ids, n_ids, &parts[1], &parts[2]) < 0 || svb_encode(sizes, n_sizes, &parts[3], &parts[4]) < 0 ||
        !(parts[5] = PyBytes_FromStringAndSize((const char *)payload.data, payload.len)) ||
        !(parts[6] = PyBytes_FromStringAndSize((const char *)&s_byte, 1)) ||
        !(parts[7] = PyBytes_FromStringAndSize((const char *)ranks.data, ranks.len)) ||
        svb_encode(skel, n_skel, &parts[8], &parts[9]) < 0)
        goto done;
    result = PyTuple_New(10);
    for (int k = 0; result && k < 10; k++) PyTuple_SET_ITEM(result, k, Py_NewRef(parts[k]));
done:
    for (int k = 0; k < 10; k++) Py_XDECREF(parts[k]);
    PyMem_Free(order);
    PyMem_Free(rank_of);
    PyMem_Free(tail);
    PyMem_Free(ids);
    PyMem_Free(sizes);
    PyMem_Free(skel);
    PyMem_Free(kinds.data);
    PyMem_Free(payload.data);
    PyMem_Free(ranks.data);
    PyMem_Free(raw);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&stream);
    return result;
}

/* --- skeletons and shared tokens ------------------------------------------------------------------------------ */

/* The end of the JSON string starting with the quote at s[i] (past its closing quote), or 0 when unterminated:
 * the "[^"\\]*(?:\\.[^"\\]*)*" of text's expressions. */
static size_t string_end(const unsigned char *s, size_t n, size_t i) {
    for (size_t j = i + 1;;) {
        const unsigned char *quote = j < n ? memchr(s + j, '"', n - j) : NULL;
        const unsigned char *slash = quote ? memchr(s + j, '\\', quote - (s + j)) : NULL;
        if (!quote) return 0;
        if (!slash) return quote - s + 1;
        j = slash - s + 2;
    }
}

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

/* --- split_block ---------------------------------------------------------------------------------------------- */

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

/* split_block(values, encodings, ids, author, previous, first) -> (orders, timestamps, signatures, contents,
 * types): envelope.split of every message of a block and block._type_of. None when a message is not the author's
 * next one or a text will not encode: the Python route then reports it. */
static PyObject *split_block(PyObject *self, PyObject *args) {
    PyObject *values, *encodings, *ids, *author, *previous;
    long long first;
    if (!PyArg_ParseTuple(args, "O!O!O!UOL", &PyList_Type, &values, &PyList_Type, &encodings, &PyList_Type, &ids,
                          &author, &previous, &first))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (PyList_GET_SIZE(encodings) != n || PyList_GET_SIZE(ids) != n) {
        PyErr_SetString(PyExc_ValueError, "split_block: one value, encoding and id per message");
        return NULL;
    }
    PyObject *orders = PyList_New(n), *contents = PyList_New(n), *types = PyList_New(n), *result = NULL;
    PyObject *stamps = PyBytes_FromStringAndSize(NULL, 8 * n), *signatures = PyBytes_FromStringAndSize(NULL, 64 * n);
    PyObject *known[16] = {0}; /* the order tuples met so far, by their code */
    int codes[16], n_known = 0;
    Buf head = {0}, tail = {0}, author_text = {0}, previous_text = {0}, numbers[2] = {{0}};
    if (!orders || !contents || !types || !stamps || !signatures) goto done;
    Py_ssize_t author_len, previous_len = 0;
    const char *author_utf8 = PyUnicode_AsUTF8AndSize(author, &author_len), *previous_utf8 = NULL;
    if (!author_utf8 || quoted(&author_text, author_utf8, author_len) < 0) goto fallback;
    if (previous != Py_None && !(PyUnicode_Check(previous) && (previous_utf8 = PyUnicode_AsUTF8AndSize(previous, &previous_len))))
        goto fallback;
    int64_t last = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyList_GET_ITEM(values, i), *enc = PyList_GET_ITEM(encodings, i);
        if (!PyDict_Check(value) || !PyBytes_Check(enc)) goto fallback;
        PyObject *sequence = PyLong_FromLongLong(first + i);
        PyObject *got_author = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_AUTHOR]);
        PyObject *got_sequence = got_author || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SEQUENCE]) : NULL;
        int same = sequence && !PyErr_Occurred() ? PyObject_RichCompareBool(got_author ? got_author : Py_None, author, Py_EQ) : -1;
        if (same == 1) same = PyObject_RichCompareBool(got_sequence ? got_sequence : Py_None, sequence, Py_EQ);
        Py_XDECREF(sequence);
        if (same < 0) goto done;
        if (!same) goto fallback; /* not one feed in order: the Python route raises NotArchivable */
        PyObject *type = type_of(value);
        if (!type) goto done;
        PyList_SET_ITEM(types, i, type);
        int order[7], code = 0;
        unsigned char raw[66];
        PyObject *stamp_obj = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_TIMESTAMP]);
        PyObject *sig_obj = stamp_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SIGNATURE]) : NULL;
        PyObject *hash = sig_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_HASH]) : NULL;
        if (PyErr_Occurred()) goto done;
        int64_t stamp = timestamp_of(stamp_obj);
        int derivable = order_of(value, order) == 0 && stamp >= 0 && signature_of(sig_obj, raw) == 0 && hash &&
                        PyUnicode_Check(hash) && PyUnicode_CompareWithASCIIString(hash, "sha256") == 0;
        const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(enc);
        Py_ssize_t size = PyBytes_GET_SIZE(enc);
        if (derivable) {
            Text texts[7];
            for (int k = 0; k < 2; k++) {
                numbers[k].len = 0;
                if (reserve(&numbers[k], 21) < 0) goto done;
                put_int(&numbers[k], k ? stamp : first + i);
            }
            texts[K_PREVIOUS] = (Text){"null", 4};
            if (previous_utf8) {
                if (quoted(&previous_text, previous_utf8, previous_len) < 0) goto done;
                texts[K_PREVIOUS] = (Text){(const char *)previous_text.data, (Py_ssize_t)previous_text.len};
            }
            texts[K_AUTHOR] = (Text){(const char *)author_text.data, (Py_ssize_t)author_text.len};
            texts[K_SEQUENCE] = (Text){(const char *)numbers[0].data, (Py_ssize_t)numbers[0].len};
            texts[K_TIMESTAMP] = (Text){(const char *)numbers[1].data, (Py_ssize_t)numbers[1].len};
            texts[K_HASH] = (Text){"\"sha256\"", 8};
            texts[K_CONTENT] = (Text){"", 0};
            Buf sig = {0};
            int failed = quoted(&sig, PyUnicode_DATA(sig_obj), PyUnicode_GET_LENGTH(sig_obj)) < 0;
            texts[K_SIGNATURE] = (Text){(const char *)sig.data, (Py_ssize_t)sig.len};
            failed = failed || frame(order, texts, &head, &tail) < 0;
            PyMem_Free(sig.data);
            if (failed) goto done;
            derivable = size > (Py_ssize_t)(head.len + tail.len) && !memcmp(bytes, head.data, head.len) &&
                        !memcmp(bytes + size - tail.len, tail.data, tail.len);
        }
        for (int k = 0; k < 7 && derivable; k++) code = code * 7 + order[k];
        int which = -1;
        for (int k = 0; k < n_known && which < 0; k++)
            if (codes[k] == code) which = k;
        if (derivable && which < 0 && n_known < 16) {
            PyObject *keys = PyTuple_New(7);
            if (!keys) goto done;
            for (int k = 0; k < 7; k++) PyTuple_SET_ITEM(keys, k, Py_NewRef(ENVELOPE_KEYS[order[k]]));
            known[n_known] = keys, codes[n_known] = code, which = n_known++;
        }
        if (derivable && which < 0) goto fallback; /* more than 16 key orders in one block: let Python do it */
        PyObject *content = derivable ? PyBytes_FromStringAndSize((const char *)bytes + head.len, size - head.len - tail.len)
                                      : Py_NewRef(enc);
        if (!content) goto done;
        PyList_SET_ITEM(contents, i, content);
        PyList_SET_ITEM(orders, i, Py_NewRef(derivable ? known[which] : Py_None));
        last = derivable ? stamp : last;
        memcpy(PyBytes_AS_STRING(stamps) + 8 * i, &last, 8);
        if (derivable)
            memcpy(PyBytes_AS_STRING(signatures) + 64 * i, raw, 64);
        else
            memset(PyBytes_AS_STRING(signatures) + 64 * i, 0, 64);
        PyObject *id = PyList_GET_ITEM(ids, i);
        if (!PyUnicode_Check(id) || !(previous_utf8 = PyUnicode_AsUTF8AndSize(id, &previous_len))) goto fallback;
    }
    result = PyTuple_Pack(5, orders, stamps, signatures, contents, types);
    goto done;
fallback:
    PyErr_Clear();
    result = Py_NewRef(Py_None);
done:
    for (int k = 0; k < n_known; k++) Py_DECREF(known[k]);
    Py_XDECREF(orders);
    Py_XDECREF(contents);
    Py_XDECREF(types);
    Py_XDECREF(stamps);
    Py_XDECREF(signatures);
    PyMem_Free(head.data);
    PyMem_Free(tail.data);
    PyMem_Free(author_text.data);
    PyMem_Free(previous_text.data);
    PyMem_Free(numbers[0].data);
    PyMem_Free(numbers[1].data);
    return result;
}

/* --- module -------------------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"indent", indent, METH_VARARGS, "indent(compact, depth) -> the skeleton laid out as text._indent does"},
    {"store_skeleton", store_skeleton, METH_O, "store_skeleton(skeleton) -> its stored form, as text.store_skeleton"},
    {"shared_tokens", shared_tokens, METH_O, "shared_tokens(entries) -> the token of each TOKEN dictionary entry"},
    {"encode_column", encode_column, METH_VARARGS,
     "encode_column(distinct, counts, stream, shared, skeleton_ids) -> the ten parts of text.TextColumn"},
    {"split_block", split_block, METH_VARARGS,
     "split_block(values, encodings, ids, author, previous, first) -> (orders, int64 timestamps, signatures, "
     "contents, types) or None"},
    {"flatten_block", flatten_block, METH_VARARGS,
     "flatten_block(contents, keys_as_data) -> (skeletons, distinct tokens, int64 counts, int64 token indexes) or "
     "None"},
    {"shared_entries", shared_entries, METH_O, "shared_entries(tokens) -> text.shared_entry of each token"},
    {"id_texts", id_texts, METH_O, "id_texts(digests) -> the message id of each 32-byte digest, 52 bytes each"},
    {"svb_decode", svb_decode, METH_VARARGS, "svb_decode(codes, values, wide, where) -> uint64 values end to end"},
    {"decode_column", decode_column, METH_VARARGS,
     "decode_column(parts, n, shared_data, shared_offsets, skeleton_parts_data, skeleton_parts_offsets, first, "
     "holes) -> (the n texts end to end, n + 1 int64 offsets); checked to be UTF-8"},
    {"sha256", sha256_py, METH_VARARGS, "sha256(data, portable=False) -> the digest chain_ids uses (for tests)"},
    {"chain_ids", chain_ids, METH_VARARGS,
     "chain_ids(contents, offsets, layout_of, layouts, timestamps, sequence_base, signatures, previous, keep) -> "
     "(32-byte digests end to end, each message's text or None)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_speedups", .m_methods = methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    for (const char *c = "\"-0123456789tfn"; *c; c++) LEAF_START[(unsigned char)*c] = 1;
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
