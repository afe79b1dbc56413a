import assert from 'node:assert/strict';
import { cliShim } from '../../../../src/extension/model/cliShim';

describe('cliShim: the baton script of the integrated terminals', () => {
  it('runs the given CLI with the given Node, passing every argument on as it is (POSIX)', () => {
    const shim = cliShim("/opt/it's here/node", '/ext/dist/cli.js', 'linux');
    assert.equal(shim.name, 'baton');
    assert.match(shim.text, /^#!\/bin\/sh\n/);
    assert.match(
      shim.text,
      /\nELECTRON_RUN_AS_NODE=1 exec '\/opt\/it'\\''s here\/node' '\/ext\/dist\/cli\.js' "\$@"\n$/,
    );
  });

  it('is a baton.cmd on Windows', () => {
    const shim = cliShim('C:\\Code\\Code.exe', 'C:\\ext\\dist\\cli.js', 'win32');
    assert.equal(shim.name, 'baton.cmd');
    assert.match(shim.text, /"C:\\Code\\Code\.exe" "C:\\ext\\dist\\cli\.js" %\*\r\n$/);
  });
});
