/* One message's envelope split off its content, as ssblab.archive.envelope.split does: from the encoding's lines
 * where they settle it (split_text), otherwise from the parsed value (split_value). */
#include "speedups.h"

static const char *const ENVELOPE[7] = {"previous", "author", "sequence", "timestamp", "hash", "content", "signature"};
PyObject *ENVELOPE_KEYS[7], *TYPE_KEY;

#define MAX_TIMESTAMP 9007199254740992.0 /* 2**53: integers beyond are not exact JavaScript numbers */

/* envelope._timestamp: an integral timestamp JavaScript prints as digits, or -1. */
static int64_t timestamp_of(PyObject *v) {
    if (v && PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        return d == d && d >= 0 && d < MAX_TIMESTAMP && (double)(int64_t)d == d ? (int64_t)d : -1;
    }
    if (!v || !PyLong_CheckExact(v)) return -1;
    int overflow;
    long long t = PyLong_AsLongLongAndOverflow(v, &overflow);
    return !overflow && t >= 0 && (double)t < MAX_TIMESTAMP ? t : -1; /* t == -1 with an error cannot happen */
}

/* envelope._signature: the 64 bytes of "<canonical base64>.sig.ed25519", into raw; 0 or -1 when not one. */
static int signature_of(PyObject *v, unsigned char raw[66]) {
    if (!v || !PyUnicode_Check(v) || !PyUnicode_IS_ASCII(v)) return -1;
    const unsigned char *text = PyUnicode_DATA(v);
    Py_ssize_t len = PyUnicode_GET_LENGTH(v);
    if (len < 12 || memcmp(text + len - 12, ".sig.ed25519", 12) || len - 12 > 88) return -1;
    return canonical_b64(text, len - 12, raw) == 64 ? 0 : -1;
}

/* The key order of a seven-key envelope (indexes into ENVELOPE), or -1 when value is something else. */
static int order_of(PyObject *value, int order[7]) {
    if (PyDict_GET_SIZE(value) != 7) return -1;
    Py_ssize_t pos = 0, j = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        if (!PyUnicode_Check(key) || !PyUnicode_IS_ASCII(key)) return -1;
        const char *text = PyUnicode_DATA(key);
        size_t len = PyUnicode_GET_LENGTH(key);
        order[j] = -1;
        for (int k = 0; k < 7 && order[j] < 0; k++)
            if (text[0] == ENVELOPE[k][0] && len == strlen(ENVELOPE[k]) && !memcmp(text, ENVELOPE[k], len)) order[j] = k;
        if (order[j++] < 0) return -1;
    }
    return 0;
}

typedef struct {
    const char *p;
    Py_ssize_t len;
} Text;

/* envelope.templates filled in: the text before and after the content, for this order and these values. */
static int frame(const int order[7], const Text values[7], Buf *head, Buf *tail) {
    head->len = tail->len = 0;
    if (emit(head, "{\n", 2) < 0) return -1;
    Buf *side = head;
    for (int j = 0; j < 7; j++) {
        int k = order[j];
        if (k == K_CONTENT) {
            if (emit(head, "  \"content\": ", 13) < 0) return -1;
            side = tail;
            continue;
        }
        if ((side == tail && emit(tail, ",\n", 2) < 0) || emit(side, "  \"", 3) < 0 ||
            emit(side, ENVELOPE[k], strlen(ENVELOPE[k])) < 0 || emit(side, "\": ", 3) < 0 ||
            emit(side, values[k].p, values[k].len) < 0 || (side == head && emit(head, ",\n", 2) < 0))
            return -1;
    }
    return emit(tail, "\n}", 2);
}

static int quoted(Buf *b, const char *p, Py_ssize_t len) {
    b->len = 0;
    return emit(b, "\"", 1) < 0 || emit(b, p, len) < 0 || emit(b, "\"", 1) < 0 ? -1 : 0;
}

/* block._type_of: content.type as UTF-8 (surrogates passed through), or None. */
PyObject *type_of(PyObject *value) {
    PyObject *content = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_CONTENT]);
    PyObject *kind = content && PyDict_Check(content) ? PyDict_GetItemWithError(content, TYPE_KEY) : NULL;
    if (PyErr_Occurred()) return NULL;
    if (!kind || !PyUnicode_Check(kind)) return Py_NewRef(Py_None);
    if (PyUnicode_IS_ASCII(kind)) /* most types, without the codec machinery */
        return PyBytes_FromStringAndSize(PyUnicode_DATA(kind), PyUnicode_GET_LENGTH(kind));
    return PyUnicode_AsEncodedString(kind, "utf-8", "surrogatepass");
}

static const size_t ENVELOPE_LEN[7] = {8, 6, 8, 9, 4, 7, 9};



/* At a line "  \"<envelope key>\": ", the key (into *key) and where its value starts; NULL for another line. */
static const unsigned char *key_of(const unsigned char *s, const unsigned char *end, int *key) {
    if (end - s < 7 || s[0] != ' ' || s[1] != ' ' || s[2] != '"') return NULL;
    for (int k = 0; k < 7; k++) {
        size_t len = ENVELOPE_LEN[k];
        if ((size_t)(end - s) >= len + 6 && s[3] == ENVELOPE[k][0] && !memcmp(s + 3, ENVELOPE[k], len) &&
            !memcmp(s + 3 + len, "\": ", 3)) {
            *key = k;
            return s + 6 + len;
        }
    }
    return NULL;
}

static inline int is_quoted(const unsigned char *v, size_t len, const char *text, Py_ssize_t text_len) {
    return len == (size_t)text_len + 2 && v[0] == '"' && v[len - 1] == '"' && !memcmp(v + 1, text, text_len);
}

/* Whether v (one envelope value as printed) is what split renders for key k; a signature goes into out->raw. */
static int value_ok(int k, const unsigned char *v, size_t len, const Expect *ex, Split *out) {
    switch (k) {
    case K_PREVIOUS:
        return ex->previous ? is_quoted(v, len, ex->previous, ex->previous_len) : len == 4 && !memcmp(v, "null", 4);
    case K_AUTHOR:
        return is_quoted(v, len, ex->author, ex->author_len);
    case K_SEQUENCE:
        return len == ex->sequence_len && !memcmp(v, ex->sequence, len);
    case K_HASH:
        return len == 8 && !memcmp(v, "\"sha256\"", 8);
    case K_TIMESTAMP: { /* digits as JavaScript prints an integer below 2**53 */
        if (len < 1 || len > 16 || (len > 1 && v[0] == '0')) return 0;
        uint64_t t = 0;
        for (size_t j = 0; j < len; j++) {
            if (!is_digit(v[j])) return 0;
            t = 10 * t + (v[j] - '0');
        }
        out->stamp = (int64_t)t;
        return t < ((uint64_t)1 << 53);
    }
    case K_SIGNATURE:
        return len == 102 && v[0] == '"' && !memcmp(v + 89, ".sig.ed25519\"", 13) &&
               canonical_b64(v + 1, 88, out->raw) == 64;
    }
    return 0;
}

static inline const unsigned char *last_newline(const unsigned char *from, const unsigned char *to) {
#ifdef __GLIBC__
    return memrchr(from, '\n', to - from);
#else
    while (to > from && to[-1] != '\n') to--;
    return to > from ? to - 1 : NULL;
#endif
}

/* envelope.split read off the encoding s: 1 when s is the seven-key envelope split expects, line by line (its
 * encoding is JSON.stringify(value, null, 2), so the lines are the value's keys in order); 0 when the value route
 * must decide. The content is one value: none of its lines but the closing bracket sits at indentation 2. */
int split_text(const unsigned char *s, size_t n, const Expect *ex, Split *out) {
    const unsigned char *end = s + n, *p = s + 2, *v = NULL, *w;
    if (n < 4 || s[0] != '{' || s[1] != '\n' || s[n - 2] != '\n' || s[n - 1] != '}') return 0;
    int seen = 0, head = 0, key;
    for (;; head++) { /* the lines before the content */
        if (head == 7 || !(v = key_of(p, end, &key)) || seen >> key & 1) return 0;
        seen |= 1 << key;
        out->order[head] = key;
        if (key == K_CONTENT) break;
        const unsigned char *nl = memchr(v, '\n', end - v);
        if (!nl || nl[-1] != ',' || !value_ok(key, v, nl - 1 - v, ex, out)) return 0;
        p = nl + 1;
    }
    const unsigned char *e = end - 2; /* the newline ending the line being read, from the last one up */
    for (int j = 6; j > head; j--) {
        const unsigned char *ls = last_newline(v, e);
        if (!ls++ || (j < 6 && e[-1] != ',')) return 0;
        const unsigned char *value_end = j < 6 ? e - 1 : e; /* every line but the last ends with a comma */
        if (!(w = key_of(ls, value_end, &key)) || seen >> key & 1 || !value_ok(key, w, value_end - w, ex, out))
            return 0;
        seen |= 1 << key;
        out->order[j] = key;
        e = ls - 1;
    }
    const unsigned char *content_end = head < 6 ? e - 1 : e;
    if (content_end <= v || (head < 6 && *content_end != ',')) return 0;
    for (const unsigned char *q = v; (q = memchr(q, '\n', content_end - q)) && content_end - q > 3; q++)
        if (q[1] == ' ' && q[2] == ' ' && q[3] == '"') return 0;
    out->start = v - s, out->end = content_end - s;
    return 1;
}

/* content.type of a content text split_text settled: 1 with its UTF-8 span when it is a string without escapes,
 * 0 when there is none (not an object, no "type" key, not a string), -1 when the value must say (escapes). The
 * content's own keys are the lines at indentation 4. */
int type_text(const unsigned char *c, size_t n, const unsigned char **type, size_t *len) {
    static const char KEY[] = "\n    \"type\": ";
    if (!n || c[0] != '{') return 0;
    const unsigned char *end = c + n;
    for (const unsigned char *q = c; (q = memchr(q, '\n', end - q)); q++) {
        if (end - q <= 13 || q[1] != ' ' || q[4] != ' ' || q[5] != '"' || memcmp(q, KEY, 13)) continue;
        if (q[13] != '"') return 0;
        const unsigned char *at = q + 14, *quote = memchr(at, '"', end - at);
        if (!quote || memchr(at, '\\', quote - at)) return -1;
        *type = at, *len = quote - at;
        return 1;
    }
    return 0;
}


/* envelope.split over the parsed value, as the Python route does it: 1 when derivable (order, stamp, signature and
 * the content span into out), 0 when verbatim, -2 when the message is not the author's next one, -1 on error. */
int split_value(PyObject *value, const unsigned char *bytes, Py_ssize_t size, PyObject *author,
                       int64_t sequence, const Expect *ex, Frames *f, Split *out) {
    PyObject *seq = PyLong_FromLongLong(sequence);
    PyObject *got_author = seq ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_AUTHOR]) : NULL;
    PyObject *got_sequence = got_author || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SEQUENCE]) : NULL;
    int same = seq && !PyErr_Occurred() ? PyObject_RichCompareBool(got_author ? got_author : Py_None, author, Py_EQ) : -1;
    if (same == 1) same = PyObject_RichCompareBool(got_sequence ? got_sequence : Py_None, seq, Py_EQ);
    Py_XDECREF(seq);
    if (same <= 0) return same < 0 ? -1 : -2;
    PyObject *stamp_obj = PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_TIMESTAMP]);
    PyObject *sig_obj = stamp_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_SIGNATURE]) : NULL;
    PyObject *hash = sig_obj || !PyErr_Occurred() ? PyDict_GetItemWithError(value, ENVELOPE_KEYS[K_HASH]) : NULL;
    if (PyErr_Occurred()) return -1;
    out->stamp = timestamp_of(stamp_obj);
    if (order_of(value, out->order) < 0 || out->stamp < 0 || signature_of(sig_obj, out->raw) < 0 || !hash ||
        !PyUnicode_Check(hash) || PyUnicode_CompareWithASCIIString(hash, "sha256") != 0)
        return 0;
    Text texts[7];
    for (int k = 0; k < 2; k++) {
        f->numbers[k].len = 0;
        if (reserve(&f->numbers[k], 21) < 0) return -1;
        put_int(&f->numbers[k], k ? out->stamp : sequence);
    }
    texts[K_PREVIOUS] = (Text){"null", 4};
    if (ex->previous) {
        if (quoted(&f->previous, ex->previous, ex->previous_len) < 0) return -1;
        texts[K_PREVIOUS] = (Text){(const char *)f->previous.data, (Py_ssize_t)f->previous.len};
    }
    Buf author_text = {0}, sig = {0};
    int failed = quoted(&author_text, ex->author, ex->author_len) < 0 ||
                 quoted(&sig, PyUnicode_DATA(sig_obj), PyUnicode_GET_LENGTH(sig_obj)) < 0;
    texts[K_AUTHOR] = (Text){(const char *)author_text.data, (Py_ssize_t)author_text.len};
    texts[K_SEQUENCE] = (Text){(const char *)f->numbers[0].data, (Py_ssize_t)f->numbers[0].len};
    texts[K_TIMESTAMP] = (Text){(const char *)f->numbers[1].data, (Py_ssize_t)f->numbers[1].len};
    texts[K_HASH] = (Text){"\"sha256\"", 8};
    texts[K_CONTENT] = (Text){"", 0};
    texts[K_SIGNATURE] = (Text){(const char *)sig.data, (Py_ssize_t)sig.len};
    failed = failed || frame(out->order, texts, &f->head, &f->tail) < 0;
    PyMem_Free(author_text.data);
    PyMem_Free(sig.data);
    if (failed) return -1;
    Buf *h = &f->head, *t = &f->tail;
    if (size <= (Py_ssize_t)(h->len + t->len) || memcmp(bytes, h->data, h->len) ||
        memcmp(bytes + size - t->len, t->data, t->len))
        return 0;
    out->start = h->len, out->end = size - t->len;
    return 1;
}


/* Interns the envelope's keys; call once, at import. 0, or -1 with an error set. */
int envelope_init(void) {
    for (int k = 0; k < 7; k++)
        if (!(ENVELOPE_KEYS[k] = PyUnicode_InternFromString(ENVELOPE[k]))) return -1;
    return (TYPE_KEY = PyUnicode_InternFromString("type")) ? 0 : -1;
}
