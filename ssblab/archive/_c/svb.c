/* StreamVByte both ways (docs/archive-format.md §4): the canonical coding of a column of integers, widths 1234 or
 * 1248, and its checked decoding. */
#include "speedups.h"

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

int64_t *svb1234(PyObject *codes, PyObject *values, Py_ssize_t *count, const char *where) {
    return (int64_t *)svb_values((const unsigned char *)PyBytes_AS_STRING(codes), PyBytes_GET_SIZE(codes),
                                 (const unsigned char *)PyBytes_AS_STRING(values), PyBytes_GET_SIZE(values), 0,
                                 count, where); /* 1234 values fit int64 */
}

/* svb_decode(codes, values, wide, where) -> the values as uint64, end to end. */
PyObject *svb_decode(PyObject *self, PyObject *args) {
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

/* The canonical StreamVByte of values: (n + 3) / 4 code bytes into codes, and each value into data in the fewest of
 * 1, 2, 3 or 4 bytes ("1234", every value below 2**32), or of 1, 2, 4 or 8 when wide ("1248"); data has room for 4
 * or 8 bytes a value. The bytes written to data, or -1 (a ValueError set) when a value does not fit. */
Py_ssize_t svb_into(const uint64_t *values, Py_ssize_t n, int wide, unsigned char *codes, unsigned char *data) {
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
int svb_encode(const uint64_t *values, Py_ssize_t n, int wide, PyObject **codes, PyObject **data) {
    *codes = PyBytes_FromStringAndSize(NULL, (n + 3) / 4);
    *data = PyBytes_FromStringAndSize(NULL, (wide ? 8 : 4) * n);
    if (!*codes || !*data) return -1;
    Py_ssize_t len = svb_into(values, n, wide, (unsigned char *)PyBytes_AS_STRING(*codes),
                              (unsigned char *)PyBytes_AS_STRING(*data));
    return len < 0 ? -1 : _PyBytes_Resize(data, len);
}

/* svb_encode(values, wide) -> (codes, values): the canonical StreamVByte of a uint64 buffer (svb.encode). */
PyObject *svb_encode_py(PyObject *self, PyObject *args) {
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
