import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/**
 * What `vsce package` puts in the VSIX: .vscodeignore's rules over the repository's paths, the
 * last rule that matches deciding (a `!` rule keeps the path). Its rules are plain globs: `*`
 * within a folder, `**` across folders.
 */
function shippedBy(rules: readonly string[]): (path: string) => boolean {
  const compiled = rules.map((rule) => {
    const keep = rule.startsWith('!');
    const glob = keep ? rule.slice(1) : rule;
    const source = glob
      .split(/(\*\*|\*)/)
      .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return { keep, pattern: new RegExp(`^${source}$`) };
  });
  return (path) => compiled.reduce((shipped, rule) => (rule.pattern.test(path) ? rule.keep : shipped), true);
}

/** The relative links and images of a markdown file, as paths from the repository's root (anchors dropped). */
function relativeLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!.split('#')[0]!);
  return targets
    .filter((target) => target && !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => normalize(join(dirname(file), decodeURIComponent(target))));
}

/**
 * Open Documentation shows the installed extension's README in VS Code's Markdown preview (issue 24,
 * fix 6): its pictures load and its links open only if the VSIX ships what they point to.
 */
describe('the VSIX ships what its documentation links to', () => {
  const rules = readFileSync(join(ROOT, '.vscodeignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const shipped = shippedBy(rules);

  it('reads .vscodeignore as vsce does: the last matching rule decides', () => {
    assert.equal(shipped('src/engine/engine.ts'), false);
    assert.equal(shipped('dist/extension.js'), true);
    assert.equal(shipped('dist/extension.js.map'), false);
    assert.equal(shipped('README.md'), true);
  });

  it('every picture and link of the README and of the docs it ships is in the VSIX, and exists', () => {
    const docs = ['README.md'];
    const missing: string[] = [];
    for (let i = 0; i < docs.length; i++) {
      const file = docs[i]!;
      for (const target of relativeLinks(file)) {
        if (!shipped(target)) missing.push(`${file} → ${target} (not shipped)`);
        else if (!existsSync(join(ROOT, target))) missing.push(`${file} → ${target} (no such file)`);
        else if (target.endsWith('.md') && !docs.includes(target)) docs.push(target);
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(docs.length > 5, `the README links to the docs: ${docs.join(', ')}`);
  });
});
