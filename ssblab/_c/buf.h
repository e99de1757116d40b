/* A growing byte buffer (PyMem), shared by the compiled fast paths of ssblab.core and ssblab.archive.
 *
 * reserve makes room, put writes into room already made (the hot loops reserve once for many puts), and emit
 * does both. reserve and emit return 0, or -1 with MemoryError set.
 */
#ifndef SSBLAB_BUF_H
#define SSBLAB_BUF_H

#include <Python.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    unsigned char *data;
    size_t len, cap;
} Buf;

static inline int reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    unsigned char *grown = PyMem_Realloc(b->data, cap);
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    return 0;
}

static inline void put(Buf *b, const void *p, size_t len) { /* after reserve */
    if (!len) return; /* an empty Buf has no data pointer yet */
    memcpy(b->data + b->len, p, len);
    b->len += len;
}

static inline int emit(Buf *b, const void *p, size_t len) {
    if (reserve(b, len) < 0) return -1;
    put(b, p, len);
    return 0;
}

#endif
