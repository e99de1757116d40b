/* A FlatBuffers builder in C for block_blob and bundle_blob (blob.c). */
#include "speedups.h"

/* A FlatBuffer built back to front, byte for byte as Python's flatbuffers.Builder lays it out for the same calls
 * (the canonical layout of docs/archive-format.md §3): the same padding before each value, and each table closed
 * with the same vtable, or pointed at an equal one written before. The bytes built so far are the last len of the
 * cap bytes at data; offsets count from the end, as the Python builder's do. A call after a failure does nothing:
 * failed is -1 when an error is set, 1 when a value does not fit its field (or the buffer passes the Python
 * builder's 2 GiB), which the Python route then reports. */

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
void b_prep(Builder *b, size_t size, size_t additional) {
    b->minalign = size > b->minalign ? size : b->minalign;
    size_t pad = (0 - (b->len + additional)) & (size - 1);
    unsigned char *at = b_room(b, pad);
    if (at) memset(at, 0, pad);
}

void b_place(Builder *b, uint64_t value, size_t width) { /* little-endian, as the host */
    unsigned char *at = b_room(b, width);
    if (at) memcpy(at, &value, width);
}

static void b_scalar(Builder *b, uint64_t value, size_t width) {
    b_prep(b, width, 0);
    b_place(b, value, width);
}

void b_uoffset(Builder *b, size_t target) { /* PrependUOffsetTRelative */
    b_prep(b, 4, 0);
    b_place(b, b->len - target + 4, 4);
}

size_t b_bytes(Builder *b, const void *p, size_t n) { /* CreateByteVector */
    b_prep(b, 4, n);
    unsigned char *at = b_room(b, n);
    if (at && n) memcpy(at, p, n);
    b_place(b, n, 4);
    return b->len;
}

size_t b_hash(Builder *b, const unsigned char digest[32]) { /* flat.put_hash: a Hash32 struct */
    b_prep(b, 1, 32);
    unsigned char *at = b_room(b, 32);
    if (at) memcpy(at, digest, 32);
    return b->len;
}

void b_start(Builder *b, int n_fields) {
    memset(b->fields, 0, sizeof b->fields);
    b->n_fields = n_fields;
    b->object_end = b->len;
}

void b_field(Builder *b, int i) { b->fields[i] = b->len; }

void b_add_scalar(Builder *b, int i, uint64_t value, size_t width) { /* defaults (0) are left out */
    if (!value) return;
    if (width < 8 && value >> 8 * width && !b->failed) b->failed = 1;
    b_scalar(b, value, width);
    b_field(b, i);
}

void b_add_offset(Builder *b, int i, size_t target) {
    b_uoffset(b, target);
    b_field(b, i);
}

/* Builder.EndObject: the table's offset. */
size_t b_end(Builder *b) {
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
PyObject *b_blob(Builder *b, int data_type, size_t data) {
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
size_t b_svb(Builder *b, const uint64_t *values, size_t n, int wide, unsigned char *scratch) {
    Py_ssize_t n_codes = (n + 3) / 4, n_values = b->failed ? 0 : svb_into(values, n, wide, scratch, scratch + n_codes);
    if (n_values < 0) b->failed = -1;
    size_t codes = b_bytes(b, scratch, n_codes), data = b_bytes(b, scratch + n_codes, n_values);
    b_start(b, 2);
    b_add_offset(b, 0, codes);
    b_add_offset(b, 1, data);
    return b_end(b);
}

/* flat.put_rle: a RunLengthColumn of the maximal runs of n int64 ids (runs and lengths: room for n values each). */
size_t b_runs(Builder *b, const Py_buffer *ids, size_t n, uint64_t *runs, uint64_t *lengths,
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
size_t b_sketch(Builder *b, uint64_t length, uint64_t base, uint64_t first, uint64_t last) {
    b_start(b, 4);
    b_add_scalar(b, 0, length, 4);
    b_add_scalar(b, 1, base, 4);
    b_add_scalar(b, 2, first, 8);
    b_add_scalar(b, 3, last, 8);
    return b_end(b);
}


/* flat.put_dict_set of the six chain heads (a NULL blob_id: the chain is empty). */
size_t b_dict_set(Builder *b, const Head heads[6]) {
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

