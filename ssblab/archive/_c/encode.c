#include "speedups.h"

/* --- encode_column ------------------------------------------------------------------------------------------- */

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
static int svb_encode(const uint64_t *values, Py_ssize_t n, int wide, PyObject **codes, PyObject **data) {
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

/* The tokens by falling count, ties by first appearance (a stable order): a counting sort, since counts are at
 * most the stream's length. -1 when a count is out of range. */
static int rank_tokens(const int64_t *count, Py_ssize_t n, Py_ssize_t n_stream, int64_t *order) {
    int64_t top = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (count[k] < 0 || count[k] > n_stream) return -1;
        top = count[k] > top ? count[k] : top;
    }
    int64_t *starts = PyMem_Calloc(top + 2, sizeof(int64_t));
    if (!starts) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) starts[top - count[k] + 1]++; /* bucket top - count: falling counts */
    for (int64_t b = 1; b <= top + 1; b++) starts[b] += starts[b - 1];
    for (Py_ssize_t k = 0; k < n; k++) order[starts[top - count[k]]++] = k;
    PyMem_Free(starts);
    return 0;
}

/* dense.best_s: the stopper count that codes the ranks in the fewest bytes (ties: the smaller). */
static int best_s(const int64_t *tail, int64_t alphabet) {
    int best = 0;
    int64_t best_size = -1;
    for (int s = 1; s < 256; s++) {
        int64_t bases[5] = {0}, width = s, size = 0;
        for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= 256 - s;
        if (bases[4] < alphabet) continue;
        for (int len = 0; len < 4; len++) size += tail[bases[len] < alphabet ? bases[len] : alphabet];
        if (best_size < 0 || size < best_size) best = s, best_size = size;
    }
    return best;
}

typedef struct { /* an (s,c)-dense codeword: len bytes, zero-padded to four */
    unsigned char bytes[4], len;
} Codeword;

typedef struct { /* a block dictionary entry: its kind, and its shared id or where its payload is */
    int kind;
    int64_t at, size;
} Entry;

/* encode_column(data, offsets, hashes, stream, shared_data, shared_offsets, shared_slots, skeleton_ids) ->
 * the ten parts of text.TextColumn. The block's distinct tokens come end to end with their n + 1 offsets, hashes
 * holds the hash_bytes of each as int64; the shared TOKEN dictionary comes as its tokens end to end and their
 * token_slots table. */
PyObject *encode_column(PyObject *self, PyObject *args) {
    Py_buffer data, offsets, hashes, stream, shared_data, shared_offsets, slots, skeletons;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*", &data, &offsets, &hashes, &stream, &shared_data, &shared_offsets,
                          &slots, &skeletons))
        return NULL;
    Pieces distinct, shared;
    Py_ssize_t n = 0, n_stream = stream.len / 4, n_skel = skeletons.len / 8;
    PyObject *parts[10] = {0}, *result = NULL;
    int64_t *order = NULL, *rank_of = NULL, *occurrences = NULL, *tail = NULL, *ids = NULL, *sizes = NULL;
    int64_t *skel = NULL;
    Entry *entries = NULL;
    Buf kinds = {0}, payload = {0}, ranks = {0}, own = {0}; /* own: the payloads of the entries not shared */
    unsigned char *raw = NULL;
    if (pieces_of(&distinct, &data, &offsets, "encode_column") < 0 ||
        pieces_of(&shared, &shared_data, &shared_offsets, "encode_column") < 0)
        goto done;
    n = distinct.n;
    if (hashes.len != 8 * n || stream.len % 4 || (uintptr_t)stream.buf % 4 || skeletons.len % 8 ||
        slots.len < (Py_ssize_t)sizeof(Slot) || slots.len & (slots.len - 1) || (uintptr_t)slots.buf % _Alignof(Slot)) {
        PyErr_SetString(PyExc_ValueError, "encode_column: one int64 hash per token, an aligned uint32 stream, int64 "
                                          "skeleton ids, and a token_slots table");
        goto done;
    }
    order = PyMem_Malloc((n + 1) * sizeof(int64_t));
    rank_of = PyMem_Malloc((n + 1) * sizeof(int64_t));
    occurrences = PyMem_Calloc(n + 1, sizeof(int64_t));
    tail = PyMem_Calloc(n + 1, sizeof(int64_t));
    ids = PyMem_Malloc((n + 1) * sizeof(int64_t));
    sizes = PyMem_Malloc((n + 1) * sizeof(int64_t));
    skel = PyMem_Malloc((n_skel + 1) * sizeof(int64_t));
    if (!order || !rank_of || !occurrences || !tail || !ids || !sizes || !skel) {
        PyErr_NoMemory();
        goto done;
    }
    const uint32_t *tokens = stream.buf;
    for (Py_ssize_t i = 0; i < n_stream; i++) {
        if (tokens[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "encode_column: a token index beyond the tokens");
            goto done;
        }
        occurrences[tokens[i]]++;
    }
    if (rank_tokens(occurrences, n, n_stream, order) < 0) goto done;
    /* Each token's entry in the order met (the tokens lie in memory in that order), then the entries by rank. */
    entries = PyMem_Malloc((n + 1) * sizeof(Entry));
    if (!entries) {
        PyErr_NoMemory();
        goto done;
    }
    size_t raw_cap = 0, mask = slots.len / sizeof(Slot) - 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k + 8 < n) { /* the lookups wait on memory: fetch the slots a few tokens ahead */
            uint64_t ahead;
            memcpy(&ahead, (const char *)hashes.buf + 8 * (k + 8), 8);
            __builtin_prefetch((const Slot *)slots.buf + (ahead & mask));
        }
        const unsigned char *text;
        int64_t length;
        if (piece(&distinct, k, &text, &length) < 0) {
            PyErr_SetString(PyExc_ValueError, "encode_column: token offsets outside the tokens");
            goto done;
        }
        size_t len = (size_t)length;
        uint64_t h;
        memcpy(&h, (const char *)hashes.buf + 8 * k, 8);
        int64_t id = find_shared(&slots, &shared, text, len, h);
        if (id >= 0) {
            entries[k] = (Entry){SHARED, id, 0};
            continue;
        }
        if (len > raw_cap) {
            unsigned char *grown = PyMem_Realloc(raw, len);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            raw = grown, raw_cap = len;
        }
        const unsigned char *bytes;
        size_t size;
        int kind = entry_of(text, len, raw, &bytes, &size);
        entries[k] = (Entry){kind, (int64_t)own.len, (int64_t)size};
        if (emit(&own, bytes, size) < 0) goto done;
    }
    Py_ssize_t n_ids = 0, n_sizes = 0;
    if (reserve(&kinds, n) < 0 || reserve(&payload, own.len) < 0) goto done;
    for (Py_ssize_t r = 0; r < n; r++) {
        const Entry *e = &entries[order[r]];
        rank_of[order[r]] = r;
        kinds.data[kinds.len++] = (unsigned char)e->kind;
        if (e->kind == SHARED) {
            ids[n_ids++] = e->at;
            continue;
        }
        put(&payload, own.data + e->at, e->size);
        if (e->kind == LITERAL || e->kind == BASE64) sizes[n_sizes++] = e->size;
    }
    for (Py_ssize_t k = 0; k < n; k++) tail[rank_of[k]] = occurrences[k];
    for (Py_ssize_t r = n - 1; r >= 0; r--) tail[r] += tail[r + 1]; /* tail[r]: how many ranks are >= r */
    int s = best_s(tail, n);
    if (!s) {
        PyErr_Format(PyExc_ValueError, "%zd distinct tokens do not fit a 4-byte dense code", n);
        goto done;
    }
    int64_t bases[5] = {0}, width = s, c = 256 - s;
    for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= c;
    /* dense.encode: each rank's codeword once, then one 4-byte copy a token */
    Codeword *codeword = PyMem_Malloc((n + 1) * sizeof(Codeword));
    if (!codeword || reserve(&ranks, 4 * n_stream + 8) < 0) {
        PyMem_Free(codeword);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) { /* by token, so that the stream is coded with one lookup a token */
        int64_t rank = rank_of[k];
        int len = 1;
        while (len < 4 && rank >= bases[len]) len++;
        int64_t rest = rank - bases[len - 1], digits = rest / s;
        Codeword *w = &codeword[k];
        memset(w, 0, sizeof *w);
        w->bytes[len - 1] = (unsigned char)(rest % s);
        for (int back = 1; back < len; back++, digits /= c) w->bytes[len - 1 - back] = (unsigned char)(s + digits % c);
        w->len = (unsigned char)len;
    }
    for (Py_ssize_t i = 0; i < n_stream; i++) {
        const Codeword *w = &codeword[tokens[i]];
        memcpy(ranks.data + ranks.len, w->bytes, 4); /* the buffer keeps room for a whole word past the last one */
        ranks.len += w->len;
    }
    PyMem_Free(codeword);
    memcpy(skel, skeletons.buf, skeletons.len);
    unsigned char s_byte = (unsigned char)s;
    if (!(parts[0] = PyBytes_FromStringAndSize((const char *)kinds.data, kinds.len)) ||
        svb_encode((uint64_t *)ids, n_ids, 0, &parts[1], &parts[2]) < 0 ||
        svb_encode((uint64_t *)sizes, n_sizes, 0, &parts[3], &parts[4]) < 0 ||
        !(parts[5] = PyBytes_FromStringAndSize((const char *)payload.data, payload.len)) ||
        !(parts[6] = PyBytes_FromStringAndSize((const char *)&s_byte, 1)) ||
        !(parts[7] = PyBytes_FromStringAndSize((const char *)ranks.data, ranks.len)) ||
        svb_encode((uint64_t *)skel, n_skel, 0, &parts[8], &parts[9]) < 0)
        goto done;
    result = PyTuple_New(10);
    for (int k = 0; result && k < 10; k++) PyTuple_SET_ITEM(result, k, Py_NewRef(parts[k]));
done:
    for (int k = 0; k < 10; k++) Py_XDECREF(parts[k]);
    PyMem_Free(order);
    PyMem_Free(rank_of);
    PyMem_Free(occurrences);
    PyMem_Free(tail);
    PyMem_Free(ids);
    PyMem_Free(sizes);
    PyMem_Free(skel);
    PyMem_Free(entries);
    PyMem_Free(kinds.data);
    PyMem_Free(payload.data);
    PyMem_Free(own.data);
    PyMem_Free(ranks.data);
    PyMem_Free(raw);
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&stream);
    PyBuffer_Release(&shared_data);
    PyBuffer_Release(&shared_offsets);
    PyBuffer_Release(&slots);
    PyBuffer_Release(&skeletons);
    return result;
}

