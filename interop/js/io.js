// Shared stdin/stdout helpers for the reference scripts.
// Every script reads its whole input from stdin and writes JSON to stdout, so the
// Python tests (tests/jsref.py) can drive them as plain subprocesses.
'use strict'

const fs = require('fs')

// Read all of stdin as a UTF-8 string (fd 0 works for pipes and files alike).
function readStdin () {
  return fs.readFileSync(0, 'utf8')
}

// Read stdin as one JSON document.
function readJson () {
  return JSON.parse(readStdin())
}

// Write one JSON value followed by a newline.
function writeJson (value) {
  process.stdout.write(JSON.stringify(value) + '\n')
}

// Print a message to stderr and exit non-zero: the Python side raises with it.
function die (message) {
  process.stderr.write(message + '\n')
  process.exit(2)
}

module.exports = { readStdin, readJson, writeJson, die }
