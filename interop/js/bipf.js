// bipf 1.9 (the ssb-db2 record encoding): encode each value of a JSON list, as hex.
// Usage: node bipf.js < values.json  ->  ["<hex>", ...]
'use strict'

const bipf = require('bipf')
const { readJson, writeJson } = require('./io')

writeJson(readJson().map((value) => bipf.allocAndEncode(value).toString('hex')))
