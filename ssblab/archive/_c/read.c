/* read_block: a MessageBlock blob's fields, read straight from the FlatBuffer when the blob is regular (the Python
 * reader reads anything else, and names what is wrong). */
#include "speedups.h"

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
PyObject *read_block(PyObject *self, PyObject *arg) {
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

