"""ed25519 signature checks with libsodium: PyNaCl's own copy, reached through public APIs only.

libsodium decides (the same accept/reject decisions as JS sodium-native, which a different ed25519 library would
not guarantee), and it is the copy PyNaCl installs. Two routes reach it:

- The compiled `_speedups.verify_signature` calls ``crypto_sign_verify_detached`` by address, with no Python call
  per message. The address comes from the shared library that PyNaCl's package installs and that exports
  libsodium's symbols, found in the package's folder and opened with ``ctypes`` (stdlib): no private module is
  imported and no undeclared package is needed (this module used to import PyNaCl's private ``nacl._sodium`` and
  cffi for the same address). The folder is searched rather than the distribution's file list
  (``importlib.metadata``), which costs tens of milliseconds at start-up.
- Everything else (no extension, an HMAC key, archives) calls ``nacl.bindings.crypto_sign_open``, the one
  signature check PyNaCl's public bindings offer, over the signature followed by the message.

Why both, by measurement (generated messages; signature checks interleaved in one process, and bench/verify.py
whole): ``crypto_sign_open`` through PyNaCl's wrapper costs about 7 % more per signature than the detached call by
address (two cffi allocations and a copy of the message out; libsodium's own work is the same), which made
validation as a whole about 15 % slower against raw PyNaCl's checks. Where no library of PyNaCl's exports the
symbol (``verify_address`` gives 0), the compiled route hands the check to the public one.
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

import nacl

__all__ = ["verify", "verify_address", "verify_signed"]

_SYMBOL = "crypto_sign_verify_detached"
_LIBRARY_SUFFIXES = (".so", ".pyd", ".dylib")


@cache
def verify_address() -> int:
    """The address of libsodium's ``crypto_sign_verify_detached`` in the library PyNaCl installs, for the compiled
    check; 0 when no library in PyNaCl's package folder exports it."""
    for path in sorted(Path(nacl.__file__).parent.iterdir()):
        if path.suffix not in _LIBRARY_SUFFIXES:
            continue
        try:
            function = getattr(ctypes.CDLL(str(path)), _SYMBOL)
        except (OSError, AttributeError):
            continue
        return ctypes.cast(function, ctypes.c_void_p).value or 0
    return 0


def verify_signed(signed: bytes, public_key: bytes) -> bool:
    """True when ``signed`` (a 64-byte signature, then the message) is ``public_key``'s (32 bytes) signature."""
    # Imported here: PyNaCl's bindings load every libsodium wrapper (about 20 ms), which the compiled route skips.
    from nacl.bindings import crypto_sign_open
    from nacl.exceptions import BadSignatureError

    try:
        crypto_sign_open(signed, public_key)
    except BadSignatureError:
        return False
    return True


def verify(public_key: bytes, data: bytes, signature: bytes) -> bool:
    """True when ``signature`` (64 bytes) is ``public_key``'s (32 bytes) signature of ``data``."""
    return verify_signed(signature + data, public_key)
