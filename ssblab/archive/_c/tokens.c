/* The TOKEN dictionary's side of the archive: the tokens repeated across blocks (its candidates), its entries
 * (a kind byte and a payload) both ways, and the token_slots table encode_column finds shared tokens in. */
#include "speedups.h"

typedef struct { /* a token first met: its hash and first 8 bytes (zero-padded), where it lies, in how many blocks */
    uint64_t hash, head;
    const unsigned char *text;
    uint32_t len, count;
} Met;

/* The blocks' tokens being counted: each block's three buffers, its tokens as Pieces, and the tokens met so far in
 * open addressing (a slot holds a hash tag in its high half beside an index + 1 into met; 0: empty). */
typedef struct {
    Py_buffer *views;
    Py_ssize_t n_blocks, n_views, total;
    Pieces *blocks;
    uint64_t *slots;
    size_t mask, n;
    Met *met;
} Counts;

/* Each block's buffers taken and checked, and the tables sized for all their tokens. */
static int counts_start(Counts *c, PyObject *texts, PyObject *offsets, PyObject *hashes) {
    c->n_blocks = PyList_GET_SIZE(texts);
    if (PyList_GET_SIZE(offsets) != c->n_blocks || PyList_GET_SIZE(hashes) != c->n_blocks) {
        PyErr_SetString(PyExc_ValueError, "repeated_tokens: texts, offsets and hashes of as many blocks");
        return -1;
    }
    c->views = PyMem_Calloc(3 * c->n_blocks + 1, sizeof(Py_buffer));
    c->blocks = PyMem_Calloc(c->n_blocks + 1, sizeof(Pieces));
    if (!c->views || !c->blocks) return PyErr_NoMemory(), -1;
    for (Py_ssize_t b = 0; b < c->n_blocks; b++) {
        Py_buffer *v = &c->views[3 * b];
        PyObject *parts[3] = {PyList_GET_ITEM(texts, b), PyList_GET_ITEM(offsets, b), PyList_GET_ITEM(hashes, b)};
        for (int k = 0; k < 3; k++, c->n_views++)
            if (PyObject_GetBuffer(parts[k], &v[k], PyBUF_SIMPLE) < 0) return -1;
        if (pieces_of(&c->blocks[b], &v[0], &v[1], "repeated_tokens") < 0) return -1;
        if (v[2].len != 8 * c->blocks[b].n) {
            PyErr_SetString(PyExc_ValueError, "repeated_tokens: one int64 hash per token");
            return -1;
        }
        c->total += c->blocks[b].n;
    }
    if ((uint64_t)c->total >= UINT32_MAX / 2) return PyErr_NoMemory(), -1; /* indexes and lengths are 32-bit */
    size_t size = 16;
    while (2 * size < 3 * (size_t)c->total) size *= 2; /* no fuller than 2/3, and less as tokens repeat */
    c->mask = size - 1;
    c->slots = PyMem_Calloc(size, sizeof(uint64_t));
    c->met = PyMem_Malloc((c->total + 1) * sizeof(Met));
    return c->slots && c->met ? 0 : (PyErr_NoMemory(), -1);
}

/* Counts block b's tokens: each distinct token of a block once, so a count past 1 is a token of several blocks. */
static int count_block(Counts *c, Py_ssize_t b) {
    const Pieces *block = &c->blocks[b];
    const unsigned char *h = c->views[3 * b + 2].buf;
    uint64_t *slots = c->slots;
    for (Py_ssize_t k = 0; k < block->n; k++) {
        uint64_t key, ahead, head = 0;
        if (k + 16 < block->n) { /* most lookups miss the cache: fetch the slots a few tokens ahead */
            memcpy(&ahead, h + 8 * (k + 16), 8);
            __builtin_prefetch(&slots[ahead & c->mask]);
        }
        const unsigned char *tok;
        int64_t len;
        if (piece(block, k, &tok, &len) < 0 || len > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "repeated_tokens: offsets outside the texts");
            return -1;
        }
        memcpy(&key, h + 8 * k, 8);
        uint64_t tag = key & 0xFFFFFFFF00000000ULL;
        memcpy(&head, tok, len < 8 ? len : 8);
        size_t at = key & c->mask;
        for (; slots[at]; at = (at + 1) & c->mask) {
            const Met *known = &c->met[(slots[at] & 0xFFFFFFFF) - 1];
            if ((slots[at] & 0xFFFFFFFF00000000ULL) == tag && known->hash == key && known->len == len &&
                known->head == head && (len <= 8 || same_tail(known->text, tok, len)))
                break;
        }
        if (!slots[at]) {
            slots[at] = tag | ++c->n;
            c->met[c->n - 1] = (Met){key, head, tok, (uint32_t)len, 0};
        }
        c->met[(slots[at] & 0xFFFFFFFF) - 1].count++;
    }
    return 0;
}

/* The tokens counted more than once, first met first. */
static PyObject *repeated_list(const Counts *c) {
    PyObject *out = PyList_New(0);
    for (size_t k = 0; out && k < c->n; k++) {
        if (c->met[k].count < 2) continue;
        PyObject *tok = PyBytes_FromStringAndSize((const char *)c->met[k].text, c->met[k].len);
        if (!tok || PyList_Append(out, tok) < 0) Py_CLEAR(out);
        Py_XDECREF(tok);
    }
    return out;
}

/* repeated_tokens(texts, offsets, hashes) -> the tokens (bytes) met in more than one block, in the order first met:
 * what block._shared_candidates counts, without a Python object per token. Per block: its distinct tokens end to
 * end, their n + 1 int64 offsets and their int64 hash_bytes (what plan_block returns). */
PyObject *repeated_tokens(PyObject *self, PyObject *args) {
    PyObject *texts, *offsets, *hashes, *out = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &texts, &PyList_Type, &offsets, &PyList_Type, &hashes))
        return NULL;
    Counts c = {0};
    int status = counts_start(&c, texts, offsets, hashes);
    for (Py_ssize_t b = 0; status == 0 && b < c.n_blocks; b++) status = count_block(&c, b);
    if (status == 0) out = repeated_list(&c);
    for (Py_ssize_t k = 0; c.views && k < c.n_views; k++) PyBuffer_Release(&c.views[k]);
    PyMem_Free(c.views);
    PyMem_Free(c.blocks);
    PyMem_Free(c.slots);
    PyMem_Free(c.met);
    return out;
}

/* token_slots(data, offsets) -> the table encode_column finds shared tokens by (the pieces of data and offsets,
 * each distinct): a power of two of Slots, at least twice as many as tokens, placed as intern places them. */
PyObject *token_slots(PyObject *self, PyObject *args) {
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
int64_t find_shared(const Py_buffer *slots, const Pieces *shared, const unsigned char *tok, size_t len,
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

/* The bytes of canonical base64 (what b64encode gives back exactly) into raw; -1 when text is not canonical. */
/* text.entry_of: the kind of a token without the shared dictionary, and its payload (the token itself, or its
 * decoded bytes written to raw, which holds len bytes). */
int entry_of(const unsigned char *tok, size_t len, unsigned char *raw, const unsigned char **payload,
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

/* Each bytes item of list through one (a new bytes object, or NULL with an error set), as a new list; name says
 * what takes the list in the error for an item that is not bytes. */
static PyObject *map_bytes(PyObject *list, const char *name, PyObject *(*one)(const unsigned char *, size_t, Buf *)) {
    if (!PyList_Check(list)) {
        PyErr_Format(PyExc_TypeError, "%s takes a list of bytes", name);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *out = PyList_New(n);
    Buf scratch = {0};
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i), *made = NULL;
        if (!PyBytes_Check(item))
            PyErr_Format(PyExc_TypeError, "%s takes a list of bytes", name);
        else
            made = one((const unsigned char *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), &scratch);
        if (!made) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, made);
    }
    PyMem_Free(scratch.data);
    return out;
}

/* text.shared_entry of one token: its kind byte, then its payload (decoded into scratch past the kind byte). */
static PyObject *shared_entry(const unsigned char *tok, size_t len, Buf *scratch) {
    const unsigned char *payload;
    size_t size;
    scratch->len = 0;
    if (reserve(scratch, len + 1) < 0) return NULL;
    scratch->data[0] = (unsigned char)entry_of(tok, len, scratch->data + 1, &payload, &size);
    if (payload != scratch->data + 1) memcpy(scratch->data + 1, payload, size); /* a literal: the token itself */
    return PyBytes_FromStringAndSize((const char *)scratch->data, (Py_ssize_t)size + 1);
}

/* shared_entries(tokens) -> text.shared_entry of each token: its kind byte, then its payload. */
PyObject *shared_entries(PyObject *self, PyObject *tokens) { return map_bytes(tokens, "shared_entries", shared_entry); }

/* text.shared_token of one TOKEN dictionary entry (kind byte + payload), checked: dictionaries are untrusted. */
static PyObject *shared_token(const unsigned char *e, size_t len, Buf *text) {
    int kind = len ? e[0] : SHARED;
    size_t size = len ? len - 1 : 0;
    if (kind == SHARED) {
        PyErr_SetString(Malformed, "TOKEN dictionary: entry without a usable kind byte");
        return NULL;
    }
    if (kind == LITERAL) return PyBytes_FromStringAndSize((const char *)e + 1, size);
    if (kind != BASE64 && !(kind <= BLOB_REF && size == 32)) {
        PyErr_Format(Malformed, "content column: bad dictionary entry (kind %d, %zu bytes)", kind, size);
        return NULL;
    }
    size_t sigil = kind != BASE64, suffix = kind != BASE64 ? strlen(SUFFIXES[kind]) : 0;
    text->len = 0;
    if (reserve(text, sigil + 4 * ((size + 2) / 3) + suffix) < 0) return NULL;
    put(text, SIGILS[kind != BASE64 ? kind : 0], sigil);
    put_base64(text, e + 1, size);
    put(text, SUFFIXES[kind != BASE64 ? kind : 0], suffix);
    return PyBytes_FromStringAndSize((const char *)text->data, text->len);
}

/* shared_tokens(entries) -> text.shared_token of each TOKEN dictionary entry. */
PyObject *shared_tokens(PyObject *self, PyObject *entries) { return map_bytes(entries, "shared_tokens", shared_token); }

