// Validate message values with ssb-validate 4, the way ssb-db feeds them in.
//
// Input (stdin): JSONL, one message *value* per line, in the order to append.
// Usage: node validate.js [--hmac-key B64] [--bench]
//
// Default output: one JSON line per input line,
//   {"valid": bool, "id": "%...sha256" | null, "error": "text" | null}
// `id` is ssb-validate's id of the parsed value, valid or not (ssb-validation-dataset
// records ids for invalid messages too); null only when the line is not JSON.
//
// One state is threaded through all messages (ssb-validate keys it by author), so
// each feed is checked in input order, and a rejected message leaves the state as it
// was (appendKVT throws before it mutates anything), exactly as in ssb-db.
//
// --independent: check every line from a fresh state, as separate one-message feeds
// (for conformance vectors such as ssb-validation-dataset, whose cases are unrelated).
//
// --bench: validate every message, timing the validation loop in CPU seconds; run
// it 3 times from a fresh state and print {"messages": N, "valid": V, "seconds": median}.
'use strict'

const V = require('ssb-validate')
const { readStdin, writeJson, die } = require('./io')

const BENCH_RUNS = 3

function parseArgs (argv) {
  const opts = { hmacKey: null, bench: false, independent: false }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--bench') opts.bench = true
    else if (argv[i] === '--independent') opts.independent = true
    else if (argv[i] === '--hmac-key' && i + 1 < argv.length) opts.hmacKey = argv[++i]
    else die('validate.js: unknown argument ' + JSON.stringify(argv[i]))
  }
  return opts
}

// Parse each non-blank line; a line that is not JSON becomes {parseError}.
function parseLines (text) {
  return text.split('\n').filter(line => line.trim() !== '').map(line => {
    try {
      return { msg: JSON.parse(line), line }
    } catch (err) {
      return { parseError: 'invalid JSON: ' + err.message }
    }
  })
}

// ssb-validate's id hashes JSON.stringify(msg, null, 2), so nearly any JSON value has
// one (null gives the dataset's odd "NaN..." id); keep only string results.
function idOf (msg) {
  try {
    const id = V.id(msg)
    return typeof id === 'string' ? id : null
  } catch (err) {
    return null
  }
}

// Append one message; returns the new state and the verdict for this message.
function step (state, hmacKey, msg) {
  const id = idOf(msg)
  try {
    state = V.append(state, hmacKey, msg)
    state.queue = [] // ssb-db drains the queue into the log after each append
    return { state, verdict: { valid: true, id, error: null } }
  } catch (err) {
    return { state, verdict: { valid: false, id, error: err.message || String(err) } }
  }
}

// Verdicts for all lines, written at once (one write is much faster than 20,000).
function report (entries, hmacKey, independent) {
  let state = V.initial()
  const lines = entries.map(entry => {
    if (entry.parseError) return { valid: false, id: null, error: entry.parseError }
    if (independent) state = V.initial()
    const out = step(state, hmacKey, entry.msg)
    state = out.state
    return out.verdict
  })
  process.stdout.write(lines.map(v => JSON.stringify(v) + '\n').join(''))
}

// One timed pass; `decode` turns an entry into a message value (already parsed, or JSON.parse of its line).
// Returns [cpu seconds (user + system of this process), number valid].
function timedPass (entries, hmacKey, decode) {
  let state = V.initial()
  let valid = 0
  const start = process.cpuUsage()
  for (const entry of entries) {
    try {
      state = V.append(state, hmacKey, decode(entry))
      state.queue = []
      valid++
    } catch (err) {}
  }
  const used = process.cpuUsage(start)
  return [(used.user + used.system) / 1e6, valid]
}

function median (decode, entries, hmacKey) {
  const runs = []
  let valid = 0
  for (let i = 0; i < BENCH_RUNS; i++) {
    const [seconds, v] = timedPass(entries, hmacKey, decode)
    runs.push(seconds)
    valid = v
  }
  runs.sort((a, b) => a - b)
  return [runs[Math.floor(BENCH_RUNS / 2)], valid]
}

// --bench: CPU seconds of ssb-validate's append over every message, from parsed values ("seconds") and from the
// JSON lines themselves, JSON.parse included ("seconds_with_parse": the same input ssblab's validator starts from).
function bench (entries, hmacKey) {
  const good = entries.filter(e => !e.parseError)
  const [seconds, valid] = median(e => e.msg, good, hmacKey)
  const [withParse] = median(e => JSON.parse(e.line), good, hmacKey)
  writeJson({ messages: good.length, valid, seconds, seconds_with_parse: withParse })
}

const opts = parseArgs(process.argv.slice(2))
const entries = parseLines(readStdin())
if (opts.bench) bench(entries, opts.hmacKey)
else report(entries, opts.hmacKey, opts.independent)
