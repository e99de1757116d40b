/* plan_block: a block's messages split into the columns block.plan makes, in one pass (envelopes: envelope.c;
 * contents: flatten.c). */
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

/* A block being planned: its arguments, what is known of the next message, and the columns made so far. */
typedef struct {
    PyObject *messages, *author, *keys_as_data;
    Py_ssize_t n;
    long long first;
    Expect ex;
    PyObject *stamps, *signatures, *order_index, *type_index, *skeleton_index; /* one value a message */
    Coded orders, types;
    int codes[17]; /* each order's key order, coded (order_place) */
    int64_t last;  /* the last timestamp (a verbatim message repeats it) */
    Names names;
    Frames frames;
    Buf skeleton, leaves, stream;
    Intern shapes, tokens;
} Plan;

static int plan_start(Plan *p, PyObject *previous, PyObject *first_arg) {
    Py_ssize_t n = p->n = PyList_GET_SIZE(p->messages);
    PyObject **columns[] = {&p->stamps, &p->order_index, &p->type_index, &p->skeleton_index};
    for (size_t k = 0; k < sizeof columns / sizeof *columns; k++)
        if (!(*columns[k] = PyBytes_FromStringAndSize(NULL, 8 * n))) return -1;
    if (!(p->signatures = PyBytes_FromStringAndSize(NULL, 64 * n)) || !(p->orders.list = PyList_New(0)) ||
        !(p->types.list = PyList_New(0)) || !(p->types.places = PyDict_New()))
        return -1;
    int overflow;
    p->first = PyLong_AsLongLongAndOverflow(first_arg, &overflow);
    if (overflow || p->first > LLONG_MAX - n) return 1; /* the sequences must not overflow */
    if (!(p->ex.author = PyUnicode_AsUTF8AndSize(p->author, &p->ex.author_len))) return 1;
    if (previous != Py_None &&
        !(PyUnicode_Check(previous) && (p->ex.previous = PyUnicode_AsUTF8AndSize(previous, &p->ex.previous_len))))
        return 1;
    return 0;
}

/* Message i's envelope split, from its encoding s or else its value: 1 derivable, 0 verbatim, -2 for the Python
 * route, -1 on error. Its type's place goes to *type. */
static int plan_envelope(Plan *p, PyObject *value, const unsigned char *s, Py_ssize_t size, Py_ssize_t i, Split *sp,
                         int64_t *type, int *flag) {
    Buf seq = {(unsigned char *)p->ex.sequence, 0, sizeof p->ex.sequence};
    put_int(&seq, p->first + i);
    p->ex.sequence_len = seq.len;
    int derivable = split_text(s, size, &p->ex, sp), kind = -1;
    const unsigned char *type_p = NULL;
    size_t type_len = 0;
    if (derivable) {
        kind = type_text(s + sp->start, sp->end - sp->start, &type_p, &type_len);
    } else {
        if (!PyDict_Check(value)) return -2;
        derivable = split_value(value, s, size, p->author, p->first + i, &p->ex, &p->frames, sp);
        if (derivable < 0) return derivable; /* -2: not one feed in order, the Python route raises NotArchivable */
    }
    *type = kind == 1   ? type_named(&p->types, &p->names, type_p, type_len, p->keys_as_data, flag)
            : kind == 0 ? place_of(&p->types, Py_None)
                        : type_valued(&p->types, value, p->keys_as_data, flag);
    return *type < 0 ? -1 : derivable;
}

/* Message i's content flattened and tokenized while in cache (the tables keep each distinct text); 0, 1 for the
 * Python route (a content holding 0x00 is no V8 encoding: that route reports it), -1 on error. */
static int plan_content(Plan *p, const unsigned char *content, size_t len, int keys_as_data, Py_ssize_t i) {
    if (memchr(content, 0, len)) return 1;
    p->skeleton.len = p->leaves.len = 0;
    if (flatten_one(content, len, keys_as_data, &p->skeleton, &p->leaves) < 0 || pad(&p->skeleton) < 0 ||
        pad(&p->leaves) < 0)
        return -1;
    int64_t shape = intern(&p->shapes, p->skeleton.data, p->skeleton.len);
    if (shape < 0 || tokenize(&p->tokens, &p->leaves, &p->stream) < 0) return -1;
    memcpy(PyBytes_AS_STRING(p->skeleton_index) + 8 * i, &shape, 8);
    return 0;
}

/* Message i planned: 0, 1 for the Python route, -1 on error. */
static int plan_message(Plan *p, Py_ssize_t i) {
    prefetch_messages(p->messages, i);
    PyObject *msg = PyList_GET_ITEM(p->messages, i);
    if (!is_message(msg)) return 1;
    PyObject *value = PyTuple_GET_ITEM(msg, 0), *enc = PyTuple_GET_ITEM(msg, 1), *id = PyTuple_GET_ITEM(msg, 2);
    if (!PyBytes_Check(enc) || !PyUnicode_Check(id)) return 1; /* the value is read only when needed */
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(enc);
    Py_ssize_t size = PyBytes_GET_SIZE(enc);
    Split sp;
    int64_t type, order;
    int flag = 0, derivable = plan_envelope(p, value, s, size, i, &sp, &type, &flag);
    if (derivable < 0) return derivable == -2 ? 1 : -1;
    if ((order = order_place(&p->orders, p->codes, sp.order, derivable)) < 0) return order == -2 ? 1 : -1;
    memcpy(PyBytes_AS_STRING(p->type_index) + 8 * i, &type, 8);
    memcpy(PyBytes_AS_STRING(p->order_index) + 8 * i, &order, 8);
    p->last = derivable ? sp.stamp : p->last;
    memcpy(PyBytes_AS_STRING(p->stamps) + 8 * i, &p->last, 8);
    if (derivable)
        memcpy(PyBytes_AS_STRING(p->signatures) + 64 * i, sp.raw, 64);
    else
        memset(PyBytes_AS_STRING(p->signatures) + 64 * i, 0, 64), sp.start = 0, sp.end = size;
    int status = plan_content(p, s + sp.start, sp.end - sp.start, derivable && flag, i);
    if (status) return status;
    return (p->ex.previous = PyUnicode_AsUTF8AndSize(id, &p->ex.previous_len)) ? 0 : 1;
}

/* The twelve columns plan_block returns. */
static PyObject *plan_result(Plan *p) {
    Intern *tokens = &p->tokens;
    PyObject *result = NULL, *skeletons = PyList_New(p->shapes.n);
    PyObject *distinct = PyBytes_FromStringAndSize((const char *)tokens->text.data, tokens->text.len);
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, 8 * (tokens->n + 1));
    PyObject *hashes = PyBytes_FromStringAndSize(NULL, 8 * tokens->n);
    PyObject *stream = PyBytes_FromStringAndSize((const char *)p->stream.data, p->stream.len);
    int complete = skeletons && distinct && offsets && hashes && stream;
    for (size_t k = 0; complete && k < p->shapes.n; k++) {
        PyObject *item = interned_bytes(&p->shapes, k);
        if (!(complete = item != NULL)) break;
        PyList_SET_ITEM(skeletons, k, item);
    }
    if (complete) {
        int64_t *starts = (int64_t *)PyBytes_AS_STRING(offsets); /* a bytes object's data is 8-aligned */
        for (size_t k = 0; k < tokens->n; k++) {
            memcpy(PyBytes_AS_STRING(hashes) + 8 * k, &tokens->items[k].hash, 8);
            starts[k] = (int64_t)tokens->items[k].start;
        }
        starts[tokens->n] = (int64_t)tokens->text.len;
        result = PyTuple_Pack(12, p->stamps, p->signatures, p->orders.list, p->order_index, p->types.list,
                              p->type_index, skeletons, p->skeleton_index, distinct, offsets, hashes, stream);
    }
    PyObject *made[] = {skeletons, distinct, offsets, hashes, stream};
    for (size_t k = 0; k < sizeof made / sizeof *made; k++) Py_XDECREF(made[k]);
    return result;
}

static void plan_free(Plan *p) {
    for (int k = 0; k < p->names.n; k++) Py_DECREF(p->names.names[k]);
    PyObject *objects[] = {p->orders.list, p->types.list, p->types.places, p->order_index, p->type_index,
                           p->stamps, p->signatures, p->skeleton_index};
    for (size_t k = 0; k < sizeof objects / sizeof *objects; k++) Py_XDECREF(objects[k]);
    Buf *bufs[] = {&p->frames.head, &p->frames.tail, &p->frames.numbers[0], &p->frames.numbers[1],
                   &p->frames.previous, &p->skeleton, &p->leaves, &p->stream};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) PyMem_Free(bufs[k]->data);
    intern_free(&p->shapes);
    intern_free(&p->tokens);
}

/* plan_block(messages, author, previous, first, keys_as_data) -> (timestamps, signatures, orders, order indexes,
 * types, type indexes, skeletons, skeleton indexes, distinct tokens end to end, their n + 1 int64 offsets, their
 * int64 hash_bytes, uint32 token stream): each list of distinct values first met first, each index an
 * int64 per message; block.plan of a block of Message tuples (value, encoded, id), or None when something is for
 * the Python route to report (a message that is not the author's next one, a text that will not encode, a content
 * holding 0x00).
 *
 * Most envelopes are settled from the encoding alone (split_text), without touching the parsed value; the
 * others take envelope.split's own route over the value (split_value). Contents are flattened where they lie in
 * the encodings, skeletons and types are interned, and each content's leaves are tokenized as soon as cut. */
PyObject *plan_block(PyObject *self, PyObject *args) {
    Plan p = {0};
    PyObject *previous, *first_arg, *result = NULL;
    if (!PyArg_ParseTuple(args, "O!UOO!O!", &PyList_Type, &p.messages, &p.author, &previous, &PyLong_Type,
                          &first_arg, &PyFrozenSet_Type, &p.keys_as_data))
        return NULL;
    int status = plan_start(&p, previous, first_arg);
    for (Py_ssize_t i = 0; status == 0 && i < p.n; i++) status = plan_message(&p, i);
    if (status == 0) {
        result = plan_result(&p);
    } else if (status > 0) { /* for the Python route, which names what is wrong */
        PyErr_Clear();
        result = Py_NewRef(Py_None);
    }
    plan_free(&p);
    return result;
}
