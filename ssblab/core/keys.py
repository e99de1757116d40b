"""ed25519 identities and the ssb-keys ``secret`` file format.

The secret file is what JS ssb-keys writes: ``#`` comment lines around a JSON object
``{"curve": "ed25519", "public": "<b64>.ed25519", "private": "<b64 of 64 bytes>.ed25519", "id": "@<b64>.ed25519"}``.
The 64-byte private key is libsodium's (seed ‖ public key). Reading checks that all four fields agree, so a
secret that was edited or truncated is refused with the field that is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import nacl.bindings
import nacl.signing

from ssblab.core.errors import InvalidJson, InvalidRef, InvalidSecret
from ssblab.core.refs import b64, decode_canonical_b64, feed_id, parse_feed_id
from ssblab.core.strict_json import parse_json
from ssblab.core.v8_json import stringify

__all__ = ["Keypair", "curve25519_public"]

_SECRET_HEADER = """\
# this is your SECRET name.
# this name gives you magical powers.
# with it you can mark your messages so that your friends can verify
# that they really did come from you.
#
# if any one learns this name, they can use it to destroy your identity
# NEVER show this to anyone!!!
"""
_SECRET_FOOTER = """\
# WARNING! It's vital that you DO NOT edit OR share your secret name
# instead, share your public name
# your public name: {id}
"""


@dataclass(frozen=True)
class Keypair:
    """An SSB identity: an ed25519 signing key and its feed id ``@….ed25519``."""

    seed: bytes = field(repr=False)
    public: bytes

    @classmethod
    def generate(cls, seed: bytes | None = None) -> Keypair:
        """A new identity; pass a 32-byte ``seed`` for a deterministic one (generators, tests)."""
        seed = os.urandom(32) if seed is None else seed
        if len(seed) != 32:
            raise InvalidSecret(f"an ed25519 seed is 32 bytes, got {len(seed)}")
        return cls(seed, bytes(nacl.signing.SigningKey(seed).verify_key))

    @property
    def id(self) -> str:
        return feed_id(self.public)

    @property
    def secret_key(self) -> bytes:
        """libsodium's 64-byte secret key (seed ‖ public), as ssb-keys stores it."""
        return self.seed + self.public

    def sign(self, data: bytes) -> bytes:
        return nacl.bindings.crypto_sign(data, self.secret_key)[:64]

    def curve25519_secret(self) -> bytes:
        """The curve25519 secret key that private-box recipients decrypt with."""
        return nacl.bindings.crypto_sign_ed25519_sk_to_curve25519(self.secret_key)

    def to_secret_object(self) -> dict[str, str]:
        """The keys object of JS ssb-keys."""
        return {
            "curve": "ed25519",
            "public": f"{b64(self.public)}.ed25519",
            "private": f"{b64(self.secret_key)}.ed25519",
            "id": self.id,
        }

    def to_secret_text(self) -> str:
        """The text of an ssb-keys ``secret`` file."""
        body = stringify(self.to_secret_object())
        return f"{_SECRET_HEADER}\n{body}\n\n{_SECRET_FOOTER.format(id=self.id)}"

    @classmethod
    def from_secret_object(cls, obj: Any) -> Keypair:
        """Read a JS ssb-keys keys object, checking that its fields agree."""
        if not isinstance(obj, dict):
            raise InvalidSecret("a secret is a JSON object with curve, public, private and id")
        if obj.get("curve", "ed25519") != "ed25519":
            raise InvalidSecret(f"unsupported curve {obj.get('curve')!r} (only ed25519)")
        private = obj.get("private")
        if not isinstance(private, str):
            raise InvalidSecret("the secret has no 'private' key")
        try:
            secret = decode_canonical_b64(private.removesuffix(".ed25519"), 64)
        except InvalidRef:  # its message quotes the text: never show (part of) a private key
            raise InvalidSecret(f"'private' is not 64 bytes of canonical base64 ({len(private)} characters; "
                                "the value is not shown)") from None
        keypair = cls.generate(secret[:32])
        if keypair.public != secret[32:]:
            raise InvalidSecret("'private' is corrupt: its public half does not match its seed")
        for name, expected in (("public", f"{b64(keypair.public)}.ed25519"), ("id", keypair.id)):
            if name in obj and obj[name] != expected:
                raise InvalidSecret(f"'{name}' does not belong to 'private' (expected {expected})")
        return keypair

    @classmethod
    def from_secret_text(cls, text: str) -> Keypair:
        """Read the text of an ssb-keys ``secret`` file."""
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        if not body.strip():
            raise InvalidSecret("the secret file holds no JSON object")
        try:
            obj = parse_json(body)
        except InvalidJson as exc:  # only a syntax error's text is free of the file's strings (and so its key)
            shown = str(exc) if exc.code == "json-syntax" else exc.code
            raise InvalidSecret(f"the secret file is not valid JSON: {shown}") from None
        return cls.from_secret_object(obj)

    @classmethod
    def from_secret_file(cls, path: str | os.PathLike[str]) -> Keypair:
        """Read an ssb-keys ``secret`` file (for example ``~/.ssb/secret``)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidSecret(f"cannot read secret file {path}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:  # its text quotes the bytes
            raise InvalidSecret(f"secret file {path} is not UTF-8 (at byte {exc.start})") from None
        try:
            return cls.from_secret_text(text)
        except InvalidSecret as exc:
            raise InvalidSecret(f"{path}: {exc}") from exc

    def write_secret_file(self, path: str | os.PathLike[str]) -> None:
        """Write an ssb-keys ``secret`` file, readable by its owner only; never overwrites."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(self.to_secret_text())


@lru_cache(maxsize=4096)
def curve25519_public(feed: str) -> bytes:
    """The curve25519 public key of a feed id (private-box recipients; cached, recipients repeat)."""
    try:
        return nacl.bindings.crypto_sign_ed25519_pk_to_curve25519(parse_feed_id(feed))
    except nacl.exceptions.RuntimeError as exc:
        raise InvalidRef(f"{feed} is not a valid ed25519 point") from exc
