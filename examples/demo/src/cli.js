#!/usr/bin/env node
'use strict';
// jot: the tiny CLI the demo plan extends (examples/demo/plan.md).

const [command = 'help'] = process.argv.slice(2);

if (command === 'help' || command === '--help' || command === '-h') {
  console.log('usage: jot <command>\n\ncommands:\n  help    show this help');
  process.exit(0);
}

console.error(`jot: unknown command "${command}" (try jot --help)`);
process.exit(2);
