// ssb-db2 8 (with ssb-bendy-butt and ssb-buttwoo installed) writes a small, varied db2/log.bipf.
// Usage: node db2.js OUTDIR [MESSAGES]  ->  {"messages": [{key, format, author, sequence}], "deleted": [key],
//                                             "secrets": {name: keys}}
// Classic feeds post unicode text, votes, contacts and private (box) messages; a bendy-butt meta feed announces
// the first classic feed (its content signed by that feed); a buttwoo feed posts a few messages; one classic
// message is deleted (its record zeroed in place). Every message read back with db.query is listed, in log order.
'use strict'

const path = require('path')
const SecretStack = require('secret-stack')
const caps = require('ssb-caps')
const ssbKeys = require('ssb-keys')
const { toCallback } = require('ssb-db2-v8/operators')
const { writeJson, die } = require('./io')

const [outDir, countArg] = process.argv.slice(2)
if (!outDir) die('usage: node db2.js OUTDIR [MESSAGES]')
const count = Number(countArg || 60)
const seed = (n) => Buffer.alloc(32, n)
const alice = ssbKeys.generate('ed25519', seed(1))
const bob = ssbKeys.generate('ed25519', seed(2))
const carol = ssbKeys.generate('ed25519', seed(3))
const meta = ssbKeys.generate('ed25519', seed(4), 'bendybutt-v1')
const woo = ssbKeys.generate('ed25519', seed(5), 'buttwoo-v1')
const texts = ['plain ascii', 'déjà vu – “quotes” ’', '日本語のテキスト', 'emoji 💩🎉 mixed', 'tab\tnewline\nend',
  'math ∑∫ and ß', 'null \u0000 and bell \u0007', 'x'.repeat(3000)]

const sbot = SecretStack({ appKey: caps.shs })
  .use(require('ssb-db2-v8'))
  .use(require('ssb-bendy-butt'))
  .use(require('ssb-buttwoo'))
  .call(null, { keys: alice, path: path.resolve(outDir), db2: {} })

const create = (opts) => new Promise((resolve, reject) =>
  sbot.db.create(opts, (err, msg) => (err ? reject(err) : resolve(msg))))

async function main () {
  const feeds = [alice, bob, carol]
  let timestamp = 1600000000000
  const classic = []
  for (let i = 0; i < count; i++) {
    const keys = feeds[i % 3]
    const other = feeds[(i + 1) % 3]
    let opts
    if (i % 7 === 3) opts = { content: { type: 'post', text: 'secret ' + texts[i % texts.length], recps: [keys.id, other.id] }, encryptionFormat: 'box' }
    else if (i % 5 === 4) opts = { content: { type: 'vote', vote: { link: classic[classic.length - 1].key, value: 1, expression: 'Like' } } }
    else if (i % 6 === 5) opts = { content: { type: 'contact', contact: other.id, following: true } }
    else opts = { content: { type: 'post', text: texts[i % texts.length] + ' #' + i, n: i / 4, big: 2 ** 40 } }
    classic.push(await create({ keys, feedFormat: 'classic', timestamp: timestamp++, ...opts }))
  }
  for (let i = 0; i < 3; i++) {
    const content = { type: 'metafeed/add/existing', feedpurpose: 'main ' + i, subfeed: alice.id, metafeed: meta.id,
      tangles: { metafeed: { root: null, previous: null } } }
    await create({ keys: meta, contentKeys: alice, feedFormat: 'bendybutt-v1', content, timestamp: timestamp++ })
  }
  for (let i = 0; i < 4; i++) {
    await create({ keys: woo, feedFormat: 'buttwoo-v1', tag: 0, content: { type: 'post', text: 'woo ' + i + ' ✓' },
      timestamp: timestamp++ })
  }
  const deleted = [classic[count - 1].key]
  await new Promise((resolve, reject) => sbot.db.del(deleted[0], (err) => (err ? reject(err) : resolve())))
  await new Promise((resolve) => sbot.db.onDrain(resolve))
  const all = await new Promise((resolve, reject) =>
    sbot.db.query(toCallback((err, msgs) => (err ? reject(err) : resolve(msgs)))))
  const formatOf = (author) => author.startsWith('ssb:feed/') ? author.split('/')[1] : 'classic'
  const messages = all.map((m) => ({ key: m.key, format: formatOf(m.value.author), author: m.value.author,
    sequence: m.value.sequence }))
  writeJson({ messages, deleted, secrets: { alice, bob, carol, meta, woo } })
  sbot.close(true, () => process.exit(0))
}

main().catch((err) => { process.stderr.write(String(err && err.stack) + '\n'); process.exit(2) })
