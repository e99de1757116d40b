// ssb-keys 8 (and ssb-validate's id) as a command-line oracle.
//
// Usage: node keys.js SUBCOMMAND [ARG]; JSON in on stdin, JSON out on stdout.
//   box        stdin {"content": obj, "recipients": ["@...ed25519", ...]} -> {"boxed": "....box"}
//   unbox      stdin {"boxed": str, "secret": {curve, public, private, id}} -> {"content": obj | null}
//   id         stdin a message value -> {"id": "%...sha256"} (ssb-validate's id)
//   loadSecret ARG = path of an ssb secret file -> the keys object
//   create     ARG = path of a new secret file (ssb-keys.createSync) -> the keys object
//   signObj    stdin {"keys": keys, "hmacKey": b64 | null, "obj": obj} -> the signed obj
//   verifyObj  stdin {"keys": keys or {"public": ...}, "hmacKey": b64 | null, "obj": obj} -> {"valid": bool}
'use strict'

const ssbKeys = require('ssb-keys')
const V = require('ssb-validate')
const { readJson, writeJson, die } = require('./io')

const COMMANDS = {
  box: () => {
    const input = readJson()
    return { boxed: ssbKeys.box(input.content, input.recipients) }
  },
  // ssb-keys returns undefined when the box is not for these keys.
  unbox: () => {
    const input = readJson()
    const content = ssbKeys.unbox(input.boxed, input.secret)
    return { content: content === undefined ? null : content }
  },
  id: () => ({ id: V.id(readJson()) }),
  loadSecret: (file) => ssbKeys.loadSync(file),
  create: (file) => ssbKeys.createSync(file),
  signObj: () => {
    const input = readJson()
    return ssbKeys.signObj(input.keys, input.hmacKey || null, input.obj)
  },
  verifyObj: () => {
    const input = readJson()
    return { valid: ssbKeys.verifyObj(input.keys, input.hmacKey || null, input.obj) }
  }
}

const [command, arg] = process.argv.slice(2)
if (!Object.prototype.hasOwnProperty.call(COMMANDS, command)) {
  die('keys.js: unknown subcommand ' + JSON.stringify(command) +
      '; expected one of ' + Object.keys(COMMANDS).join(', '))
}
if ((command === 'loadSecret' || command === 'create') && !arg) {
  die('keys.js ' + command + ': needs the path of a secret file')
}
writeJson(COMMANDS[command](arg))
