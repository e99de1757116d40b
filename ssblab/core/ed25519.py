"""ed25519 signature checks with libsodium's ``crypto_sign_verify_detached``.

PyNaCl's ``VerifyKey.verify`` goes through ``crypto_sign_open``, which needs the signature and message
concatenated and copies the message out again; at one check per message that copying is a measurable share of
validation. The detached call is the same libsodium code (the same accept/reject decisions as JS sodium-native,
which a different ed25519 library would not guarantee), reached through cffi on the library PyNaCl ships. Where
that symbol cannot be loaded, PyNaCl's own API is used.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import nacl.exceptions
import nacl.signing


@cache
def _detached() -> Callable[[bytes, bytes, int, bytes], int] | None:
    try:
        import cffi
        import nacl._sodium

        ffi = cffi.FFI()
        ffi.cdef("int crypto_sign_verify_detached(const unsigned char *sig, const unsigned char *m,"
                 " unsigned long long mlen, const unsigned char *pk);")
        return ffi.dlopen(nacl._sodium.__file__).crypto_sign_verify_detached  # type: ignore[no-any-return]
    except (ImportError, OSError, AttributeError):
        return None


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
