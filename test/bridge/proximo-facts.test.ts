import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findProximoBinary, proximoChildPath } from '../../extension/src/proximo/binary';
import { detectProximo, routedHostsFromStatus } from '../../extension/src/proximo/facts';
import { installFakeProximo } from './support';

describe('proximo host facts', () => {
  let root: string;
  let home: string;
  let bin: string;
  let fake: ReturnType<typeof installFakeProximo>;
  let ca: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'tbb-facts-'));
    home = join(root, 'home');
    bin = join(root, 'bin');
    mkdirSync(home);
    fake = installFakeProximo(bin);
    ca = join(root, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}) => ({ PATH: `${bin}${delimiter}${process.env.PATH}`, ...extra });

  it('finds the binary on PATH first, then in the fallback dirs, and nowhere else', () => {
    assert.equal(findProximoBinary({ pathEnv: env().PATH, home, fallbackDirs: [] }), fake.binary);
    assert.equal(findProximoBinary({ pathEnv: '/nonexistent', home, fallbackDirs: [bin] }), fake.binary);
    assert.equal(findProximoBinary({ pathEnv: '/nonexistent', home, fallbackDirs: [] }), undefined);
    const path = proximoChildPath(fake.binary, '/usr/bin', home).split(delimiter);
    assert.deepEqual(path.slice(0, 2), [bin, '/usr/bin']);
    assert.ok(path.includes(join(home, 'go', 'bin')) && path.includes(join(home, '.orbstack', 'bin')));
  });

  it('is on with the CA from `proximo config ca-path` and the hosts from `proximo status --json`', async () => {
    const facts = await detectProximo({ home, env: env({ FAKE_PROXIMO_CA_PATH: ca }), fallbackDirs: [] });
    assert.deepEqual(facts, { caPath: ca, hosts: ['web.proj.test', 'web.test'] });
    const argvs = fake.calls().map((c) => c.argv);
    assert.deepEqual(argvs.slice(-2), [
      ['config', 'ca-path'],
      ['status', '--json'],
    ]);
  });

  it('is off when the CA the binary names does not exist', async () => {
    assert.equal(await detectProximo({ home, env: env({ FAKE_PROXIMO_CA_PATH: join(root, 'nope.pem') }), fallbackDirs: [] }), undefined);
  });

  it('uses ~/.proximo/tls/ca.pem when there is no binary', async () => {
    const otherHome = join(root, 'home2');
    mkdirSync(join(otherHome, '.proximo', 'tls'), { recursive: true });
    writeFileSync(join(otherHome, '.proximo', 'tls', 'ca.pem'), 'x');
    const facts = await detectProximo({ home: otherHome, env: { PATH: '/nonexistent' }, fallbackDirs: [] });
    assert.deepEqual(facts, { caPath: join(otherHome, '.proximo', 'tls', 'ca.pem'), hosts: [] });
  });

  it('keeps proximo on with no hosts and logs a line when the status is unreadable or fails', async () => {
    const variants: Array<Record<string, string>> = [
      { FAKE_PROXIMO_STATUS_JSON: 'not json' },
      { FAKE_PROXIMO_STATUS_JSON: '{"routes": 3}' },
      { FAKE_PROXIMO_EXIT: '1' },
    ];
    for (const extra of variants) {
      const lines: string[] = [];
      const facts = await detectProximo({
        home,
        env: env({ FAKE_PROXIMO_CA_PATH: ca, ...extra }),
        fallbackDirs: [],
        log: (line) => lines.push(line),
      });
      if (extra.FAKE_PROXIMO_EXIT) {
        // A failing binary also fails `config ca-path`: the fallback CA does not exist here.
        assert.equal(facts, undefined);
        assert.match(lines.join('\n'), /config ca-path` failed/);
      } else {
        assert.deepEqual(facts, { caPath: ca, hosts: [] });
        assert.match(lines.join('\n'), /Could not read proximo's routed hosts/);
      }
    }
  });

  it('counts only names a route answers on, dropping warning rows and names unfit for ExtraHosts', () => {
    const doc = {
      routes: [
        { container: 'a', scheme: 'https', bare: 'App.test', qualified: 'app.proj.test', future_field: 1 },
        { container: 'b', claimed: 'starting.test', warning: 'starting' },
        { container: 'c', qualified: 'loser.proj.test', collision: { host: 'app.test', served_by: 'a' } },
        { container: 'd', bare: 'bad host:1.2.3.4', peer: { bare: 'peer.test' } },
      ],
    };
    assert.deepEqual(routedHostsFromStatus(JSON.stringify(doc)), ['app.proj.test', 'app.test', 'loser.proj.test', 'peer.test']);
  });
});
