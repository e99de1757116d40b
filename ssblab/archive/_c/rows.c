/* A decoded block's rows as block_digests and message_texts take them (rebuild.block_args): its columns as buffers
 * and its envelope layouts as Part arrays, checked. */
#include "speedups.h"

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


void release_rows(Rows *r) {
    Py_buffer *held[] = {&r->contents, &r->offsets, &r->plain, &r->layout_of, &r->timestamps, &r->signatures};
    for (int k = 0; k < r->held; k++) PyBuffer_Release(held[k]);
    r->held = 0;
    free_layouts(r->layouts, r->n_layouts);
    r->layouts = NULL;
}

/* rows_of((contents, offsets, plain, layout_of, layouts, timestamps, sequence_base, signatures, previous, where)) */
int rows_of(PyObject *args, Rows *r) {
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
