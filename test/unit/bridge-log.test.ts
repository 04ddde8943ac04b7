import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeBridgeEvent } from '../../extension/src/bridge/log';

describe('bridge log lines', () => {
  it('name the route, status, duration, transport and workspace of a request', () => {
    assert.deepEqual(
      describeBridgeEvent({
        kind: 'request',
        transport: 'unix',
        route: '/edit',
        status: 204,
        durationMs: 2.6,
        workspace: 'toolbox-app-1a2b3c4d',
      }),
      { level: 'info', text: 'bridge: /edit 204 in 3 ms (unix, toolbox-app-1a2b3c4d)' },
    );
  });

  it('log refusals as warnings with their reason', () => {
    assert.deepEqual(
      describeBridgeEvent({
        kind: 'request',
        transport: 'tcp',
        route: '/open',
        status: 400,
        durationMs: 1,
        detail: 'the url scheme "file" is not allowed',
      }),
      { level: 'warn', text: 'bridge: /open 400 in 1 ms (tcp) — the url scheme "file" is not allowed' },
    );
  });

  it('pass server notices through at their own level', () => {
    assert.deepEqual(describeBridgeEvent({ kind: 'warn', message: 'reusing the live bridge' }), {
      level: 'warn',
      text: 'bridge: reusing the live bridge',
    });
  });
});
