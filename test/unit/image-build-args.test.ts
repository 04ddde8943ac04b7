import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { extraCaCerts, runtimeImageTag } from '../../extension/src/engine/imageBuild';

const pem = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`;

describe('build-time certificate authorities', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tbx-certs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('collects every PEM certificate from *.crt and *.pem files in name order, and skips the rest with a log line', () => {
    writeFileSync(join(dir, 'b.pem'), `${pem('BBB')}\nsome text\n${pem('CCC')}\n`);
    writeFileSync(join(dir, 'a.crt'), `${pem('AAA')}\n`);
    writeFileSync(join(dir, 'notes.txt'), pem('NOT-A-CERT-FILE'));
    writeFileSync(join(dir, 'broken.crt'), 'not a certificate');
    const logged: string[] = [];
    const text = extraCaCerts(dir, (l) => logged.push(l));
    assert.equal(text, [pem('AAA'), pem('BBB'), pem('CCC')].join('\n'));
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /broken\.crt for the image build: it holds no PEM certificate/);
  });

  it('gives nothing for a missing or empty directory', () => {
    assert.equal(extraCaCerts(join(dir, 'missing')), undefined);
    const empty = mkdtempSync(join(tmpdir(), 'tbx-certs-empty-'));
    assert.equal(extraCaCerts(empty), undefined);
    rmSync(empty, { recursive: true });
  });

  it('gives the runtime image another tag when the certificates change, so it is rebuilt', () => {
    const root = resolve(__dirname, '../../..');
    const plain = runtimeImageTag(root, { INSTALL_AGENTS: '1' });
    const withCa = runtimeImageTag(root, { INSTALL_AGENTS: '1', EXTRA_CA_CERTS: pem('AAA') });
    const otherCa = runtimeImageTag(root, { INSTALL_AGENTS: '1', EXTRA_CA_CERTS: pem('BBB') });
    assert.notEqual(plain, withCa);
    assert.notEqual(withCa, otherCa);
    assert.match(withCa, /^toolbox-vscode\/runtime:[0-9a-f]{12}$/);
  });
});
