/* text.flatten and text.TOKEN in C: a content text into its skeleton and leaves, the leaves into tokens, and the
 * tables that intern skeletons and tokens; the skeletons' stored form (indent, store_skeleton). */
#include "speedups.h"

static unsigned char LEAF_START[256]; /* the bytes a text.LEAF match can start with, filled at import */

/* The token classes of text.TOKEN's alternatives, by the byte a token starts with (filled at import). */
enum { T_OTHER, T_ALPHA, T_DIGIT, T_B64_SIGN, T_SPACE, T_NEWLINE, T_HIGH, T_SIGIL };
static unsigned char TOKEN_START[256];

/* The end of the JSON string starting with the quote at s[i] (past its closing quote), or 0 when unterminated:
 * the "[^"\\]*(?:\\.[^"\\]*)*" of text's expressions. Quotes and backslashes are looked for a word at a time, inline:
 * most strings are keys and short values, where two calls to memchr cost more than the scan. */
size_t string_end(const unsigned char *s, size_t n, size_t i) {
    size_t j = i + 1;
    while (j + 8 <= n) {
        uint64_t word = load_word(s + j), hit = bytes_equal(word, '"') | bytes_equal(word, '\\');
        if (!hit) {
            j += 8;
            continue;
        }
        j += (size_t)__builtin_ctzll(hit) >> 3;
        if (s[j] == '"') return j + 1;
        j += 2; /* a backslash escapes the byte after it */
    }
    for (; j < n; j++) {
        if (s[j] == '"') return j + 1;
        if (s[j] == '\\') j++;
    }
    return 0;
}

/* put for pieces of a few bytes (most leaves and structure runs), by fixed-size moves rather than a call. */
static inline void put_few(Buf *b, const unsigned char *p, size_t len) { /* after reserve */
    if (len <= 16)
        copy_short(b->data + b->len, p, (int64_t)len);
    else
        memcpy(b->data + b->len, p, len);
    b->len += len;
}

/* text.flatten of one content text: its skeleton onto skel, its leaves (each ended by 0x00) onto leaves. The
 * scan is text.LEAF's, alternative by alternative, at each position in turn (what re.split does). */
int flatten_one(const unsigned char *s, size_t n, int keys_as_data, Buf *skel, Buf *leaves) {
    /* a hole takes at most a byte more than its leaf, and a leaf its 0x00 end: neither part outgrows 2n */
    if (reserve(skel, 2 * n) < 0 || reserve(leaves, 2 * n) < 0) return -1;
    for (size_t i = 0; i < n;) {
        size_t run = i; /* bytes that cannot start a leaf go to the skeleton in one copy */
        while (run < n && !LEAF_START[s[run]]) run++;
        if (run > i) {
            put_few(skel, s + i, run - i);
            i = run;
            continue;
        }
        unsigned c = s[i];
        size_t end = 0; /* the end of a leaf candidate starting at i, 0 for none */
        int key = 0;
        if (c == '"') {
            end = string_end(s, n, i); /* 0: unterminated, no match here */
            key = end && end < n && s[end] == ':';
        } else if (is_digit(c) || (c == '-' && i + 1 < n && is_digit(s[i + 1]))) {
            end = i + (c == '-') + 1;
            while (end < n && in_number(s[end])) end++;
        } else if (c == 't' || c == 'f' || c == 'n') {
            const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t len = strlen(word);
            if (n - i >= len && !memcmp(s + i, word, len)) end = i + len;
        }
        if (!end) {
            put_few(skel, s + i, 1);
            i++;
            continue;
        }
        if (c == '"' && key && !keys_as_data) { /* a key stays in the skeleton */
            put_few(skel, s + i, end + 1 - i);
        } else {
            int quoted = c == '"';
            const char *hole = !quoted ? "\0" : key ? "\"\0\":" : "\"\0\"";
            put_few(skel, (const unsigned char *)hole, !quoted ? 1 : key ? 4 : 3);
            put_few(leaves, s + i + quoted, end - i - 2 * quoted);
            leaves->data[leaves->len++] = 0;
        }
        i = end + key;
    }
    return 0;
}

/* How many bytes from p on pass test, 8 at a time; a byte that fails must come before the readable bytes end. */
static inline size_t run_of(const unsigned char *p, uint64_t (*test)(uint64_t)) {
    for (size_t n = 0;; n += 8) {
        uint64_t stop = ~test(load_word(p + n)) & HIGHS;
        if (stop) return n + ((size_t)__builtin_ctzll(stop) >> 3);
    }
}

/* The long base64 alternative at p, whose first `known` bytes are base64: its length, or `otherwise` when the run
 * is shorter than 20. */
static size_t base64_or(const unsigned char *p, size_t known, size_t otherwise) {
    size_t run = known + run_of(p + known, b64_bytes);
    if (run < 20) return otherwise;
    if (p[run] == '=') run += 1 + (p[run + 1] == '=');
    return run;
}

/* The length of the text.TOKEN match at p (the alternatives in order; every byte starts one), avail bytes before the
 * end of the leaf text. A leaf text ends with a 0x00, which no run holds, and keeps 8 readable bytes past its end
 * (pad), so runs are measured a word at a time and stop inside it. */
static inline size_t token_at(const unsigned char *p, size_t avail) {
    switch (TOKEN_START[*p]) {
    case T_ALPHA: {
        size_t word = run_of(p, alpha_bytes);
        return word < 20 && !is_b64(p[word]) ? word : base64_or(p, word, word);
    }
    case T_DIGIT: {
        size_t digits = run_of(p, digit_bytes);
        return digits < 20 && !is_b64(p[digits]) ? digits : base64_or(p, digits, digits);
    }
    case T_B64_SIGN:
        return base64_or(p, 1, 1);
    case T_SPACE:
        return is_alpha(p[1]) ? 1 + run_of(p + 1, alpha_bytes) : 1;
    case T_NEWLINE:
        return p[1] == ' ' ? 1 + run_of(p + 1, space_bytes) : 1;
    case T_HIGH:
        return run_of(p, high_bytes);
    case T_SIGIL: /* a ref: 43 base64 letters, then "=.sha256" or "=.ed25519" */
        if (avail >= 52 && p[44] == '=' && p[45] == '.' && run_of(p + 1, b64_bytes) == 43) {
            if (!memcmp(p + 46, "sha256", 6)) return 52;
            if (avail >= 53 && !memcmp(p + 46, "ed25519", 7)) return 53;
        }
        return 1;
    }
    return 1;
}

/* 8 zero bytes past the end of b, not counted in its length: what first_word and token_at read. */
int pad(Buf *b) {
    if (reserve(b, 8) < 0) return -1;
    memset(b->data + b->len, 0, 8);
    return 0;
}

static int intern_grow(Intern *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    Interned *items = cap < ((size_t)1 << 31) ? PyMem_Realloc(t->items, cap * sizeof(Interned)) : NULL;
    if (items) t->items = items;
    Slot *slots = items ? PyMem_Calloc(2 * cap, sizeof(Slot)) : NULL;
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = 2 * cap - 1;
    t->cap = cap;
    for (size_t k = 0; k < t->n; k++) {
        const Interned *known = &t->items[k];
        place(slots, t->mask, known->hash, first_word(t->text.data + known->start, known->len), known->len, k);
    }
    return 0;
}

/* The index of the text p[:len] (p has 8 readable bytes past it), added when new; -1 on failure. */
int64_t intern(Intern *t, const unsigned char *p, size_t len) {
    if (len == 1 && t->single[*p]) return t->single[*p] - 1;
    if (t->n == t->cap && intern_grow(t) < 0) return -1;
    if (len > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a token or skeleton of 4 GiB or more");
        return -1;
    }
    uint64_t head = first_word(p, len), h = hash_bytes(p, len);
    size_t at = h & t->mask;
    for (; t->slots[at].index; at = (at + 1) & t->mask) {
        const Slot *slot = &t->slots[at];
        if (slot->head == head && slot->len == len &&
            (len <= 8 || same_tail(t->text.data + t->items[slot->index - 1].start, p, len)))
            return slot->index - 1;
    }
    if (reserve(&t->text, len + 8) < 0) return -1;
    t->slots[at] = (Slot){head, (uint32_t)len, (uint32_t)(t->n + 1)};
    t->items[t->n] = (Interned){h, t->text.len, len};
    put(&t->text, p, len);
    memset(t->text.data + t->text.len, 0, 8); /* the padding */
    if (len == 1) t->single[*p] = (uint32_t)(t->n + 1);
    return (int64_t)t->n++;
}

void intern_free(Intern *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->items);
    PyMem_Free(t->text.data);
}

/* The k-th distinct text of t as a new bytes object. */
PyObject *interned_bytes(const Intern *t, size_t k) {
    return PyBytes_FromStringAndSize((const char *)t->text.data + t->items[k].start, t->items[k].len);
}

/* Cuts a padded leaf text into tokens, appending the index of each to stream (uint32: intern_grow keeps below 2**31
 * texts). */
int tokenize(Intern *t, const Buf *leaves, Buf *stream) {
    if (reserve(stream, 4 * leaves->len) < 0) return -1; /* at most a token a byte */
    for (size_t i = 0; i < leaves->len;) {
        size_t len = token_at(leaves->data + i, leaves->len - i);
        int64_t k = intern(t, leaves->data + i, len);
        if (k < 0) return -1;
        uint32_t index = (uint32_t)k;
        memcpy(stream->data + stream->len, &index, 4);
        stream->len += 4;
        i += len;
    }
    return 0;
}

static int put_indent(Buf *out, int64_t depth) {
    for (int64_t k = 0; k < depth; k++)
        if (emit(out, "  ", 2) < 0) return -1;
    return 0;
}

/* text._indent: JSON.stringify(_, null, 2)'s layout of a layout-free skeleton whose value sits at depth. */
static int indent_into(const unsigned char *s, size_t n, int64_t depth, Buf *out) {
    out->len = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t end = c == '"' ? string_end(s, n, i) : 0;
        if (end) {
            if (emit(out, s + i, end - i) < 0) return -1;
            i = end;
            continue;
        }
        if ((c == '{' || c == '[') && i + 1 < n && s[i + 1] == (c == '{' ? '}' : ']')) {
            if (emit(out, s + i, 2) < 0) return -1;
            i += 2;
            continue;
        }
        int failed = 0;
        if (c == '{' || c == '[') {
            depth++;
            failed = emit(out, s + i, 1) < 0 || emit(out, "\n", 1) < 0 || put_indent(out, depth) < 0;
        } else if (c == '}' || c == ']') {
            depth--;
            failed = emit(out, "\n", 1) < 0 || put_indent(out, depth) < 0 || emit(out, s + i, 1) < 0;
        } else if (c == ',') {
            failed = emit(out, ",\n", 2) < 0 || put_indent(out, depth) < 0;
        } else if (c == ':') {
            failed = emit(out, ": ", 2) < 0;
        } else {
            failed = emit(out, s + i, 1) < 0;
        }
        if (failed) return -1;
        i++;
    }
    return 0;
}

PyObject *indent(PyObject *self, PyObject *args) {
    Py_buffer compact;
    long long depth;
    if (!PyArg_ParseTuple(args, "y*L", &compact, &depth)) return NULL;
    Buf out = {0};
    PyObject *result = NULL;
    if (indent_into(compact.buf, compact.len, depth, &out) == 0)
        result = PyBytes_FromStringAndSize((const char *)out.data, out.len);
    PyMem_Free(out.data);
    PyBuffer_Release(&compact);
    return result;
}

/* text.store_skeleton: a layout byte (0 or 1: the depth that rebuilds it, 0xFF: none) and the body. */
PyObject *store_skeleton(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "store_skeleton takes bytes");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(arg);
    size_t n = PyBytes_GET_SIZE(arg);
    Buf compact = {0}, rebuilt = {0};
    PyObject *result = NULL;
    if (emit(&compact, "", 1) < 0) goto done; /* the layout byte, set below */
    for (size_t i = 0; i < n;) { /* text._LAYOUT: spaces and newlines outside strings go */
        size_t end = s[i] == '"' ? string_end(s, n, i) : 0;
        if (end) {
            if (emit(&compact, s + i, end - i) < 0) goto done;
            i = end;
        } else if (s[i] == ' ' || s[i] == '\n') {
            i++;
        } else if (emit(&compact, s + i, 1) < 0) {
            goto done;
        } else {
            i++;
        }
    }
    for (int depth = 0; depth < 2; depth++) {
        if (indent_into(compact.data + 1, compact.len - 1, depth, &rebuilt) < 0) goto done;
        if (rebuilt.len == n && (!n || !memcmp(rebuilt.data, s, n))) {
            compact.data[0] = (unsigned char)depth;
            result = PyBytes_FromStringAndSize((const char *)compact.data, compact.len);
            goto done;
        }
    }
    compact.len = 0;
    if (emit(&compact, "\xff", 1) == 0 && emit(&compact, s, n) == 0)
        result = PyBytes_FromStringAndSize((const char *)compact.data, compact.len);
done:
    PyMem_Free(compact.data);
    PyMem_Free(rebuilt.data);
    return result;
}


/* Fills the byte classes of text.LEAF and text.TOKEN; call once, at import. */
void flatten_init(void) {
    for (const char *c = "\"-0123456789tfn"; *c; c++) LEAF_START[(unsigned char)*c] = 1;
    for (int c = 0; c < 256; c++)
        TOKEN_START[c] = is_alpha(c) ? T_ALPHA : is_digit(c) ? T_DIGIT : c == '+' || c == '/' ? T_B64_SIGN
                         : c == ' ' ? T_SPACE : c == '\n' ? T_NEWLINE : c >= 0x80 ? T_HIGH
                         : c == '%' || c == '&' || c == '@' ? T_SIGIL : T_OTHER;
}
