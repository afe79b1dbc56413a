import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG, parseConfig } from '../../../src/engine/domain/config';
import { renderConfigSchema } from '../../../scripts/writeConfigSchema';

describe('config (.baton/config.json)', () => {
  it('fills every default from an empty object', () => {
    const { config, issues } = parseConfig('{}');
    assert.deepEqual(issues, []);
    assert.deepEqual(config, DEFAULT_CONFIG);
    assert.deepEqual(config.riskTags, ['database', 'security', 'migration', 'production', 'secrets']);
  });

  it('accepts comments and trailing commas', () => {
    const { config, issues } = parseConfig('{\n  // shorter leases for this repo\n  "leaseSeconds": 30,\n}');
    assert.deepEqual(issues, []);
    assert.equal(config.leaseSeconds, 30);
  });

  it('reports an out-of-range value at its position, with what the field means', () => {
    const { issues } = parseConfig('{\n  "leaseSeconds": 1\n}');
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.code, 'config.invalid-field');
    assert.equal(issues[0]!.field, 'leaseSeconds');
    assert.deepEqual(issues[0]!.range, { start: { line: 2, column: 19 }, end: { line: 2, column: 20 } });
    assert.match(issues[0]!.recommendation, /lease/);
  });

  it('reports a wrong type inside a list at the element', () => {
    const { issues } = parseConfig('{"riskTags": ["database", 7]}');
    assert.equal(issues[0]!.field, 'riskTags.1');
    assert.deepEqual(issues[0]!.range?.start, { line: 1, column: 27 });
  });

  it('warns about an unknown setting and keeps the rest', () => {
    const { config, issues } = parseConfig('{"maxAttempts": 3, "colour": "red"}');
    assert.equal(config.maxAttempts, 3);
    assert.deepEqual(
      issues.map((i) => [i.code, i.severity, i.field]),
      [['config.unknown-field', 'warning', 'colour']],
    );
  });

  it('reports JSON syntax errors with a position and never throws', () => {
    for (const text of ['', '{', '[1,2]', '{"leaseSeconds": }', 'null', '{"a":1}}']) {
      const { issues } = parseConfig(text);
      assert.ok(issues.length > 0, `issues for ${JSON.stringify(text)}`);
      assert.ok(issues.every((i) => i.severity === 'warning' || i.code.startsWith('config.')));
    }
    assert.ok(parseConfig('{').issues[0]!.range);
  });

  it('publishes a JSON schema that matches the zod schema (run npm run schema after changing it)', () => {
    const published = readFileSync(join(__dirname, '../../../schemas/config.schema.json'), 'utf8');
    assert.equal(published, renderConfigSchema());
  });
});
