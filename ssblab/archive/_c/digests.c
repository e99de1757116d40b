/* block_digests: each message's sha256 id, each id feeding the next message's previous (docs/archive-format.md
 * §5), two blocks' chains side by side; message_texts, each message's signed JSON once the ids are known; id_texts;
 * and the SHA-256 test hooks. */
#include "speedups.h"
#include "sha256.h"

/* id_texts(digests) -> "%<base64>.sha256" of each 32-byte digest, 52 bytes each, end to end. */
PyObject *id_texts(PyObject *self, PyObject *arg) {
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
            if (emit(&f->envelope, p->text, p->len) < 0) return -1;
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
PyObject *sha256_py(PyObject *self, PyObject *args) {
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
PyObject *sha256_streams(PyObject *self, PyObject *args) {
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
PyObject *block_digests(PyObject *self, PyObject *arg) {
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
PyObject *message_texts(PyObject *self, PyObject *args) {
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


/* Chooses the SHA-256 route (the SHA extensions where the CPU has them); call once, at import. */
void digests_init(void) { sha256_init(); }
