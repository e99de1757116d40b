/* Compiled fast paths of ssblab.core.encoding and .message; the pure-Python routes give the same bytes and
 * verdicts (tests/core compare them).
 *
 * v8_indent(text) turns received JSON text straight into JSON.stringify(JSON.parse(text), null, 2) as UTF-8,
 * in one pass and without building a value, when it can prove the result: the text is strict JSON as SSB
 * reads it (no duplicate keys, no lone surrogates, valid UTF-8) and "plain" in the sense of encoding.py (no
 * key that may be an array index, integers within 2**53 and not -0, non-integral floats in [1e-4, 1e15)
 * written in their shortest form, which is where Python's repr and V8 agree digit for digit). Anything else
 * returns None and the caller takes the exact route. The proof also makes orjson's parse of the same text the
 * strict parse, so the caller may use orjson for the value.
 *
 * message_id(encoded) and binary_sha256(encoded) hash Node's Buffer.from(text, "binary") of UTF-8 text (the low
 * byte of each UTF-16 code unit), as message ids do.
 *
 * classic_shape_ok(value) and verify_signature(...) are the common case of message.py's shape rules and
 * signature check: True when they prove the message passes; anything else goes to the Python rules, which
 * decide and name the error. verify_signatures(...) is verify_signature over a batch, with the GIL released
 * for all of it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "buf.h"
#include "sha256.h"
#include "text.h"

#define MAX_DEPTH 200       /* orjson parses 254 levels; deeper text takes the exact route */
#define MAX_KEYS 256        /* keys in one object; the duplicate check is quadratic, bigger objects go exact */
#define MAX_NUMBER_TEXT 40  /* a shortest float repr has at most 17 digits plus sign, point and exponent */

typedef struct {
    const unsigned char *at, *end; /* the unread input */
    Buf out;                       /* the encoding so far */
    size_t *keys; /* (offset, length) pairs of the open objects' keys in `out`, innermost last */
    size_t nkeys, keys_cap;
} Pass;

/* BAIL: not provable here, the caller takes the exact route; FAILED: out of memory or a Python error set. */
typedef enum { OK = 0, BAIL = 1, FAILED = 2 } Status;

/* Bytes a string copies unchanged: printable ASCII but the quote and the backslash. */
static unsigned char plain_byte[256];

static void init_tables(void) {
    for (unsigned c = 0x20; c < 0x80; c++) plain_byte[c] = c != '"' && c != '\\';
}

/* emit, as a Status: FAILED (MemoryError set) when the encoding cannot grow. */
static inline Status write_out(Pass *p, const char *bytes, size_t n) { return emit(&p->out, bytes, n) ? FAILED : OK; }

static Status newline(Pass *p, int depth) {
    size_t n = 1 + 2 * (size_t)depth;
    if (reserve(&p->out, n)) return FAILED;
    p->out.data[p->out.len] = '\n';
    memset(p->out.data + p->out.len + 1, ' ', n - 1);
    p->out.len += n;
    return OK;
}

/* Past the run of plain_byte bytes at s; sixteen at a time where SSE2 is there (every x86-64). */
static const unsigned char *plain_run(const unsigned char *s, const unsigned char *end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (end - s >= 16) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)s);
        /* signed compare: bytes from 0x80 up are negative, so "less than 0x20" also finds non-ASCII */
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                                    _mm_cmplt_epi8(chunk, space));
        int mask = _mm_movemask_epi8(stop);
        if (mask) return s + __builtin_ctz((unsigned)mask);
        s += 16;
    }
#endif
    while (s < end && plain_byte[*s]) s++;
    return s;
}

static void skip_space(Pass *p) {
    while (p->at < p->end && (*p->at == ' ' || *p->at == '\n' || *p->at == '\r' || *p->at == '\t')) p->at++;
}

static int hex4(const unsigned char *s, unsigned *unit) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v * 16 + d;
    }
    *unit = v;
    return 1;
}

/* A code point as V8 writes it inside a string: short escapes, \u00xx for other controls, UTF-8 otherwise. */
static void put_code_point(Pass *p, unsigned cp) { /* after reserve(6) */
    static const char hex[] = "0123456789abcdef";
    unsigned char *o = p->out.data + p->out.len;
    if (cp < 0x20 || cp == '"' || cp == '\\') {
        char short_form = cp == '"' ? '"' : cp == '\\' ? '\\' : cp == '\b' ? 'b' : cp == '\f' ? 'f'
                        : cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : 0;
        if (short_form) {
            o[0] = '\\', o[1] = (unsigned char)short_form, p->out.len += 2;
        } else {
            memcpy(o, "\\u00", 4), o[4] = (unsigned char)hex[cp >> 4], o[5] = (unsigned char)hex[cp & 15];
            p->out.len += 6;
        }
    } else if (cp < 0x80) {
        o[0] = (unsigned char)cp, p->out.len += 1;
    } else if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3F)), p->out.len += 2;
    } else if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12), o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F)), p->out.len += 3;
    } else {
        o[0] = (unsigned char)(0xF0 | cp >> 18), o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)), o[3] = (unsigned char)(0x80 | (cp & 0x3F)), p->out.len += 4;
    }
}

/* A string (p->at is past the opening quote), written in V8's escaping. */
static Status string(Pass *p) {
    if (write_out(p, "\"", 1)) return FAILED;
    for (;;) {
        const unsigned char *run = p->at; /* copy plain ASCII in one go */
        p->at = plain_run(p->at, p->end);
        size_t n = (size_t)(p->at - run);
        if (reserve(&p->out, n + 8)) return FAILED;
        put(&p->out, (const char *)run, n);
        if (p->at >= p->end) return BAIL;
        unsigned c = *p->at;
        if (c == '"') {
            p->at++;
            put(&p->out, "\"", 1);
            return OK;
        }
        if (c < 0x20) return BAIL; /* a raw control character: not JSON */
        if (c >= 0x80) {
            size_t len = utf8_sequence(p->at, p->end);
            if (!len) return BAIL;
            put(&p->out, (const char *)p->at, len);
            p->at += len;
            continue;
        }
        /* an escape */
        if (p->end - p->at < 2) return BAIL;
        unsigned e = p->at[1];
        p->at += 2;
        unsigned cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (p->end - p->at < 4 || !hex4(p->at, &cp)) return BAIL;
            p->at += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return BAIL; /* a lone low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned low;
                if (p->end - p->at < 6 || p->at[0] != '\\' || p->at[1] != 'u' || !hex4(p->at + 2, &low)
                    || low < 0xDC00 || low > 0xDFFF)
                    return BAIL; /* a lone high surrogate */
                p->at += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            break;
        default: return BAIL;
        }
        put_code_point(p, cp);
    }
}

/* A number token, kept only when V8 would write it unchanged (see the file's comment). */
static Status number(Pass *p) {
    const unsigned char *start = p->at, *s = p->at;
    int negative = 0, integral = 1;
    if (s < p->end && *s == '-') s++, negative = 1;
    const unsigned char *digits = s;
    if (s < p->end && *s == '0') s++;
    else if (s < p->end && *s >= '1' && *s <= '9')
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    else return BAIL;
    size_t int_digits = (size_t)(s - digits);
    if (s < p->end && *s == '.') {
        integral = 0, s++;
        const unsigned char *fraction = s;
        while (s < p->end && *s >= '0' && *s <= '9') s++;
        if (s == fraction) return BAIL;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        integral = 0, s++;
        if (s < p->end && (*s == '+' || *s == '-')) s++;
        const unsigned char *exponent = s;
        while (s < p->end && *s >= '0' && *s <= '9') s++;
        if (s == exponent) return BAIL;
    }
    size_t n = (size_t)(s - start);
    if (integral) {
        if (int_digits > 16) return BAIL;
        uint64_t v = 0;
        for (const unsigned char *d = digits; d < s; d++) v = v * 10 + (uint64_t)(*d - '0');
        if (v > (UINT64_C(1) << 53) || (negative && v == 0)) return BAIL; /* past 2**53, or -0 */
    } else {
        char text[MAX_NUMBER_TEXT + 1];
        if (n > MAX_NUMBER_TEXT) return BAIL;
        memcpy(text, start, n);
        text[n] = 0;
        double x = PyOS_string_to_double(text, NULL, NULL);
        if (x == -1.0 && PyErr_Occurred()) return FAILED;
        double magnitude = fabs(x);
        if (!(magnitude >= 1e-4 && magnitude < 1e15) || x == floor(x)) return BAIL;
        char *shortest = PyOS_double_to_string(x, 'r', 0, 0, NULL);
        if (!shortest) return FAILED;
        int same = strlen(shortest) == n && memcmp(shortest, text, n) == 0;
        PyMem_Free(shortest);
        if (!same) return BAIL;
    }
    p->at = s;
    return write_out(p, (const char *)start, n);
}

static Status value(Pass *p, int depth);

static Status push_key(Pass *p, size_t offset, size_t length) {
    if (p->nkeys + 2 > p->keys_cap) {
        size_t cap = p->keys_cap ? p->keys_cap * 2 : 64;
        size_t *grown = PyMem_Realloc(p->keys, cap * sizeof *grown);
        if (!grown) return FAILED;
        p->keys = grown, p->keys_cap = cap;
    }
    p->keys[p->nkeys++] = offset;
    p->keys[p->nkeys++] = length;
    return OK;
}

/* An object member's key and colon: keys in their order, none twice, none starting with a digit. */
static Status member_key(Pass *p, size_t first_key) {
    if (p->at >= p->end || *p->at != '"') return BAIL;
    p->at++;
    size_t key_at = p->out.len;
    Status status = string(p);
    if (status) return status;
    size_t key_len = p->out.len - key_at;
    unsigned first = p->out.data[key_at + 1];
    if (first >= '0' && first <= '9') return BAIL; /* maybe an array index, which V8 moves first */
    /* Equal strings have equal escaped forms, so comparing the written keys finds duplicates. */
    if ((p->nkeys - first_key) / 2 >= MAX_KEYS) return BAIL;
    for (size_t k = first_key; k < p->nkeys; k += 2)
        if (p->keys[k + 1] == key_len && memcmp(p->out.data + p->keys[k], p->out.data + key_at, key_len) == 0) return BAIL;
    if ((status = push_key(p, key_at, key_len))) return status;
    skip_space(p);
    if (p->at >= p->end || *p->at != ':') return BAIL;
    p->at++;
    skip_space(p);
    return write_out(p, ": ", 2);
}

/* An object's or array's members (p->at is past the opening bracket), one a line, indented. */
static Status members(Pass *p, int depth, char open, char close) {
    skip_space(p);
    if (p->at < p->end && *p->at == close) {
        p->at++;
        const char empty[2] = {open, close};
        return write_out(p, empty, 2);
    }
    size_t first_key = p->nkeys;
    Status status;
    if ((status = write_out(p, &open, 1))) return status;
    for (;;) {
        if ((status = newline(p, depth + 1))) return status;
        if (close == '}' && (status = member_key(p, first_key))) return status;
        if ((status = value(p, depth + 1))) return status;
        skip_space(p);
        if (p->at >= p->end) return BAIL;
        if (*p->at == ',') {
            p->at++;
            skip_space(p);
            if ((status = write_out(p, ",", 1))) return status;
            continue;
        }
        if (*p->at != close) return BAIL;
        p->at++;
        p->nkeys = first_key;
        if ((status = newline(p, depth))) return status;
        return write_out(p, &close, 1);
    }
}

static Status literal(Pass *p, const char *word, size_t n) {
    if ((size_t)(p->end - p->at) < n || memcmp(p->at, word, n) != 0) return BAIL;
    p->at += n;
    return write_out(p, word, n);
}

static Status value(Pass *p, int depth) {
    if (depth > MAX_DEPTH || p->at >= p->end) return BAIL;
    switch (*p->at) {
    case '"': p->at++; return string(p);
    case '{': p->at++; return members(p, depth, '{', '}');
    case '[': p->at++; return members(p, depth, '[', ']');
    case 't': return literal(p, "true", 4);
    case 'f': return literal(p, "false", 5);
    case 'n': return literal(p, "null", 4);
    default: return number(p);
    }
}

static PyObject *v8_indent(PyObject *module, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "v8_indent takes bytes");
        return NULL;
    }
    const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(arg);
    size_t n = (size_t)PyBytes_GET_SIZE(arg);
    Pass p = {.at = text, .end = text + n};
    if (reserve(&p.out, n + n / 2 + 64) < 0) return NULL;
    skip_space(&p);
    Status status = value(&p, 0);
    skip_space(&p);
    if (status == OK && p.at != p.end) status = BAIL; /* text after the value */
    PyObject *result;
    if (status == OK) result = PyBytes_FromStringAndSize((const char *)p.out.data, (Py_ssize_t)p.out.len);
    else if (status == BAIL) result = Py_NewRef(Py_None);
    else result = PyErr_Occurred() ? NULL : PyErr_NoMemory();
    PyMem_Free(p.out.data);
    PyMem_Free(p.keys);
    return result;
}

/* sha256 of the binary string of encoded (ASCII is its own binary string); 0, or -1 with an error set. */
static int binary_sha256_of(PyObject *encoded, unsigned char digest[32]) {
    if (!PyBytes_Check(encoded)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes");
        return -1;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(encoded);
    Py_ssize_t n = PyBytes_GET_SIZE(encoded);
    if (is_ascii(s, (size_t)n)) {
        sha256(s, (size_t)n, digest);
        return 0;
    }
    unsigned char *binary = PyMem_Malloc((size_t)n); /* never longer than the UTF-8 */
    if (!binary) {
        PyErr_NoMemory();
        return -1;
    }
    size_t bad_at = 0;
    ssize_t length = binary_bytes(s, (size_t)n, binary, &bad_at);
    if (length >= 0) sha256(binary, (size_t)length, digest);
    else PyErr_Format(PyExc_ValueError, "not UTF-8 at byte %zu", bad_at);
    PyMem_Free(binary);
    return length < 0 ? -1 : 0;
}

static PyObject *binary_sha256(PyObject *module, PyObject *encoded) {
    unsigned char digest[32];
    if (binary_sha256_of(encoded, digest) < 0) return NULL;
    return PyBytes_FromStringAndSize((const char *)digest, 32);
}

static PyObject *message_id(PyObject *module, PyObject *encoded) {
    unsigned char digest[32];
    if (binary_sha256_of(encoded, digest) < 0) return NULL;
    PyObject *id = PyUnicode_New(52, 127); /* %<44 base64 characters>.sha256 */
    if (!id) return NULL;
    unsigned char *out = PyUnicode_DATA(id);
    out[0] = '%';
    base64_into(out + 1, digest, 32);
    memcpy(out + 45, ".sha256", 7);
    return id;
}

/* ---- the shape rules' common case ---- */

/* ASCII text of an exact str (NULL otherwise), and its length. */
static const char *ascii_of(PyObject *text, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) return NULL;
    *n = PyUnicode_GET_LENGTH(text);
    return (const char *)PyUnicode_DATA(text);
}

/* sigil + canonical base64 of `size` bytes + suffix, decoded into out (may be NULL). */
static int is_ref(PyObject *text, char sigil, const char *suffix, Py_ssize_t size, unsigned char *out) {
    Py_ssize_t n, tail = (Py_ssize_t)strlen(suffix), body = (size + 2) / 3 * 4;
    const char *s = ascii_of(text, &n);
    return s && n == 1 + body + tail && s[0] == sigil && memcmp(s + 1 + body, suffix, (size_t)tail) == 0
        && canonical_b64((const unsigned char *)s + 1, (size_t)body, out) == size;
}

/* <canonical base64 of 64 bytes>.sig.ed25519, decoded into out (may be NULL). */
static int is_signature(PyObject *text, unsigned char *out) {
    Py_ssize_t n;
    const char *s = ascii_of(text, &n);
    return s && n == 100 && memcmp(s + 88, ".sig.ed25519", 12) == 0
        && canonical_b64((const unsigned char *)s, 88, out) == 64;
}

static PyObject *key_orders[2][7], *type_key;

static int init_orders(void) {
    static const char *orders[2][7] = {
        {"previous", "author", "sequence", "timestamp", "hash", "content", "signature"},
        {"previous", "sequence", "author", "timestamp", "hash", "content", "signature"},
    };
    if (!(type_key = PyUnicode_InternFromString("type"))) return -1;
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 7; k++)
            if (!(key_orders[o][k] = PyUnicode_InternFromString(orders[o][k]))) return -1;
    return 0;
}

static int key_is(PyObject *key, PyObject *expected) {
    return key == expected || (PyUnicode_CheckExact(key) && PyUnicode_Compare(key, expected) == 0);
}

static int is_int32(PyObject *x) {
    if (!PyLong_CheckExact(x)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
    return !overflow && v >= -2147483648LL && v < 2147483648LL;
}

static int is_boxed(PyObject *content) { /* "<canonical base64>.box…" */
    Py_ssize_t n;
    const char *s = ascii_of(content, &n);
    if (!s) return 0;
    const char *dot = memchr(s, '.', (size_t)n);
    if (!dot || dot == s || s + n - dot < 4 || memcmp(dot, ".box", 4) != 0) return 0;
    return canonical_b64((const unsigned char *)s, (size_t)(dot - s), NULL) >= 0;
}

static int content_ok(PyObject *content) {
    if (!PyDict_CheckExact(content)) return is_boxed(content);
    PyObject *kind = PyDict_GetItemWithError(content, type_key); /* borrowed; no error: the key is a str */
    Py_ssize_t n;
    return kind && ascii_of(kind, &n) && n >= 3 && n <= 52;
}

static PyObject *classic_shape_ok(PyObject *module, PyObject *value) {
    if (!PyDict_CheckExact(value) || PyDict_GET_SIZE(value) != 7) Py_RETURN_FALSE;
    PyObject *key, *item, *field[7];
    Py_ssize_t pos = 0;
    int order = 0;
    for (int k = 0; PyDict_Next(value, &pos, &key, &item); k++) {
        if (k == 1) order = key_is(key, key_orders[1][1]);
        if (!key_is(key, key_orders[order][k])) Py_RETURN_FALSE;
        field[k] = item;
    }
    PyObject *author = field[order ? 2 : 1], *sequence = field[order ? 1 : 2];
    PyObject *previous = field[0], *timestamp = field[3], *hash = field[4], *content = field[5];
    Py_ssize_t n = 0;
    const char *hash_text = ascii_of(hash, &n);
    int ok = (previous == Py_None || is_ref(previous, '%', ".sha256", 32, NULL))
        && is_ref(author, '@', ".ed25519", 32, NULL) && is_int32(sequence)
        && (PyLong_CheckExact(timestamp) || PyFloat_CheckExact(timestamp))
        && hash_text && n == 6 && memcmp(hash_text, "sha256", 6) == 0 && content_ok(content)
        && is_signature(field[6], NULL);
    return PyBool_FromLong(ok);
}

/* ---- the signature check ---- */

typedef int (*VerifyDetached)(const unsigned char *sig, const unsigned char *m, unsigned long long mlen,
                              const unsigned char *pk);

static const char SIGNATURE_ENTRY[] = ",\n  \"signature\": ";

/* What libsodium checks for one classic message: the key, the signature, and where the signing bytes end in the
 * encoding (they are the encoding up to `at`, then "\n}"). */
typedef struct {
    unsigned char public_key[33], signature[66];
    const char *encoded;
    Py_ssize_t at;
} Signed;

/* Fill `out` from (encoded, author, signature) of a well-formed classic message: 1, or 0 when they are not one's
 * (no error set): the signature is the encoding's last entry, and its text is the one given. */
static int signed_part(PyObject *encoded, PyObject *author, PyObject *signature, Signed *out) {
    if (!PyBytes_Check(encoded) || !is_ref(author, '@', ".ed25519", 32, out->public_key)
        || !is_signature(signature, out->signature))
        return 0;
    const char *sig_text = (const char *)PyUnicode_DATA(signature);
    const char *text = PyBytes_AS_STRING(encoded);
    Py_ssize_t length = PyBytes_GET_SIZE(encoded), entry = (Py_ssize_t)sizeof SIGNATURE_ENTRY - 1;
    /* ,\n  "signature": "…"\n}  -- the entry's own text is fixed by the signature */
    Py_ssize_t at = length - (entry + 102 + 2);
    if (at < 1 || memcmp(text + at, SIGNATURE_ENTRY, (size_t)entry) != 0 || text[at + entry] != '"'
        || memcmp(text + at + entry + 1, sig_text, 100) != 0 || memcmp(text + length - 3, "\"\n}", 3) != 0)
        return 0;
    out->encoded = text, out->at = at;
    return 1;
}

/* libsodium's verdict on one message; `buffer` holds at least at + 2 bytes. Needs no GIL: it reads only the
 * encoding's bytes, which are immutable and kept alive by the caller. */
static int verify_signed(VerifyDetached verify, const Signed *job, unsigned char *buffer) {
    memcpy(buffer, job->encoded, (size_t)job->at);
    memcpy(buffer + job->at, "\n}", 2);
    return verify(job->signature, buffer, (unsigned long long)job->at + 2, job->public_key) == 0;
}

/* verify_signature(verify_address, encoded, author, signature): libsodium's crypto_sign_verify_detached (at
 * verify_address) over the signing bytes, which are the encoding without its last entry when that entry is
 * the top-level signature. True or False; None when the arguments are not a well-formed classic message's.
 * The GIL is released while libsodium works, so other threads run meanwhile. */
static PyObject *verify_signature(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "verify_signature(verify_address, encoded: bytes, author, signature)");
        return NULL;
    }
    VerifyDetached verify = (VerifyDetached)PyLong_AsVoidPtr(args[0]);
    if (!verify) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    Signed job;
    if (!signed_part(args[1], args[2], args[3], &job)) Py_RETURN_NONE;
    unsigned char stack[8192], *buffer = (size_t)job.at + 2 <= sizeof stack ? stack : PyMem_Malloc((size_t)job.at + 2);
    if (!buffer) return PyErr_NoMemory();
    int valid;
    Py_BEGIN_ALLOW_THREADS
    valid = verify_signed(verify, &job, buffer);
    Py_END_ALLOW_THREADS
    if (buffer != stack) PyMem_Free(buffer);
    return PyBool_FromLong(valid);
}

/* verify_signatures(verify_address, items): verify_signature's answer for each (encoded, author, signature) of
 * the sequence items, as a list. The GIL is released once for the whole batch, so a worker thread can check a
 * batch while the thread that reads the network goes on (one release per message would hand the GIL back and
 * forth and stall both). */
static PyObject *verify_signatures(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "verify_signatures(verify_address, items)");
        return NULL;
    }
    VerifyDetached verify = (VerifyDetached)PyLong_AsVoidPtr(args[0]);
    if (!verify && PyErr_Occurred()) return NULL;
    PyObject *items = PySequence_Fast(args[1], "verify_signatures takes a sequence of (encoded, author, signature)");
    if (!items) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items), longest = 0;
    Signed *jobs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *jobs);
    signed char *verdicts = PyMem_Malloc((size_t)(n ? n : 1)); /* 1, 0, or -1: not a classic message's */
    unsigned char *buffer = NULL;
    PyObject *result = NULL;
    if (!jobs || !verdicts) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i); /* the items (and so each encoding) live till done */
        verdicts[i] = -1;
        if (verify && PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3
            && signed_part(PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1), PyTuple_GET_ITEM(item, 2),
                           &jobs[i])) {
            verdicts[i] = 0;
            if (jobs[i].at > longest) longest = jobs[i].at;
        }
    }
    if (!(buffer = PyMem_RawMalloc((size_t)longest + 2))) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        if (verdicts[i] == 0) verdicts[i] = (signed char)verify_signed(verify, &jobs[i], buffer);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(buffer);
    if (!(result = PyList_New(n))) goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        PyList_SET_ITEM(result, i, verdicts[i] < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(verdicts[i]));
done:
    PyMem_Free(jobs);
    PyMem_Free(verdicts);
    Py_DECREF(items);
    return result;
}

/* env_flag(name) -> True when the environment variable name is "1" now. os.environ writes through to the C
 * environment (putenv, unsetenv), so getenv sees what it holds, at a fraction of the cost of os.environ.get, which
 * raises and catches two exceptions for a variable that is not set: compiled.speedups() reads its switch so. */
static PyObject *env_flag(PyObject *module, PyObject *name) {
    const char *key = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!key) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "env_flag takes the variable's name");
        return NULL;
    }
    const char *value = getenv(key);
    return PyBool_FromLong(value && value[0] == '1' && !value[1]);
}

static PyMethodDef methods[] = {
    {"env_flag", env_flag, METH_O, "env_flag(name) -> whether the environment variable name is \"1\" now."},
    {"classic_shape_ok", classic_shape_ok, METH_O,
     "True when a message value passes every shape rule (size aside) by the common route; False: ask Python."},
    {"verify_signature", (PyCFunction)(void (*)(void))verify_signature, METH_FASTCALL,
     "verify_signature(verify_address, encoded, author, signature) -> bool, or None: ask Python."},
    {"verify_signatures", (PyCFunction)(void (*)(void))verify_signatures, METH_FASTCALL,
     "verify_signatures(verify_address, items) -> [verify_signature's answer for each (encoded, author, signature)]."},
    {"v8_indent", v8_indent, METH_O,
     "JSON.stringify(JSON.parse(text), null, 2) as UTF-8 bytes when provably exact and strict, else None."},
    {"binary_sha256", binary_sha256, METH_O,
     "sha256 of Buffer.from(text, 'binary') of UTF-8 text (the low byte of each UTF-16 unit): what an id hashes."},
    {"message_id", message_id, METH_O, "The %….sha256 id of a message from its encoding with the signature."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_speedups", .m_doc = NULL, .m_size = 0, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    init_tables();
    text_init();
    sha256_init();
    if (init_orders() < 0) return NULL;
    return PyModule_Create(&module);
}
