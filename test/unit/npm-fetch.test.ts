/**
 * images/runtime/npm-fetch.py, the runtime image's downloader of Node.js and npm (issue #14),
 * against a registry on loopback that this test controls: it resolves a major version to the
 * highest release, checks the tarball against the sha512 integrity of the metadata, and refuses
 * a tampered tarball or one that would write outside its destination, extracting nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/image';

/** A minimal ustar archive of regular files (what npm tarballs hold). */
function tarGz(files: Record<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of Object.entries(files)) {
    const body = Buffer.from(text);
    const h = Buffer.alloc(512);
    h.write(name, 0, 100);
    h.write('0000755\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(body.length.toString(8).padStart(11, '0') + '\0', 124);
    h.write('00000000000\0', 136);
    h.write('        ', 148);
    h.write('0', 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    blocks.push(h, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const sri = (b: Buffer) => `sha512-${createHash('sha512').update(b).digest('base64')}`;

describe('npm-fetch.py', () => {
  let server: Server;
  let registry = '';
  const tarballs: Record<string, Buffer> = {};
  const good = tarGz({ 'package/bin/node': '#!/bin/sh\necho v22.9.0\n', 'package/README.md': 'readme' });
  const evil = tarGz({ 'package/../../escaped': 'owned' });
  const dests: string[] = [];

  before(async () => {
    tarballs['good-22.9.0.tgz'] = good;
    tarballs['evil-1.0.0.tgz'] = evil;
    server = createServer((req, res) => {
      const url = req.url ?? '';
      const tgz = /\/-\/(.+\.tgz)$/.exec(url);
      if (tgz && tarballs[tgz[1]]) {
        res.end(tarballs[tgz[1]]);
        return;
      }
      const dist = (file: string, integrity: string) => ({ tarball: `${registry}/x/-/${file}`, integrity });
      const docs: Record<string, object> = {
        '/node-fake': {
          name: 'node-fake',
          versions: {
            '21.7.0': { dist: dist('good-22.9.0.tgz', sri(good)) },
            '22.1.0': { dist: dist('good-22.9.0.tgz', sri(good)) },
            '22.9.0': { dist: dist('good-22.9.0.tgz', sri(good)) },
            '22.10.0-rc.1': { dist: dist('good-22.9.0.tgz', sri(good)) },
          },
        },
        // The metadata promises one tarball; the server sends another.
        '/tampered': { name: 'tampered', versions: { '1.0.0': { dist: dist('good-22.9.0.tgz', sri(Buffer.from('something else'))) } } },
        '/evil/1.0.0': { name: 'evil', version: '1.0.0', dist: dist('evil-1.0.0.tgz', sri(evil)) },
      };
      const doc = docs[url];
      res.statusCode = doc ? 200 : 404;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(doc ?? { error: 'not found' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    registry = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => {
    server?.close();
    for (const d of dests) rmSync(d, { recursive: true, force: true });
  });

  /** Runs the script asynchronously: the registry above answers from this same process. */
  const fetch = async (...args: string[]) => {
    const dest = mkdtempSync(join(tmpdir(), 'tbxt-npm-fetch-'));
    dests.push(dest);
    const script = join(repoRoot(), 'images', 'runtime', 'npm-fetch.py');
    const child = spawn('python3', [script, args[0], args[1], join(dest, 'out'), ...args.slice(2)], {
      env: { ...process.env, NPM_REGISTRY: registry },
      cwd: dest,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, stdout, stderr, dest: join(dest, 'out'), root: dest };
  };

  it('resolves a major version to its highest release, checks the integrity and extracts only the members asked for', async () => {
    const r = await fetch('node-fake', '22', 'bin/node');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^node-fake@22\.9\.0: .* verified, 1 files/);
    assert.equal(readFileSync(join(r.dest, 'bin', 'node'), 'utf8'), '#!/bin/sh\necho v22.9.0\n');
    assert.equal(existsSync(join(r.dest, 'README.md')), false);
  });

  it('refuses a tarball that does not match the integrity in the metadata, and extracts nothing', async () => {
    const r = await fetch('tampered', '1');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /does not match its integrity hash/);
    assert.equal(existsSync(r.dest), false);
  });

  it('refuses a tarball with a path that climbs out of its destination', async () => {
    const r = await fetch('evil', '1.0.0');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /unsafe path/);
    assert.deepEqual(readdirSync(r.root), []);
  });

  it('says which version is missing', async () => {
    const r = await fetch('node-fake', '23');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /node-fake has no version matching '23'/);
  });
});
