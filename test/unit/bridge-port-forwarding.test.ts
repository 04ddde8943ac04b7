/**
 * Issue 26, item 8: the bridge's loopback TCP port must stay out of a remote window's port
 * forwarding (it showed in the Ports view as an auto-forwarded "Code Extension Host" port). The
 * listener takes a port from a fixed range (bridge/hub.ts bridgePortCandidates), and package.json
 * contributes `remote.portsAttributes` with `onAutoForward: ignore` for exactly that range.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { bridgePortCandidates } from '../../extension/src/bridge/hub';
import { BRIDGE_DEFAULT_PORT, BRIDGE_PORT_COUNT } from '../../extension/src/contract/manifest';

const pkg = JSON.parse(readFileSync(resolve(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: { configurationDefaults?: Record<string, Record<string, { onAutoForward?: string; label?: string }>> };
};

describe('the bridge port is kept out of port forwarding (issue 26, item 8)', () => {
  it('tries the range from BRIDGE_DEFAULT_PORT in order, or only the configured port', () => {
    const range = bridgePortCandidates();
    assert.equal(range.length, BRIDGE_PORT_COUNT);
    assert.equal(range[0], BRIDGE_DEFAULT_PORT);
    assert.deepEqual(
      range.map((p, i) => p - i),
      range.map(() => BRIDGE_DEFAULT_PORT),
    );
    assert.deepEqual(bridgePortCandidates(0), [0]);
    assert.deepEqual(bridgePortCandidates(40000), [40000]);
  });

  it('contributes remote.portsAttributes that ignores exactly that range (VS Code ranges are inclusive)', () => {
    const attributes = pkg.contributes.configurationDefaults?.['remote.portsAttributes'] ?? {};
    const range = bridgePortCandidates();
    const key = `${range[0]}-${range[range.length - 1]}`;
    assert.deepEqual(Object.keys(attributes), [key]);
    assert.equal(attributes[key]!.onAutoForward, 'ignore');
    assert.match(attributes[key]!.label ?? '', /^Toolbox bridge/);
  });
});
