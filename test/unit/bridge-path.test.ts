import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bridgePathFrom } from '../../extension/src/plan/bridgePath';

describe('bridgePathFrom: which path the shims take, from the probe in the container', () => {
  const runDir = '/tmp/toolbox-0/0123abcd';
  it('is the unix socket when it answers, whatever TCP does', () => {
    assert.equal(bridgePathFrom('unix=400 tcp=000 port=17654\n', runDir).mode, 'unix');
    assert.equal(bridgePathFrom('unix=200 tcp=200 port=17654', runDir).mode, 'unix');
  });
  it('is TCP when there is no socket and host.docker.internal answers, and says when the setting made it so', () => {
    const forced = bridgePathFrom('unix=none tcp=400 port=17654', `${runDir}/tcp-only`);
    assert.equal(forced.mode, 'tcp');
    assert.match(forced.why, /toolbox\.transport\.bridge set to tcp/);
    assert.match(forced.why, /host\.docker\.internal:17654 answers/);
    const desktop = bridgePathFrom('unix=none tcp=400 port=17654', runDir);
    assert.match(desktop.why, /has no bridge socket \(its run dir is not mounted/);
  });
  it('is TCP when the socket is there but cannot be connected (file sharing)', () => {
    const r = bridgePathFrom('unix=000 tcp=404 port=40000', runDir);
    assert.equal(r.mode, 'tcp');
    assert.match(r.why, /does not answer \(a file sharing/);
  });
  it('is none when neither answers, and says why', () => {
    const r = bridgePathFrom('unix=none tcp=000 port=17654', `${runDir}/tcp-only`);
    assert.equal(r.mode, 'none');
    assert.match(r.why, /nothing answers on host\.docker\.internal:17654/);
    assert.match(bridgePathFrom('unix=none tcp=none port=', runDir).why, /no bridge port file/);
  });
  it('reads only the one line the probe prints: anything else is no answer', () => {
    for (const hostile of ['', 'unix=200', 'unix=200 tcp=200 port=1; rm -rf /', 'x'.repeat(10_000), 'unix=2000 tcp=none port=']) {
      assert.equal(bridgePathFrom(hostile, runDir).mode, 'none', hostile.slice(0, 40));
    }
    // A long prefix pushes the line past what is read.
    assert.equal(bridgePathFrom(`${'y'.repeat(300)}\nunix=200 tcp=none port=1`, runDir).mode, 'none');
  });
});
