#include "speedups.h"

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

PyObject *plan_block(PyObject *self, PyObject *args) {
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

