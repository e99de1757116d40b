"""A real JS ``ssb-client`` calls our asyncio server: whoami answers, an unknown method gets the JS error."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import RpcConnection, serve
from tests.net.net_pairs import keys

pytestmark = pytest.mark.interop

CLIENT_JS = """
const ssbClient = require('ssb-client')
const ssbKeys = require('ssb-keys')
const keys = ssbKeys.generate()
const caps = { shs: '1KHLiKZvAvjbY1ziZEHMXawbCEIM6qwjCDm3VYRan/s=' }
const manifest = { whoami: 'async', nope: 'async' }
ssbClient(keys, { remote: process.argv[2], caps, manifest }, (err, rpc) => {
  if (err) { console.error('connect failed', err); process.exit(2) }
  rpc.whoami((err, who) => {
    if (err) { console.error('whoami failed', err); process.exit(3) }
    rpc.nope((nope) => {
      console.log(JSON.stringify({ who, me: keys.id, nope: nope && nope.message }))
      rpc.close(true, () => process.exit(0))
    })
  })
})
"""


def test_js_client_calls_our_server(node_bin: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (node_bin.parent / "ssb-client").is_dir():
        pytest.skip("node or ssb-client is not installed")
    script = tmp_path / "client.js"
    script.write_text(CLIENT_JS)
    server_key, seen = keys(2), []

    async def on_connection(conn: RpcConnection) -> None:
        seen.append(conn.remote_id)

    async def main() -> tuple[int, bytes, bytes]:
        server = await serve(server_key, on_connection=on_connection)
        address = MultiserverAddress("127.0.0.1", server.sockets[0].getsockname()[1],
                                     bytes(server_key.verify_key))
        try:
            proc = await asyncio.create_subprocess_exec(
                node, str(script), str(address), stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env={**os.environ, "NODE_PATH": str(node_bin.parent)})
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode or 0, out, err
        finally:
            server.close()

    code, out, err = asyncio.run(main())
    assert code == 0, err.decode()[-2000:]
    answer = json.loads(out)
    assert answer["who"] == {"id": f"@{base64.b64encode(bytes(server_key.verify_key)).decode()}.ed25519"}
    assert answer["nope"] == "method:nope is not in list of allowed methods"
    assert seen == [answer["me"]]
