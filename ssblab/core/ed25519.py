"""ed25519 signature checks with libsodium, through PyNaCl's public ``nacl.bindings``.

libsodium decides (the same accept/reject decisions as JS sodium-native, which a different ed25519 library would
not guarantee). The call is ``crypto_sign_open`` over the signature followed by the message, the one signature
check ``nacl.bindings`` offers; for a message in the store or on the wire the compiled ``signed_message``
(``_speedups``) lays out those bytes straight from the encoding, so Python does one C call and this one.

Why not the detached check by address, as this module did before: ``crypto_sign_verify_detached`` saves
``crypto_sign_open``'s copy of the message, but PyNaCl does not export it, so reaching it meant dlopen'ing PyNaCl's
private ``nacl._sodium`` through cffi (a dependency nobody declared). Measured per signature on 3,000 generated
messages, interleaved in one process: ``crypto_sign_open`` over the bytes ``signed_message`` lays out costs within
a few per cent of the detached call by address (the verification itself is most of the time; the copy and
PyNaCl's wrapper about a microsecond), ``VerifyKey.verify`` about 10 % more (a key object per author, more
wrapping); ``bench/verify.py`` measures the whole validation. A library outside PyNaCl (the ``cryptography``
package's OpenSSL ed25519) would be a second crypto dependency with other edge-case decisions.
"""

from __future__ import annotations

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

__all__ = ["verify", "verify_signed"]


def verify_signed(signed: bytes, public_key: bytes) -> bool:
    """True when ``signed`` (a 64-byte signature, then the message) is ``public_key``'s (32 bytes) signature."""
    try:
        crypto_sign_open(signed, public_key)
    except BadSignatureError:
        return False
    return True


def verify(public_key: bytes, data: bytes, signature: bytes) -> bool:
    """True when ``signature`` (64 bytes) is ``public_key``'s (32 bytes) signature of ``data``."""
    return verify_signed(signature + data, public_key)
