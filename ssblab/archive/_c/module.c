/* ssblab.archive._speedups: the method table, and what each unit sets up at import (speedups.h says which unit
 * does what). */
#include "speedups.h"

PyObject *Malformed;

static PyMethodDef methods[] = {
    {"indent", indent, METH_VARARGS, "indent(compact, depth) -> the skeleton laid out as text._indent does"},
    {"store_skeleton", store_skeleton, METH_O, "store_skeleton(skeleton) -> its stored form, as text.store_skeleton"},
    {"shared_tokens", shared_tokens, METH_O, "shared_tokens(entries) -> the token of each TOKEN dictionary entry"},
    {"encode_column", encode_column, METH_VARARGS,
     "encode_column(data, offsets, hashes, stream, shared_data, shared_offsets, shared_slots, skeleton_ids) "
     "-> the ten parts of text.TextColumn"},
    {"block_blob", block_blob, METH_VARARGS,
     "block_blob(sequence_base, timestamps, type_ids, signature_ids, signatures, author, previous, last_hash, parts, "
     "heads) -> the MessageBlock blob of these fields, as block.encode_block builds it, or None"},
    {"bundle_blob", bundle_blob, METH_VARARGS,
     "bundle_blob(author, refs, heads) -> the Bundle blob of these block refs, as flat.build_bundle builds it, or None"},
    {"token_slots", token_slots, METH_VARARGS,
     "token_slots(data, offsets) -> the hash table of distinct tokens that encode_column looks shared tokens up in"},
    {"plan_block", plan_block, METH_VARARGS,
     "plan_block(messages, author, previous, first, keys_as_data) -> (int64 timestamps, signatures, orders, "
     "order indexes, types, type indexes, skeletons, skeleton indexes, distinct tokens end to end, their int64 "
     "offsets, their int64 hashes, uint32 token indexes) or None"},
    {"repeated_tokens", repeated_tokens, METH_VARARGS,
     "repeated_tokens(texts, offsets, hashes) -> the tokens met in more than one block (each block's distinct "
     "tokens end to end, their int64 offsets and hashes), first met first"},
    {"shared_entries", shared_entries, METH_O, "shared_entries(tokens) -> text.shared_entry of each token"},
    {"id_texts", id_texts, METH_O, "id_texts(digests) -> the message id of each 32-byte digest, 52 bytes each"},
    {"svb_decode", svb_decode, METH_VARARGS, "svb_decode(codes, values, wide, where) -> uint64 values end to end"},
    {"svb_encode", svb_encode_py, METH_VARARGS, "svb_encode(values, wide) -> (codes, values) of a uint64 buffer"},
    {"read_block", read_block, METH_O,
     "read_block(data) -> the raw fields of a MessageBlock blob, or None when the Python reader must read it"},
    {"decode_column", decode_column, METH_VARARGS,
     "decode_column(parts, n, shared_data, shared_offsets, skeleton_parts_data, skeleton_parts_offsets, first, "
     "holes) -> (the n texts end to end, n + 1 int64 offsets, n int64 lengths of their ASCII starts); checked to be "
     "UTF-8"},
    {"sha256", sha256_py, METH_VARARGS, "sha256(data, portable=False) -> the digest block_digests uses (for tests)"},
    {"sha256_streams", sha256_streams, METH_VARARGS,
     "sha256_streams(messages, portable=False) -> the digest of each list of parts, hashed as block_digests does "
     "(for tests)"},
    {"block_digests", block_digests, METH_O,
     "block_digests(blocks) -> each block's 32-byte message ids end to end; a block is (contents, offsets, "
     "layout_of, layouts, timestamps, sequence_base, signatures, previous, where)"},
    {"message_texts", message_texts, METH_VARARGS,
     "message_texts(block, digests) -> each message's signed JSON, given the block's ids"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_speedups", .m_methods = methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    text_init();
    digests_init();
    flatten_init();
    if (envelope_init() < 0) return NULL;
    PyObject *errors = PyImport_ImportModule("ssblab.archive.errors");
    Malformed = errors ? PyObject_GetAttrString(errors, "MalformedArchive") : NULL;
    Py_XDECREF(errors);
    return Malformed ? PyModule_Create(&module) : NULL;
}

