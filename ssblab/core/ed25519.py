"""ed25519 signature checks with libsodium's ``crypto_sign_verify_detached``.

PyNaCl's ``VerifyKey.verify`` goes through ``crypto_sign_open``, which needs the signature and message
concatenated and copies the message out again; at one check per message that copying is a measurable share of
validation. The detached call is the same libsodium code (the same accept/reject decisions as JS sodium-native,
which a different ed25519 library would not guarantee), reached through cffi on the library PyNaCl ships (and
by address from the compiled `_speedups.verify_signature`, which needs no cffi call per message). Where
that symbol cannot be loaded, PyNaCl's own API is used.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import nacl.exceptions
import nacl.signing


@cache
def _library() -> tuple[Any, Any] | None:
    """(cffi's FFI, ``crypto_sign_verify_detached`` of the libsodium PyNaCl ships), or None."""
    try:
        import cffi  # type: ignore[import-untyped]
        import nacl._sodium  # type: ignore[import-not-found]

        ffi = cffi.FFI()
        ffi.cdef("int crypto_sign_verify_detached(const unsigned char *sig, const unsigned char *m,"
                 " unsigned long long mlen, const unsigned char *pk);")
        return ffi, ffi.dlopen(nacl._sodium.__file__).crypto_sign_verify_detached
    except (ImportError, OSError, AttributeError):
        return None


def _detached() -> Callable[[bytes, bytes, int, bytes], int] | None:
    library = _library()
    return None if library is None else library[1]


@cache
def verify_address() -> int:
    """The address of ``crypto_sign_verify_detached``, for compiled callers (`_speedups.verify_signature`);
    0 when it cannot be loaded."""
    library = _library()
    if library is None:
        return 0
    ffi, function = library
    return int(ffi.cast("uintptr_t", function))


def verify(public_key: bytes, data: bytes, signature: bytes) -> bool:
    """True when ``signature`` (64 bytes) is ``public_key``'s (32 bytes) signature of ``data``."""
    check = _detached()
    if check is not None:
        return check(signature, data, len(data), public_key) == 0
    try:
        nacl.signing.VerifyKey(public_key).verify(data, signature)
    except nacl.exceptions.BadSignatureError:
        return False
    return True
