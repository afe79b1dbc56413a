import assert from 'node:assert/strict';
import { hasResultBlock } from '../../../../../src/engine/domain/result/parseResult';

describe('hasResultBlock: a quick look for a result block before parsing', () => {
  it('finds a baton-result or sdd-result fence, with backticks or tildes, indented up to three spaces', () => {
    for (const text of ['```baton-result\n', 'text\n   ~~~~ sdd-result\n', '````baton-result x\n']) {
      assert.equal(hasResultBlock(text), true, JSON.stringify(text));
    }
  });

  it('not in prose, a deeper indent (code), another info string, or a longer word', () => {
    for (const text of ['the baton-result block', '    ```baton-result\n', '```yaml\n', '```baton-results\n']) {
      assert.equal(hasResultBlock(text), false, JSON.stringify(text));
    }
  });
});
