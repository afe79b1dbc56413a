#!/usr/bin/env node
// T6's verify command: the README must have a "Notes" section.
'use strict';
const fs = require('node:fs');
const readme = fs.readFileSync('README.md', 'utf8');
if (!/^## Notes\b/m.test(readme)) {
  console.error('README.md has no "## Notes" section yet.');
  process.exit(1);
}
console.log('README.md describes notes.');
