// ssb-sort 1.1 on threads: the causal order and the heads that the JS clients compute.
//
// Usage: node sort.js
//   stdin   a JSON list of threads; each thread is a list of messages {key, value, timestamp?}
//           (value: a message value; timestamp: the receive time, which ssb-sort compares first)
//   stdout  a JSON list, per thread {"order": [keys after sort()], "heads": [keys from heads()]}
// ssb-sort sorts the array in place with Array.prototype.sort; the input order is kept as given, since with
// timestamps that contradict the links its comparator is not a total order and the result depends on it.
'use strict'

const sort = require('ssb-sort')
const { readJson, writeJson, die } = require('./io')

function main () {
  const threads = readJson()
  if (!Array.isArray(threads)) die('sort.js: stdin must be a JSON list of threads')
  writeJson(threads.map((thread) => {
    const heads = sort.heads(thread)
    const order = sort(thread.slice()).map((msg) => msg.key)
    return { order, heads }
  }))
}

main()
