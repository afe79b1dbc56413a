import assert from 'node:assert/strict';
import { contentOffsetToDocument, findFencedBlocks } from '../../../src/engine/domain/plan/markdownFences';

describe('findFencedBlocks', () => {
  it('finds a backtick block with its language, content, offsets and lines', () => {
    const text = 'intro\n```baton-task extra words\nid: T1\ntitle: A\n```\nafter\n';
    const [block, ...rest] = findFencedBlocks(text);
    assert.equal(rest.length, 0);
    assert.ok(block);
    assert.equal(block.info, 'baton-task');
    assert.equal(block.infoString, 'baton-task extra words');
    assert.equal(block.fenceChar, '`');
    assert.equal(block.fenceLength, 3);
    assert.equal(block.content, 'id: T1\ntitle: A\n');
    assert.equal(block.closed, true);
    assert.equal(block.openLine, 2);
    assert.equal(block.closeLine, 5);
    assert.equal(block.endLine, 5);
    assert.equal(block.openStart, text.indexOf('```'));
    assert.equal(block.contentStart, text.indexOf('id: T1'));
    assert.equal(block.contentEnd, text.lastIndexOf('```'));
    assert.equal(block.closeStart, text.lastIndexOf('```'));
    assert.equal(block.closeEnd, text.lastIndexOf('```') + 3);
    assert.equal(block.after, text.indexOf('after'));
    assert.equal(text.slice(block.contentStart, block.contentEnd), block.content);
  });

  it('finds tilde fences and lets a backtick line inside a tilde block stay content', () => {
    const text = '~~~~yaml\na: 1\n```\n~~~\nb\n~~~~~\n';
    const blocks = findFencedBlocks(text);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.fenceChar, '~');
    assert.equal(blocks[0]?.info, 'yaml');
    assert.equal(blocks[0]?.content, 'a: 1\n```\n~~~\nb\n');
    assert.equal(blocks[0]?.closeLine, 6);
  });

  it('requires the closing fence to be at least as long as the opening one', () => {
    const blocks = findFencedBlocks('````md\n```\nstill inside\n````\n');
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.content, '```\nstill inside\n');
  });

  it('does not close on a fence line followed by text', () => {
    const blocks = findFencedBlocks('```\n``` not a close\n```\n');
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.content, '``` not a close\n');
    assert.equal(blocks[0]?.closeLine, 3);
  });

  it('ignores fences of fewer than three characters and fences indented four spaces', () => {
    assert.deepEqual(findFencedBlocks('``x``\n~~\n    ```baton-task\n    id: T1\n    ```\n'), []);
  });

  it('rejects a backtick fence whose info string contains a backtick (inline code), but not a tilde fence', () => {
    assert.deepEqual(
      findFencedBlocks('```a`b\ntext\n```\n').map((b) => b.openLine),
      [3],
    );
    assert.equal(findFencedBlocks('~~~a`b\ntext\n~~~\n')[0]?.info, 'a`b');
  });

  it('removes the opening fence indentation from content lines and maps offsets back', () => {
    const text = '  ```baton-task\n  id: T1\n    deeper: x\n ```\n';
    const [block] = findFencedBlocks(text);
    assert.ok(block);
    assert.equal(block.indent, 2);
    assert.equal(block.content, 'id: T1\n  deeper: x\n');
    assert.equal(block.openStart, 2);
    assert.equal(contentOffsetToDocument(block, block.content.indexOf('T1')), text.indexOf('T1'));
    assert.equal(contentOffsetToDocument(block, block.content.indexOf('deeper')), text.indexOf('deeper'));
  });

  it('runs an unclosed block to the end of the document and flags it', () => {
    const text = 'a\n```baton-task\nid: T1\n```python\n';
    const blocks = findFencedBlocks(text);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.closed, false);
    assert.equal(blocks[0]?.content, 'id: T1\n```python\n');
    assert.equal(blocks[0]?.contentEnd, text.length);
    assert.equal(blocks[0]?.endLine, 4);
    assert.equal(blocks[0]?.closeLine, undefined);
  });

  it('handles CRLF line endings: content without \\r, offsets into the original text', () => {
    const text = '```baton-task\r\nid: T1\r\n```\r\nafter';
    const [block] = findFencedBlocks(text);
    assert.ok(block);
    assert.equal(block.content, 'id: T1\n');
    assert.equal(block.closed, true);
    assert.equal(block.openEnd, text.indexOf('\r'));
    assert.equal(contentOffsetToDocument(block, 4), text.indexOf('T1'));
    assert.equal(block.after, text.indexOf('after'));
  });

  it('sees a fence on the first line after a byte order mark', () => {
    const [block] = findFencedBlocks('\uFEFF```baton-task\nid: T1\n```\n');
    assert.equal(block?.info, 'baton-task');
    assert.equal(block?.openStart, 1);
  });

  it('trims only ASCII whitespace from the info string, as CommonMark does', () => {
    assert.deepEqual(
      findFencedBlocks('```\uFEFFbaton-task\n```\n```\u00A0baton-task\n```\n```\tbaton-task\t\n```\n').map(
        (b) => b.info,
      ),
      ['\uFEFFbaton-task', '\u00A0baton-task', 'baton-task'],
    );
  });

  it('returns blocks in document order and an empty content for an empty block', () => {
    const blocks = findFencedBlocks('```one\n```\n\n~~~ two\nx\n~~~');
    assert.deepEqual(
      blocks.map((b) => [b.info, b.content, b.closed]),
      [
        ['one', '', true],
        ['two', 'x\n', true],
      ],
    );
  });

  it('does not see fences inside an HTML comment', () => {
    const text = '<!--\n```baton-task\nid: T0\n```\n-->\n```baton-task\nid: T1\n```\n';
    const blocks = findFencedBlocks(text);
    assert.deepEqual(
      blocks.map((b) => b.content),
      ['id: T1\n'],
    );
  });

  it('gives an empty info for a bare fence and treats the first word as the language', () => {
    const blocks = findFencedBlocks('```\n```\n```  baton-result   {.x}\n```\n');
    assert.deepEqual(
      blocks.map((b) => b.info),
      ['', 'baton-result'],
    );
  });

  it('maps content offsets past the last line to the closing fence', () => {
    const text = '```\nab\n```\n';
    const [block] = findFencedBlocks(text);
    assert.ok(block);
    assert.equal(contentOffsetToDocument(block, 99), text.lastIndexOf('```'));
    assert.equal(contentOffsetToDocument(block, 2), text.indexOf('b') + 1);
  });

  it('never throws and keeps every offset inside the text for odd input', () => {
    for (const text of ['', '```', '~~~\n', '\n\n```\r', '```\n```\n```', '<!--', '\r\n```x\r\n\r\n']) {
      for (const b of findFencedBlocks(text)) {
        for (const offset of [b.openStart, b.openEnd, b.contentStart, b.contentEnd, b.after]) {
          assert.ok(offset >= 0 && offset <= text.length, `${JSON.stringify(text)}: ${offset}`);
        }
      }
    }
  });
});
