import assert from 'node:assert/strict';
import { displayUrl, redactCredentials, urlHasPassword } from '../../../src/engine/domain/credentials';

describe('store credentials are never shown', () => {
  it('hides the password of a PostgreSQL URL, wherever it is in a text', () => {
    const text = 'Cannot connect to postgres://baton:s3cret@db.example:5432/team (ECONNREFUSED)';
    assert.equal(redactCredentials(text), 'Cannot connect to postgres://baton:***@db.example:5432/team (ECONNREFUSED)');
    assert.equal(displayUrl('postgresql://u:pw@h/db?sslmode=require'), 'postgresql://u:***@h/db?sslmode=require');
    assert.equal(displayUrl('postgres://u@h/db'), 'postgres://u@h/db');
  });

  it('hides a password that holds @, : or percent-encoded characters, encoded and decoded, given the URL', () => {
    const url = 'postgres://baton:p%40ss:w@rd@db:5432/team';
    const password = 'p%40ss:w@rd';
    const decoded = 'p@ss:w@rd';
    const text = `url ${url}; said ${password}; decoded ${decoded}; in a sentence: wrong password ${decoded}.`;
    const shown = redactCredentials(text, [url]);
    assert.ok(!shown.includes(password) && !shown.includes(decoded) && !shown.includes('w@rd'), shown);
    assert.match(shown, /postgres:\/\/baton:\*\*\*@db:5432\/team/);
  });

  it('hides password= parameters and bare secrets such as PGPASSWORD', () => {
    assert.equal(
      redactCredentials('postgres://h/db?user=u&password=abc&sslmode=require'),
      'postgres://h/db?user=u&password=***&sslmode=require',
    );
    assert.equal(redactCredentials('auth failed for hunter2', ['hunter2']), 'auth failed for ***');
  });

  it('tells a URL with a password from one without', () => {
    assert.equal(urlHasPassword('postgres://u:pw@h/db'), true);
    assert.equal(urlHasPassword('postgres://u@h/db?password=x'), true);
    assert.equal(urlHasPassword('postgres://u@h/db'), false);
    assert.equal(urlHasPassword('postgres://h/db'), false);
  });
});
