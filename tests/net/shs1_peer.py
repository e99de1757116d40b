"""Test support: one shs1 peer over stdin/stdout, as the npm ``shs1-test`` harness expects.

Server role (3 args: network key, server secret key (64 bytes), server public key, all hex): read msg1,
write msg2, read msg3, write msg4 + encrypt key/nonce + decrypt key/nonce. Client role (2 args: network key,
server public key): write msg1, read msg2, write msg3, read msg4, write the keys. On any handshake failure:
exit 1 at once, writing nothing more (the harness checks that).
"""

from __future__ import annotations

import sys

from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.net.errors import HandshakeError
from ssblab.net.shs import (
    CHALLENGE_LENGTH,
    CLIENT_AUTH_LENGTH,
    SERVER_ACCEPT_LENGTH,
    ClientHandshake,
    HandshakeComplete,
    ServerHandshake,
)


def exchange(machine: ClientHandshake | ServerHandshake, length: int) -> HandshakeComplete | None:
    """Write what the machine has queued, then read one message of ``length`` bytes into it."""
    write(machine.data_to_send())
    data = sys.stdin.buffer.read(length)
    if len(data) < length:
        sys.exit(1)
    machine.receive_data(data)
    return machine.next_event()


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def outcome(done: HandshakeComplete) -> bytes:
    keys = done.result.keys
    return keys.encrypt_key + keys.encrypt_nonce + keys.decrypt_key + keys.decrypt_nonce


def main(args: list[str]) -> int:
    network_key = bytes.fromhex(args[0])
    try:
        if len(args) == 3:
            server_key = SigningKey(bytes.fromhex(args[1])[:32])
            server = ServerHandshake(server_key, PrivateKey.generate(), network_key)
            exchange(server, CHALLENGE_LENGTH)
            done = exchange(server, CLIENT_AUTH_LENGTH)
            assert done is not None
            write(server.data_to_send() + outcome(done))
        else:
            client = ClientHandshake(SigningKey.generate(), bytes.fromhex(args[1]), PrivateKey.generate(),
                                     network_key)
            exchange(client, CHALLENGE_LENGTH)
            done = exchange(client, SERVER_ACCEPT_LENGTH)
            assert done is not None
            write(client.data_to_send() + outcome(done))
    except HandshakeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
