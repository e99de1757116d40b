/* block_blob and bundle_blob: the MessageBlock and Bundle blobs, byte for byte as the Python builder routes of
 * block.encode_block and flat.build_bundle lay them out (the builder is builder.c); the content column goes in as a
 * FlexBuffer vector of its ten parts. */
#include "speedups.h"

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

/* block_blob's arguments, checked: the columns (one int64 per message), the hashes, the content column's parts
 * and the dictionary heads. */
typedef struct {
    PyObject *base, *author_arg, *previous_arg, *last_arg, *parts, *heads_arg;
    Py_buffer stamps, types, sigs, signatures;
    const unsigned char *author, *previous, *last_hash;
    Head heads[6];
    size_t n;
    uint64_t sequence_base;
    int64_t first, last;
} BlockArgs;

/* 0 when the arguments are whole, 1 when a value does not fit its field (None: the Python route reports it), -1
 * with an error set. */
static int block_args(BlockArgs *a) {
    a->n = a->stamps.len / 8;
    if (a->stamps.len % 8 || !a->n || a->types.len != a->stamps.len || a->sigs.len != a->stamps.len) {
        PyErr_SetString(PyExc_ValueError, "block_blob: one int64 timestamp, type id and signature id per message");
        return -1;
    }
    int misfit;
    if (hash_arg(a->author_arg, 0, &a->author) < 0 || hash_arg(a->previous_arg, 1, &a->previous) < 0 ||
        hash_arg(a->last_arg, 0, &a->last_hash) < 0 || (misfit = heads_arg(a->heads_arg, a->heads)) < 0)
        return -1;
    if (PyTuple_GET_SIZE(a->parts) != 10) {
        PyErr_SetString(PyExc_ValueError, "block_blob: the content column's ten parts");
        return -1;
    }
    for (int k = 0; k < 10; k++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(a->parts, k))) {
            PyErr_SetString(PyExc_TypeError, "block_blob: the content column's parts are bytes");
            return -1;
        }
    a->first = at64(&a->stamps, 0), a->last = at64(&a->stamps, a->n - 1);
    return misfit || !fits_in(a->base, UINT32_MAX, &a->sequence_base) || a->n > UINT32_MAX || a->first < 0 ||
           a->last < 0;
}

/* block._put_classic: the ClassicMessageBlock table, its content column laid out as a FlexBuffer in flex. */
static size_t b_classic(Builder *b, const BlockArgs *a, uint64_t *runs, uint64_t *lengths, unsigned char *scratch,
                        Buf *flex) {
    b_start(b, 3);
    b_hash(b, a->author);
    b_field(b, 0);
    if (a->previous) {
        b_hash(b, a->previous);
        b_field(b, 1);
    }
    b_hash(b, a->last_hash);
    b_field(b, 2);
    size_t classic_sketch = b_end(b);
    size_t sigs_at = b_runs(b, &a->sigs, a->n, runs, lengths, scratch);
    size_t crypto = b_bytes(b, a->signatures.buf, a->signatures.len);
    int flex_failed = b->failed ? 0 : flex_blobs(&PyTuple_GET_ITEM(a->parts, 0), flex);
    if (flex_failed && !b->failed) b->failed = flex_failed;
    size_t messages = b_bytes(b, flex->data, flex->len);
    b_start(b, 4);
    b_add_offset(b, 0, classic_sketch);
    b_add_offset(b, 1, sigs_at);
    b_add_offset(b, 2, crypto);
    b_add_offset(b, 3, messages);
    return b_end(b);
}

/* block.encode_block, call for call: the MessageBlock blob of whole arguments (bytes, None or NULL as b_blob). */
static PyObject *b_block(Builder *b, const BlockArgs *a, uint64_t *columns, unsigned char *scratch) {
    size_t n = a->n;
    uint64_t *deltas = columns, *runs = columns + n, *lengths = columns + 2 * n;
    for (size_t i = 0; i < n; i++) { /* svb.zigzag of each step, as int64 arithmetic wraps */
        uint64_t step = i ? (uint64_t)at64(&a->stamps, i) - (uint64_t)at64(&a->stamps, i - 1) : 0;
        deltas[i] = step << 1 ^ (0 - (step >> 63));
    }
    Buf flex = {0};
    size_t sketch = b_sketch(b, n, a->sequence_base, (uint64_t)a->first, (uint64_t)a->last);
    size_t deltas_at = b_svb(b, deltas, n, 1, scratch);
    size_t types_at = b_runs(b, &a->types, n, runs, lengths, scratch);
    size_t classic = b_classic(b, a, runs, lengths, scratch, &flex);
    PyMem_Free(flex.data);
    size_t dicts = b_dict_set(b, a->heads);
    b_start(b, 6);
    b_add_offset(b, 0, sketch);
    b_add_offset(b, 1, deltas_at);
    b_add_offset(b, 2, types_at);
    b_add_scalar(b, 3, 1, 1); /* ClassicMessageBlock */
    b_add_offset(b, 4, classic);
    b_add_offset(b, 5, dicts);
    return b_blob(b, 1 /* MessageBlock */, b_end(b));
}

/* block_blob(sequence_base, timestamps, type_ids, signature_ids, signatures, author, previous, last_hash, parts,
 * heads) -> the MessageBlock blob that block.encode_block's builder route makes of the same fields, or None when a
 * value does not fit its field (that route reports it). timestamps and the id columns: int64, one per message;
 * author, previous (None for the first block of a feed) and last_hash: 32 bytes; parts: the content column's ten
 * parts (text.TextColumn.parts); heads: the six dictionary chain heads, each None or (kind, blob id, size). */
PyObject *block_blob(PyObject *self, PyObject *args) {
    BlockArgs a = {0};
    if (!PyArg_ParseTuple(args, "O!y*y*y*y*OOOO!O!", &PyLong_Type, &a.base, &a.stamps, &a.types, &a.sigs,
                          &a.signatures, &a.author_arg, &a.previous_arg, &a.last_arg, &PyTuple_Type, &a.parts,
                          &PyTuple_Type, &a.heads_arg))
        return NULL;
    Builder b = {0};
    PyObject *result = NULL;
    uint64_t *columns = NULL;
    unsigned char *scratch = NULL;
    int status = block_args(&a);
    if (status > 0) result = Py_NewRef(Py_None);
    if (status == 0) {
        columns = PyMem_Malloc(3 * a.n * sizeof(uint64_t));
        scratch = PyMem_Malloc(9 * a.n + 8); /* the widest StreamVByte: n 8-byte values and their codes */
        b.cap = a.signatures.len + 10 * a.n + 4096;
        for (int k = 0; k < 10; k++) b.cap += PyBytes_GET_SIZE(PyTuple_GET_ITEM(a.parts, k)) + 16;
        if (!columns || !scratch || !(b.data = PyMem_Malloc(b.cap)))
            PyErr_NoMemory();
        else
            result = b_block(&b, &a, columns, scratch);
    }
    PyMem_Free(b.data);
    PyMem_Free(b.vtables);
    PyMem_Free(columns);
    PyMem_Free(scratch);
    Py_buffer *views[] = {&a.stamps, &a.types, &a.sigs, &a.signatures};
    for (int k = 0; k < 4; k++) PyBuffer_Release(views[k]);
    return result;
}

/* flat.build_bundle's MessageBlockRef of one block's ref (blob id, length, sequence base, first timestamp, last
 * timestamp, previous blob id or None, last message hash): 0 with its offset in *at, 1 when a value does not fit
 * its field, -1 with an error set. */
static int b_block_ref(Builder *b, PyObject *ref, size_t *at) {
    static const uint64_t MAX[4] = {UINT32_MAX, UINT32_MAX, UINT64_MAX >> 1, UINT64_MAX >> 1};
    PyObject *blob_arg, *previous_arg, *last_arg, *numbers[4];
    const unsigned char *blob_id, *previous, *last_hash;
    uint64_t sketch[4];
    if (!PyArg_ParseTuple(ref, "OO!O!O!O!OO", &blob_arg, &PyLong_Type, &numbers[0], &PyLong_Type, &numbers[1],
                          &PyLong_Type, &numbers[2], &PyLong_Type, &numbers[3], &previous_arg, &last_arg) ||
        hash_arg(blob_arg, 0, &blob_id) < 0 || hash_arg(previous_arg, 1, &previous) < 0 ||
        hash_arg(last_arg, 0, &last_hash) < 0)
        return -1;
    for (int j = 0; j < 4; j++)
        if (!fits_in(numbers[j], MAX[j], &sketch[j])) return 1;
    size_t sketch_at = b_sketch(b, sketch[0], sketch[1], sketch[2], sketch[3]);
    b_start(b, 4);
    b_hash(b, blob_id);
    b_field(b, 0);
    b_add_offset(b, 1, sketch_at);
    if (previous) {
        b_hash(b, previous);
        b_field(b, 2);
    }
    b_hash(b, last_hash);
    b_field(b, 3);
    *at = b_end(b);
    return 0;
}

/* The Bundle table around the block refs at[0..n): flat.build_bundle, call for call. */
static PyObject *b_bundle(Builder *b, const unsigned char *author, const size_t *at, Py_ssize_t n,
                          const Head heads[6]) {
    b_prep(b, 4, 4 * (size_t)n); /* BundleStartMessageBlocksVector: StartVector(4, n, 4) */
    b_prep(b, 4, 4 * (size_t)n);
    for (Py_ssize_t k = n - 1; k >= 0; k--) b_uoffset(b, at[k]);
    b_place(b, (uint64_t)n, 4);
    size_t vector = b->len, dicts = b_dict_set(b, heads);
    b_start(b, 3);
    b_hash(b, author);
    b_field(b, 0);
    b_add_offset(b, 1, vector);
    b_add_offset(b, 2, dicts);
    return b_blob(b, 4 /* Bundle */, b_end(b));
}

/* bundle_blob(author, refs, heads) -> the Bundle blob that flat.build_bundle's builder route makes, or None when a
 * value does not fit its field (that route reports it). refs: each block's (blob id, length, sequence base, first
 * timestamp, last timestamp, previous blob id or None, last message hash); heads: as block_blob's. */
PyObject *bundle_blob(PyObject *self, PyObject *args) {
    PyObject *author_arg, *refs, *heads_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OO!O!", &author_arg, &PyList_Type, &refs, &PyTuple_Type, &heads_obj)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(refs);
    const unsigned char *author;
    Head heads[6];
    int status = 0;
    Builder b = {.cap = 1024 + 256 * (size_t)n};
    size_t *at = PyMem_Malloc((n + 1) * sizeof(size_t));
    if (!at || !(b.data = PyMem_Malloc(b.cap)))
        status = (PyErr_NoMemory(), -1);
    else if (hash_arg(author_arg, 0, &author) < 0 || (status = heads_arg(heads_obj, heads)) < 0)
        status = -1;
    for (Py_ssize_t k = 0; status == 0 && k < n; k++) status = b_block_ref(&b, PyList_GET_ITEM(refs, k), &at[k]);
    result = status < 0 ? NULL : status ? Py_NewRef(Py_None) : b_bundle(&b, author, at, n, heads);
    PyMem_Free(at);
    PyMem_Free(b.data);
    PyMem_Free(b.vtables);
    return result;
}
