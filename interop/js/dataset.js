// Print ssb-validation-dataset's data.json exactly as the npm package ships it.
//
// Usage: node dataset.js            -> the file's bytes on stdout (a JSON array of 126 cases)
//        node dataset.js --path     -> {"path": absolute path of data.json}
// The bytes are copied, not re-serialised, so the Python side sees the same text
// (some cases hold unusual Unicode in their HMAC keys and contents).
'use strict'

const fs = require('fs')
const { writeJson, die } = require('./io')

const file = require.resolve('ssb-validation-dataset/data.json')
const args = process.argv.slice(2)
if (args.length === 0) process.stdout.write(fs.readFileSync(file))
else if (args.length === 1 && args[0] === '--path') writeJson({ path: file })
else die('dataset.js: unknown arguments ' + JSON.stringify(args))
