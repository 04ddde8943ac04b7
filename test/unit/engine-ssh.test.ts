/**
 * The pure half of ssh:// endpoints (host/ssh.ts): known_hosts matching as ssh does it (plain,
 * [host]:port, patterns with negation, hashed names, @revoked, @cert-authority ignored), the host
 * key verdict, the algorithm preference, ~/.ssh/config for a host alias, and the messages.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  checkHostKey,
  DEFAULT_IDENTITY_FILES,
  expandIdentityFile,
  hostFieldMatches,
  hostKeyMessage,
  keyTypeOf,
  parseKnownHosts,
  preferredHostKeyAlgorithms,
  sshConfigFor,
  sshTarget,
} from '../../extension/src/host/ssh';

/** An SSH public key blob of the type, with random key material. */
function blob(type: string): Buffer {
  const t = Buffer.from(type, 'latin1');
  const body = randomBytes(32);
  const out = Buffer.alloc(4 + t.length + 4 + body.length);
  out.writeUInt32BE(t.length, 0);
  t.copy(out, 4);
  out.writeUInt32BE(body.length, 4 + t.length);
  body.copy(out, 8 + t.length);
  return out;
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

describe('known_hosts', () => {
  const ed = blob('ssh-ed25519');
  const rsa = blob('ssh-rsa');
  const other = blob('ssh-ed25519');

  it('parses lines, skipping comments, blanks and malformed ones, and keeps markers and line numbers', () => {
    const text = `# comment\n\nexample.com ssh-ed25519 ${ed.toString('base64')}\nbroken-line\n@revoked * ssh-rsa ${rsa.toString('base64')}\n`;
    const entries = parseKnownHosts(text, '/h/.ssh/known_hosts');
    assert.equal(entries.length, 2);
    assert.deepEqual(entries[0], {
      file: '/h/.ssh/known_hosts',
      line: 3,
      hosts: 'example.com',
      keyType: 'ssh-ed25519',
      key: ed.toString('base64'),
    });
    assert.equal(entries[1]!.marker, 'revoked');
    assert.equal(entries[1]!.line, 5);
  });

  it('matches hosts as ssh writes them: port 22 bare, other ports as [host]:port, patterns, negation, hashed', () => {
    assert.ok(hostFieldMatches('example.com,10.0.0.1', 'example.com', 22));
    assert.ok(hostFieldMatches('EXAMPLE.com', 'example.com', 22), 'case-insensitive');
    assert.ok(!hostFieldMatches('example.com', 'example.com', 2222), 'another port is another entry');
    assert.ok(hostFieldMatches('[example.com]:2222', 'example.com', 2222));
    assert.ok(hostFieldMatches('*.example.com', 'build.example.com', 22));
    assert.ok(!hostFieldMatches('*.example.com,!build.example.com', 'build.example.com', 22), 'negation wins');
    assert.ok(hostFieldMatches('host?', 'host1', 22));
    assert.ok(!hostFieldMatches('evil.com', 'example.com', 22));
    assert.ok(!hostFieldMatches('example.com.evil', 'example.com', 22), 'no prefix match');
    assert.ok(hostFieldMatches(hashed('example.com'), 'example.com', 22));
    assert.ok(hostFieldMatches(hashed('[127.0.0.1]:2222'), '127.0.0.1', 2222));
    assert.ok(!hostFieldMatches(hashed('example.com'), 'example.org', 22));
  });

  it('judges a key: known, unknown (no key of that type for the host), changed, revoked', () => {
    const entries = parseKnownHosts(
      `example.com ssh-ed25519 ${ed.toString('base64')}\n@cert-authority *.example.com ssh-ed25519 ${other.toString('base64')}\n`,
      'kh',
    );
    assert.equal(keyTypeOf(ed), 'ssh-ed25519');
    assert.equal(checkHostKey(entries, 'example.com', 22, ed).kind, 'known');
    assert.equal(checkHostKey(entries, 'example.com', 22, other).kind, 'changed');
    assert.equal(checkHostKey(entries, 'example.com', 22, rsa).kind, 'unknown', 'a key of another type is unknown, not changed');
    assert.equal(checkHostKey(entries, 'example.org', 22, ed).kind, 'unknown');
    assert.equal(checkHostKey(entries, 'a.example.com', 22, other).kind, 'unknown', '@cert-authority does not vouch for a plain key');
    const revoked = parseKnownHosts(
      `example.com ssh-ed25519 ${ed.toString('base64')}\n@revoked * ssh-ed25519 ${ed.toString('base64')}\n`,
      'kh',
    );
    assert.equal(checkHostKey(revoked, 'example.com', 22, ed).kind, 'revoked');
  });

  it('offers the key types known for the host first (rsa as its SHA-2 signatures too)', () => {
    const entries = parseKnownHosts(`[h]:2222 ssh-rsa ${rsa.toString('base64')}\nh ssh-ed25519 ${ed.toString('base64')}\n`, 'kh');
    assert.deepEqual(preferredHostKeyAlgorithms(entries, 'h', 2222), ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']);
    assert.deepEqual(preferredHostKeyAlgorithms(entries, 'h', 22), ['ssh-ed25519']);
    assert.deepEqual(preferredHostKeyAlgorithms(entries, 'x', 22), []);
  });
});

describe('~/.ssh/config for a host alias', () => {
  const config = [
    'Host build',
    '  HostName build.internal.example.com',
    '  User deploy',
    '  Port 2200',
    '  IdentityFile ~/.ssh/build_key',
    'Host build other',
    '  User ignored-first-wins',
    '  IdentityFile %d/.ssh/second',
    'Match host build',
    '  User from-match',
    'Host *.example.com !secret.example.com',
    '  Port=2022',
    'Host *',
    '  IdentityFile ~/.ssh/id_%u',
  ].join('\n');

  it('applies the blocks whose Host patterns match, first value wins, IdentityFile accumulates; Match is not followed', () => {
    assert.deepEqual(sshConfigFor(config, 'build'), {
      hostName: 'build.internal.example.com',
      user: 'deploy',
      port: 2200,
      identityFiles: ['~/.ssh/build_key', '%d/.ssh/second', '~/.ssh/id_%u'],
    });
    assert.deepEqual(sshConfigFor(config, 'a.example.com'), { port: 2022, identityFiles: ['~/.ssh/id_%u'] });
    assert.deepEqual(sshConfigFor(config, 'secret.example.com'), { identityFiles: ['~/.ssh/id_%u'] });
    assert.deepEqual(sshConfigFor('', 'x'), { identityFiles: [] });
  });

  it('expands ~ and the tokens it knows, and drops a path with others', () => {
    const ctx = { home: '/home/me', localUser: 'me', host: 'h' };
    assert.equal(expandIdentityFile('~/.ssh/id_%u', ctx), '/home/me/.ssh/id_me');
    assert.equal(expandIdentityFile('%d/k_%h', ctx), '/home/me/k_h');
    assert.equal(expandIdentityFile('.ssh/rel', ctx), '/home/me/.ssh/rel');
    assert.equal(expandIdentityFile('~/.ssh/%C', ctx), undefined);
  });

  it('combines with the endpoint: its user and port win, then the config, then the defaults', () => {
    const ctx = { home: '/home/me', localUser: 'me' };
    assert.deepEqual(sshTarget({ host: 'build' }, sshConfigFor(config, 'build'), ctx), {
      alias: 'build',
      host: 'build.internal.example.com',
      port: 2200,
      username: 'deploy',
      identityFiles: ['/home/me/.ssh/build_key', '/home/me/.ssh/second', '/home/me/.ssh/id_me'],
    });
    assert.deepEqual(sshTarget({ host: 'build', port: 22, username: 'root' }, sshConfigFor(config, 'build'), ctx).username, 'root');
    const plain = sshTarget({ host: 'server' }, { identityFiles: [] }, ctx);
    assert.deepEqual(plain, {
      alias: 'server',
      host: 'server',
      port: 22,
      username: 'me',
      identityFiles: DEFAULT_IDENTITY_FILES.map((f) => `/home/me/.ssh/${f}`),
    });
  });
});

describe('host key refusals', () => {
  const target = { alias: 'box', host: 'box.example.com', port: 2222, username: 'me', identityFiles: [] };
  const entry = { file: '/home/me/.ssh/known_hosts', line: 7, hosts: '[box.example.com]:2222', keyType: 'ssh-ed25519', key: 'AAAA' };

  it('says how to add an unknown host, with the command to run', () => {
    assert.equal(
      hostKeyMessage({ kind: 'unknown' }, target, '/home/me').message,
      'the SSH host box.example.com port 2222 is not in ~/.ssh/known_hosts, so its identity cannot be checked. ' +
        'Connect once in a terminal with ssh -p 2222 me@box, check the fingerprint and accept it, then try again.',
    );
  });

  it('names the file and line of a changed key and how to replace it', () => {
    const m = hostKeyMessage({ kind: 'changed', entry }, target, '/home/me').message;
    assert.match(
      m,
      /is not the one recorded in ~\/\.ssh\/known_hosts line 7: the host was reinstalled, or someone is intercepting the connection/,
    );
    assert.match(m, /ssh-keygen -R \[box\.example\.com\]:2222, then connect once with ssh -p 2222 me@box/);
  });

  it('refuses a revoked key', () => {
    assert.match(
      hostKeyMessage({ kind: 'revoked', entry }, target, '/home/me').message,
      /marked as revoked in ~\/\.ssh\/known_hosts line 7/,
    );
  });
});
