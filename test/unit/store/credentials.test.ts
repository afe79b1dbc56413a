import assert from 'node:assert/strict';
import {
  credentialVariables,
  displayUrl,
  redactCredentials,
  urlHasPassword,
} from '../../../src/engine/domain/credentials';
import { withLibpqSslModes } from '../../../src/engine/store/pgStore';

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

describe('TLS parameters of a store URL', () => {
  it('are read as libpq reads them: uselibpqcompat is added to a URL with an sslmode, unless it says so itself', () => {
    assert.equal(
      withLibpqSslModes('postgres://u:pw@h/db?sslmode=require'),
      'postgres://u:pw@h/db?sslmode=require&uselibpqcompat=true',
    );
    assert.equal(
      withLibpqSslModes('postgres://u@h/db?sslrootcert=/ca.pem&sslmode=verify-full#x'),
      'postgres://u@h/db?sslrootcert=/ca.pem&sslmode=verify-full&uselibpqcompat=true#x',
    );
    assert.equal(withLibpqSslModes('postgres://u@h/db'), 'postgres://u@h/db');
    assert.equal(withLibpqSslModes('postgres://u@h/db?application_name=x'), 'postgres://u@h/db?application_name=x');
    const own = 'postgres://u@h/db?sslmode=require&uselibpqcompat=false';
    assert.equal(withLibpqSslModes(own), own);
  });
});

describe('credentials a worker does not inherit', () => {
  it('are the store URL always, and PGPASSWORD too with a PostgreSQL store', () => {
    assert.deepEqual(credentialVariables({ kind: 'file' }), ['BATON_STORE_URL']);
    assert.deepEqual(credentialVariables({ kind: 'postgres' }), ['BATON_STORE_URL', 'PGPASSWORD']);
  });
});
