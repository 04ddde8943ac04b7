import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { armExitGuard, stillRunningMessage } from '../../bench/exitGuard';

const GUARD = join(__dirname, '../../bench/exitGuard.js');

/** A child that prints its line, arms the guard (200 ms) and then runs `rest`. */
function runChild(rest: string) {
  const script = `const { armExitGuard } = require(${JSON.stringify(GUARD)}); console.log('line'); armExitGuard('test child', 200); ${rest}`;
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
}

describe('the benchmark child exit guard', () => {
  it('a child that holds a timer after its last line fails, naming what it holds', () => {
    const r = runChild('setInterval(() => undefined, 30_000);');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, 'line\n');
    assert.match(r.stderr, /^test child has not exited 0\.2 s after its last line\. It still holds .*Timeout/);
  });

  it('a child that holds nothing exits at once, with status 0', () => {
    const started = Date.now();
    const r = runChild('setTimeout(() => undefined, 10).unref();');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.ok(Date.now() - started < 5_000);
  });

  it('fires once after the grace, with the resources of that moment, and its timer is unref-ed', () => {
    let fire: (() => void) | undefined;
    let unrefed = false;
    const failures: string[] = [];
    armExitGuard('child', 10_000, {
      setTimer: (f, ms) => {
        assert.equal(ms, 10_000);
        fire = f;
        return { unref: () => (unrefed = true) };
      },
      resources: () => ['Timeout', 'PipeWrap', 'Timeout', 'PipeWrap', 'TCPSocketWrap'],
      fail: (m) => failures.push(m),
    });
    assert.ok(unrefed);
    assert.deepEqual(failures, []);
    fire!();
    assert.deepEqual(failures, [stillRunningMessage('child', 10_000, ['Timeout', 'PipeWrap', 'Timeout', 'PipeWrap', 'TCPSocketWrap'])]);
    assert.match(failures[0]!, /holds PipeWrap ×2, Timeout ×2, TCPSocketWrap \(/);
  });
});
