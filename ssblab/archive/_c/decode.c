/* decode_column: a block's content column (its ten FlexBuffer parts) into the block's texts, each checked to be
 * UTF-8 (docs/archive-format.md §6). */
#include "speedups.h"

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
    if (len <= 16) copy_short(s.inline_text, p, len);
    return s;
}

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

/* The block dictionary's columns as stored: each entry's kind, the shared ids of the SHARED entries, the lengths
 * of the LITERAL and BASE64 ones, and their payloads end to end (refs take 32 bytes each). */
typedef struct {
    const unsigned char *kinds, *payload;
    Py_ssize_t n, n_payload, n_ids, n_sized;
    int64_t *ids, *sized;
} Stored;

/* The stored columns read and checked against each other; the bytes the rendered refs and base64 need go to
 * *scratch. */
static int stored_of(PyObject *const *parts, Stored *st, Py_ssize_t *scratch) {
    Py_ssize_t want_ids = 0, want_sized = 0, n = st->n = PyBytes_GET_SIZE(parts[0]);
    st->kinds = (const unsigned char *)PyBytes_AS_STRING(parts[0]);
    st->payload = (const unsigned char *)PyBytes_AS_STRING(parts[5]), st->n_payload = PyBytes_GET_SIZE(parts[5]);
    for (Py_ssize_t r = 0; r < n; r++) {
        if (st->kinds[r] > SHARED) {
            PyErr_Format(Malformed, "content column: bad dictionary entry kind %d", st->kinds[r]);
            return -1;
        }
        want_ids += st->kinds[r] == SHARED;
        want_sized += st->kinds[r] == LITERAL || st->kinds[r] == BASE64;
    }
    if (!(st->ids = svb1234(parts[1], parts[2], &st->n_ids, "content shared ids")) ||
        !(st->sized = svb1234(parts[3], parts[4], &st->n_sized, "content entry lengths")))
        return -1;
    if (st->n_ids != want_ids || st->n_sized != want_sized) {
        PyErr_SetString(Malformed, "content column: entry kinds disagree with the shared ids or the lengths");
        return -1;
    }
    int64_t total = 0;
    *scratch = 0;
    for (Py_ssize_t r = 0, j = 0; r < n; r++) {
        int kind = st->kinds[r];
        if (kind == SHARED) continue;
        int64_t len = kind == LITERAL || kind == BASE64 ? st->sized[j++] : 32;
        total += len;
        *scratch += kind == LITERAL ? 0 : kind == BASE64 ? 4 * ((len + 2) / 3) : 45 + (int64_t)strlen(SUFFIXES[kind]);
    }
    if (total != st->n_payload) {
        PyErr_SetString(Malformed, "content column: the entry payloads do not add up");
        return -1;
    }
    return 0;
}

/* An entry's own text: a literal as it is (the leaf end, a lone 0x00, noted in e->hole), a ref or base64 entry
 * rendered at *out. */
static int own_entry(Entries *e, Py_ssize_t r, int kind, const unsigned char *at, int64_t len, unsigned char **out) {
    if (kind == LITERAL) {
        e->token[r] = slice_of(at, len);
        if (memchr(at, 0, len)) { /* refs and base64 payloads are binary */
            if (len != 1) {
                PyErr_SetString(Malformed, "content column: a token other than the leaf end contains a 0x00 byte");
                return -1;
            }
            if (e->hole < 0) e->hole = r;
        }
        return 0;
    }
    unsigned char *text = *out, *o = *out;
    if (kind != BASE64) *o++ = SIGILS[kind][0];
    base64_into(o, at, len);
    o += 4 * ((len + 2) / 3);
    if (kind != BASE64) {
        size_t suffix = strlen(SUFFIXES[kind]);
        memcpy(o, SUFFIXES[kind], suffix);
        o += suffix;
    }
    e->token[r] = slice_of(text, o - text);
    *out = o;
    return 0;
}

/* Each rank's text: a shared token where it lies in the shared dictionary, the block's own rendered. */
static int entry_texts(const Stored *st, const Pieces *shared, Entries *e) {
    unsigned char *out = e->scratch;
    const unsigned char *at = st->payload;
    for (Py_ssize_t r = 0, j = 0, k = 0; r < st->n; r++) {
        int kind = st->kinds[r];
        if (kind == SHARED) {
            const unsigned char *text;
            int64_t len;
            prefetch_shared(shared, st->ids, st->n_ids, k);
            if (st->ids[k] >= shared->n || piece(shared, st->ids[k], &text, &len) < 0) {
                PyErr_Format(Malformed, "content column: a shared token id beyond %zd entries", shared->n);
                return -1;
            }
            e->token[r] = slice_of(text, len);
            k++;
            continue;
        }
        int64_t len = kind == LITERAL || kind == BASE64 ? st->sized[j++] : 32;
        if (own_entry(e, r, kind, at, len, &out) < 0) return -1;
        at += len;
    }
    return 0;
}

static int read_entries(PyObject *const *parts, const Pieces *shared, Entries *e) {
    Stored st = {0};
    Py_ssize_t scratch;
    int status = -1;
    if (stored_of(parts, &st, &scratch) == 0) {
        e->n = st.n;
        e->hole = -1;
        e->token = PyMem_Malloc((st.n ? st.n : 1) * sizeof(Slice));
        e->scratch = PyMem_Malloc(scratch ? scratch : 1);
        if (!e->token || !e->scratch)
            PyErr_NoMemory();
        else
            status = entry_texts(&st, shared, e);
    }
    PyMem_Free(st.ids);
    PyMem_Free(st.sized);
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

static int out_grow(Out *o, int64_t need) { /* need: at most MAX_TEXTS + 16 (emit's slack) */
    int64_t cap = o->cap * 2 > need ? o->cap * 2 : need;
    cap = cap < MAX_TEXTS + 16 ? cap : MAX_TEXTS + 16;
    if (_PyBytes_Resize(&o->bytes, cap) < 0) return -1;
    o->data = (unsigned char *)PyBytes_AS_STRING(o->bytes);
    o->cap = cap;
    return 0;
}

static inline int out_emit(const unsigned char *p, int64_t len, Out *o) {
    if (o->len + len >= MAX_TEXTS) {
        PyErr_SetString(Malformed, "content column: texts too large");
        return -1;
    }
    if (o->len + len > o->cap && out_grow(o, o->len + len) < 0) return -1;
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
    if (t->len > 16) return out_emit(t->p, t->len, o);
    if (o->len + t->len >= MAX_TEXTS) {
        PyErr_SetString(Malformed, "content column: texts too large");
        return -1;
    }
    if (o->len + 16 > o->cap && out_grow(o, o->len + 16) < 0) return -1;
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
    return out_emit(p, len, o);
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

/* The walk's tables from decode_column's arguments: the shared tokens, the skeletons' parts and their first part
 * and hole count by skeleton id, the block's entries and each message's skeleton. */
static int walk_of(Walk *w, PyObject *const *p, Py_ssize_t n, Py_buffer *const bufs[6], Pieces pieces[2],
                   Entries *entries) {
    Py_ssize_t n_first, n_holes, n_skel;
    int s = PyBytes_GET_SIZE(p[6]) == 1 ? (unsigned char)PyBytes_AS_STRING(p[6])[0] : 0;
    if (s < 1) {
        PyErr_Format(Malformed, "content tokens: dense code parameter s=%d outside 1..255", s);
        return -1;
    }
    if (int64_buffer(bufs[4], "first", &n_first) < 0 || int64_buffer(bufs[5], "holes", &n_holes) < 0 ||
        pieces_of(&pieces[0], bufs[0], bufs[1], "shared") < 0 || pieces_of(&pieces[1], bufs[2], bufs[3], "parts") < 0 ||
        read_entries(p, &pieces[0], entries) < 0 || !(w->skeleton = svb1234(p[8], p[9], &n_skel, "content skeletons")))
        return -1;
    if (n_skel != n) {
        PyErr_Format(Malformed, "content column: %zd skeleton ids for %zd messages, or an unknown id", n_skel, n);
        return -1;
    }
    w->dense = (Dense){.codes = (const unsigned char *)PyBytes_AS_STRING(p[7]), .len = PyBytes_GET_SIZE(p[7]), .s = s};
    w->entries = entries, w->parts = &pieces[1], w->first = bufs[4], w->holes = bufs[5];
    w->n_skeletons = n_first < n_holes ? n_first : n_holes, w->n = n;
    int64_t width = s; /* ranks coded by codewords of one length: s, s*c, s*c**2 */
    for (int len = 1; len < 4; len++) { /* bases: the first rank of each codeword length */
        w->dense.bases[len] = w->dense.bases[len - 1] + width;
        width *= 256 - s;
    }
    return 0;
}

/* The walk written out: (texts, offsets, plain), or NULL with an error set. */
static PyObject *walk_texts(Walk *w) {
    /* Room for 16 bytes a rank byte (texts run near 10) and a skeleton's worth a message: growing copies the texts,
     * while room never written is never paged in. Never 0 (the shared empty bytes); capped where walk stops. */
    int64_t room = 16 * (int64_t)w->dense.len + 128 * (int64_t)w->n + 64;
    Out out = {.cap = room < MAX_TEXTS + 16 ? room : MAX_TEXTS + 16};
    PyObject *result = NULL, *texts = NULL, *offsets = NULL, *plain = NULL;
    if (!(out.bytes = PyBytes_FromStringAndSize(NULL, out.cap)) ||
        !(offsets = PyBytes_FromStringAndSize(NULL, 8 * (w->n + 1))) ||
        !(plain = PyBytes_FromStringAndSize(NULL, 8 * w->n))) {
        Py_XDECREF(out.bytes);
        goto done;
    }
    out.data = (unsigned char *)PyBytes_AS_STRING(out.bytes);
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(offsets); /* a bytes object's data is 8-aligned */
    ends[0] = 0;
    int failed = walk(w, &out, ends, (int64_t *)PyBytes_AS_STRING(plain)) < 0;
    texts = out.bytes; /* owned here from now on, whatever walk did to it */
    if (!failed && _PyBytes_Resize(&texts, out.len) == 0) result = PyTuple_Pack(3, texts, offsets, plain);
done:
    Py_XDECREF(texts);
    Py_XDECREF(offsets);
    Py_XDECREF(plain);
    return result;
}

PyObject *decode_column(PyObject *self, PyObject *args) {
    PyObject *parts, *result = NULL;
    Py_ssize_t n;
    Py_buffer sd, so, pd, po, first, holes;
    if (!PyArg_ParseTuple(args, "O!ny*y*y*y*y*y*", &PyTuple_Type, &parts, &n, &sd, &so, &pd, &po, &first, &holes))
        return NULL;
    Py_buffer *const bufs[6] = {&sd, &so, &pd, &po, &first, &holes};
    Entries entries = {0};
    Pieces pieces[2];
    Walk w = {0};
    int complete = PyTuple_GET_SIZE(parts) == 10;
    if (!complete) PyErr_SetString(Malformed, "content column: the wrong parts");
    for (int k = 0; complete && k < 10; k++)
        if (!(complete = PyBytes_Check(PyTuple_GET_ITEM(parts, k))))
            PyErr_SetString(PyExc_TypeError, "decode_column: every part must be bytes");
    if (complete && walk_of(&w, &PyTuple_GET_ITEM(parts, 0), n, bufs, pieces, &entries) == 0) result = walk_texts(&w);
    PyMem_Free(entries.token);
    PyMem_Free(entries.scratch);
    PyMem_Free((void *)w.skeleton);
    for (int k = 0; k < 6; k++) PyBuffer_Release(bufs[k]);
    return result;
}
