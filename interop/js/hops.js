// friends.hops of a running ssb-server 16 (ssb-friends 4.4), asked by the server's own identity (the master).
//
// Usage: node hops.js SECRET PORT [TIMEOUT_MS]
//   SECRET  the server's secret file: connecting with it makes this client the master, which may call hops
//   PORT    the server's loopback port (127.0.0.1)
//   stdin   a JSON list of queries, each {"start"?: feed id, "max"?: number, "reverse"?: bool}
//   stdout  {"id": server id, "answers": [hops object per query]}
// The connection is retried until TIMEOUT_MS (default 20000) so the script can run while the server starts.
'use strict'

const ssbClient = require('ssb-client')
const ssbKeys = require('ssb-keys')
const caps = require('ssb-caps')
const { readJson, writeJson, die } = require('./io')

const manifest = { friends: { hops: 'async' }, whoami: 'async' }

function connect (keys, port, deadline, cb) {
  const remote = `net:127.0.0.1:${port}~shs:${keys.public.replace('.ed25519', '')}`
  ssbClient(keys, { remote, caps, manifest }, (err, rpc) => {
    if (!err) return cb(null, rpc)
    if (Date.now() > deadline) return cb(err)
    setTimeout(() => connect(keys, port, deadline, cb), 200)
  })
}

function askAll (rpc, queries, answers, cb) {
  if (answers.length === queries.length) return cb(null, answers)
  rpc.friends.hops(queries[answers.length], (err, hops) => {
    if (err) return cb(err)
    answers.push(hops)
    askAll(rpc, queries, answers, cb)
  })
}

function main () {
  const [secret, port, timeout] = process.argv.slice(2)
  if (!secret || !port) die('usage: node hops.js SECRET PORT [TIMEOUT_MS] < queries.json')
  const keys = ssbKeys.loadSync(secret)
  const queries = readJson()
  connect(keys, Number(port), Date.now() + Number(timeout || 20000), (err, rpc) => {
    if (err) die(`hops.js: cannot connect to 127.0.0.1:${port}: ${err.message}`)
    askAll(rpc, queries, [], (err, answers) => {
      if (err) die(`hops.js: friends.hops failed: ${err.message}`)
      writeJson({ id: keys.id, answers })
      rpc.close(true, () => process.exit(0))
    })
  })
}

main()
