/* encode_column: a block's tokens coded as its content column (docs/archive-format.md §6) against the shared
 * TOKEN dictionary. */
#include "speedups.h"

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

/* One block's content column being coded: the block's distinct tokens (end to end, with their hashes), the token
 * stream as indexes into them, the shared TOKEN dictionary and its token_slots table, and what is made of them. */
typedef struct {
    Py_buffer data, offsets, hashes, stream, shared_data, shared_offsets, slots, skeletons;
    Pieces distinct, shared;
    Py_ssize_t n, n_stream, n_skel, n_ids, n_sizes;
    const uint32_t *tokens;
    int64_t *order, *rank_of, *occurrences, *tail, *ids, *sizes;
    Entry *entries;
    Buf kinds, payload, ranks, own; /* own: the payloads of the entries not shared */
    int s;
} Column;

static void column_free(Column *c) {
    int64_t *arrays[] = {c->order, c->rank_of, c->occurrences, c->tail, c->ids, c->sizes};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) PyMem_Free(arrays[k]);
    PyMem_Free(c->entries);
    Buf *bufs[] = {&c->kinds, &c->payload, &c->ranks, &c->own};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) PyMem_Free(bufs[k]->data);
    Py_buffer *views[] = {&c->data, &c->offsets, &c->hashes, &c->stream, &c->shared_data, &c->shared_offsets,
                          &c->slots, &c->skeletons};
    for (size_t k = 0; k < sizeof views / sizeof *views; k++) PyBuffer_Release(views[k]);
}

/* The arguments checked, the arrays allocated and each token's count taken; 0, or -1 with an error set. */
static int column_start(Column *c) {
    if (pieces_of(&c->distinct, &c->data, &c->offsets, "encode_column") < 0 ||
        pieces_of(&c->shared, &c->shared_data, &c->shared_offsets, "encode_column") < 0)
        return -1;
    Py_ssize_t n = c->n = c->distinct.n, slots = c->slots.len;
    c->n_stream = c->stream.len / 4, c->n_skel = c->skeletons.len / 8, c->tokens = c->stream.buf;
    if (c->hashes.len != 8 * n || c->stream.len % 4 || (uintptr_t)c->stream.buf % 4 || c->skeletons.len % 8 ||
        slots < (Py_ssize_t)sizeof(Slot) || slots & (slots - 1) || (uintptr_t)c->slots.buf % _Alignof(Slot)) {
        PyErr_SetString(PyExc_ValueError, "encode_column: one int64 hash per token, an aligned uint32 stream, int64 "
                                          "skeleton ids, and a token_slots table");
        return -1;
    }
    int64_t **arrays[] = {&c->order, &c->rank_of, &c->occurrences, &c->tail, &c->ids, &c->sizes};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
        if (!(*arrays[k] = PyMem_Calloc(n + 1, sizeof(int64_t)))) return PyErr_NoMemory(), -1;
    if (!(c->entries = PyMem_Malloc((n + 1) * sizeof(Entry)))) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < c->n_stream; i++) {
        if (c->tokens[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "encode_column: a token index beyond the tokens");
            return -1;
        }
        c->occurrences[c->tokens[i]]++;
    }
    return rank_tokens(c->occurrences, n, c->n_stream, c->order);
}

/* Each token's entry, in the order met (the tokens lie in memory in that order): its shared id, or its kind and
 * payload (appended to c->own). */
static int column_entries(Column *c) {
    Buf raw = {0};
    size_t mask = c->slots.len / sizeof(Slot) - 1;
    int status = -1;
    for (Py_ssize_t k = 0; k < c->n; k++) {
        uint64_t h, ahead;
        if (k + 8 < c->n) { /* the lookups wait on memory: fetch the slots a few tokens ahead */
            memcpy(&ahead, (const char *)c->hashes.buf + 8 * (k + 8), 8);
            __builtin_prefetch((const Slot *)c->slots.buf + (ahead & mask));
        }
        const unsigned char *text, *bytes;
        int64_t length;
        if (piece(&c->distinct, k, &text, &length) < 0) {
            PyErr_SetString(PyExc_ValueError, "encode_column: token offsets outside the tokens");
            goto done;
        }
        memcpy(&h, (const char *)c->hashes.buf + 8 * k, 8);
        int64_t id = find_shared(&c->slots, &c->shared, text, (size_t)length, h);
        if (id >= 0) {
            c->entries[k] = (Entry){SHARED, id, 0};
            continue;
        }
        size_t size;
        if (reserve(&raw, (size_t)length) < 0) goto done;
        int kind = entry_of(text, (size_t)length, raw.data, &bytes, &size);
        c->entries[k] = (Entry){kind, (int64_t)c->own.len, (int64_t)size};
        if (emit(&c->own, bytes, size) < 0) goto done;
    }
    status = 0;
done:
    PyMem_Free(raw.data);
    return status;
}

/* The entries by rank: their kinds, payloads, shared ids and lengths; then each rank's count of tokens at or past
 * it, from which the stopper count s is chosen (dense.best_s). */
static int column_by_rank(Column *c) {
    if (reserve(&c->kinds, c->n) < 0 || reserve(&c->payload, c->own.len) < 0) return -1;
    for (Py_ssize_t r = 0; r < c->n; r++) {
        const Entry *e = &c->entries[c->order[r]];
        c->rank_of[c->order[r]] = r;
        c->kinds.data[c->kinds.len++] = (unsigned char)e->kind;
        if (e->kind == SHARED) {
            c->ids[c->n_ids++] = e->at;
            continue;
        }
        put(&c->payload, c->own.data + e->at, e->size);
        if (e->kind == LITERAL || e->kind == BASE64) c->sizes[c->n_sizes++] = e->size;
    }
    for (Py_ssize_t k = 0; k < c->n; k++) c->tail[c->rank_of[k]] = c->occurrences[k];
    for (Py_ssize_t r = c->n - 1; r >= 0; r--) c->tail[r] += c->tail[r + 1]; /* tail[r]: how many ranks are >= r */
    if (!(c->s = best_s(c->tail, c->n))) {
        PyErr_Format(PyExc_ValueError, "%zd distinct tokens do not fit a 4-byte dense code", c->n);
        return -1;
    }
    return 0;
}

/* The (s,c)-dense codeword of rank (docs/archive-format.md §6.3), given the first rank of each codeword length. */
static Codeword codeword_of(int64_t rank, int s, const int64_t bases[5]) {
    Codeword w = {{0}, 0};
    int len = 1, c = 256 - s;
    while (len < 4 && rank >= bases[len]) len++;
    int64_t rest = rank - bases[len - 1], digits = rest / s;
    w.bytes[len - 1] = (unsigned char)(rest % s);
    for (int back = 1; back < len; back++, digits /= c) w.bytes[len - 1 - back] = (unsigned char)(s + digits % c);
    w.len = (unsigned char)len;
    return w;
}

/* dense.encode of the token stream: each token's codeword once, then one 4-byte copy a token. */
static int column_ranks(Column *c) {
    int64_t bases[5] = {0}, width = c->s;
    for (int len = 1; len < 5; len++) bases[len] = bases[len - 1] + width, width *= 256 - c->s;
    Codeword *codeword = PyMem_Malloc((c->n + 1) * sizeof(Codeword));
    if (!codeword || reserve(&c->ranks, 4 * c->n_stream + 8) < 0) {
        PyMem_Free(codeword);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < c->n; k++) codeword[k] = codeword_of(c->rank_of[k], c->s, bases);
    for (Py_ssize_t i = 0; i < c->n_stream; i++) {
        const Codeword *w = &codeword[c->tokens[i]];
        memcpy(c->ranks.data + c->ranks.len, w->bytes, 4); /* the buffer keeps room for a whole word past the last */
        c->ranks.len += w->len;
    }
    PyMem_Free(codeword);
    return 0;
}

/* The ten parts of text.TextColumn, as a tuple. */
static PyObject *column_parts(Column *c) {
    PyObject *parts[10] = {0}, *result = NULL;
    unsigned char s_byte = (unsigned char)c->s;
    int64_t *skel = PyMem_Malloc((c->n_skel + 1) * sizeof(int64_t)); /* aligned, whatever the buffer is */
    if (!skel) return PyErr_NoMemory();
    memcpy(skel, c->skeletons.buf, c->skeletons.len);
    if ((parts[0] = PyBytes_FromStringAndSize((const char *)c->kinds.data, c->kinds.len)) &&
        svb_encode((uint64_t *)c->ids, c->n_ids, 0, &parts[1], &parts[2]) == 0 &&
        svb_encode((uint64_t *)c->sizes, c->n_sizes, 0, &parts[3], &parts[4]) == 0 &&
        (parts[5] = PyBytes_FromStringAndSize((const char *)c->payload.data, c->payload.len)) &&
        (parts[6] = PyBytes_FromStringAndSize((const char *)&s_byte, 1)) &&
        (parts[7] = PyBytes_FromStringAndSize((const char *)c->ranks.data, c->ranks.len)) &&
        svb_encode((uint64_t *)skel, c->n_skel, 0, &parts[8], &parts[9]) == 0 && (result = PyTuple_New(10)))
        for (int k = 0; k < 10; k++) PyTuple_SET_ITEM(result, k, Py_NewRef(parts[k]));
    for (int k = 0; k < 10; k++) Py_XDECREF(parts[k]);
    PyMem_Free(skel);
    return result;
}

/* encode_column(data, offsets, hashes, stream, shared_data, shared_offsets, shared_slots, skeleton_ids) ->
 * the ten parts of text.TextColumn. The block's distinct tokens come end to end with their n + 1 offsets, hashes
 * holds the hash_bytes of each as int64; the shared TOKEN dictionary comes as its tokens end to end and their
 * token_slots table. */
PyObject *encode_column(PyObject *self, PyObject *args) {
    Column c = {0};
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*", &c.data, &c.offsets, &c.hashes, &c.stream, &c.shared_data,
                          &c.shared_offsets, &c.slots, &c.skeletons))
        return NULL;
    PyObject *result = NULL;
    if (column_start(&c) == 0 && column_entries(&c) == 0 && column_by_rank(&c) == 0 && column_ranks(&c) == 0)
        result = column_parts(&c);
    column_free(&c);
    return result;
}
