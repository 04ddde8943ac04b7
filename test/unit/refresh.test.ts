/**
 * The refresh manager with a stand-in backend and node:test's mock clock: a storm of Docker
 * events costs one refresh, a failing engine turns into an error state (and stops watching),
 * and the next refresh recovers from it.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { ConfigService, Snapshot, ViewService } from '../../extension/src/backend/api';
import { objectNames } from '../../extension/src/contract/objects';
import { EVENT_DEBOUNCE_MS, RefreshManager, SAFETY_POLL_MS, type ToolboxState } from '../../extension/src/ui/views/refreshManager';

const names = objectNames('tbxtunit');

function snapshot(containers: Snapshot['containers'] = []): Snapshot {
  return {
    containers,
    anchor: { name: names.anchor, state: 'missing' },
    volume: { name: names.socketVolume, exists: false },
    members: [],
    sessions: [],
  };
}

/** A backend that counts its calls and lets the test fire events and break the engine. */
function standInBackend() {
  const calls = { snapshot: 0, watch: 0, disposeWatch: 0 };
  let failure: Error | undefined;
  let seccomp: 'unconfined' | 'default' = 'unconfined';
  let fireEvent: () => void = () => assert.fail('no event subscription');
  let failEvents: (err: Error) => void = () => assert.fail('no event subscription');
  const backend: ViewService & Pick<ConfigService, 'peerSetting' | 'seccompSetting'> = {
    names,
    peerSetting: async () => ({ on: true, source: { from: 'default' }, projectFileUsable: true }),
    seccompSetting: async () => ({ profile: seccomp }),
    snapshot: async () => {
      calls.snapshot++;
      if (failure) throw failure;
      return snapshot([
        {
          id: 'c1',
          name: 'tbxtunit-app-1234abcd',
          state: 'running',
          kind: 'workspace',
          pidMode: '',
          peer: false,
          mountsSocketVolume: false,
          workspace: '/src/app',
          seccomp: 'unconfined',
        },
      ]);
    },
    proximo: async () => ({ installed: false, hosts: [] }),
    watchEvents: async (onEvent, onError) => {
      calls.watch++;
      fireEvent = onEvent;
      failEvents = onError;
      return { dispose: () => void calls.disposeWatch++ };
    },
  };
  return {
    backend,
    calls,
    breakEngine: (err: Error | undefined) => (failure = err),
    setSeccomp: (profile: 'unconfined' | 'default') => (seccomp = profile),
    event: () => fireEvent(),
    eventsFail: (err: Error) => failEvents(err),
  };
}

const log = { warn: () => undefined, error: () => undefined };

/** Lets the manager's promise chains run between clock ticks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('RefreshManager', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval'] }));
  afterEach(() => mock.timers.reset());

  async function liveManager() {
    const stand = standInBackend();
    const manager = new RefreshManager(stand.backend, () => ['/src/app'], log);
    const states: ToolboxState[] = [];
    manager.onDidChange((s) => states.push(s));
    manager.setViewVisible('toolbox.workspaces', true);
    mock.timers.tick(0);
    await settle();
    return { ...stand, manager, states };
  }

  it('asks Docker nothing while no view is visible and no shell was opened', async () => {
    const stand = standInBackend();
    const manager = new RefreshManager(stand.backend, () => ['/src/app'], log);
    manager.refreshSoon(0);
    mock.timers.tick(SAFETY_POLL_MS * 2);
    await settle();
    assert.deepEqual(stand.calls, { snapshot: 0, watch: 0, disposeWatch: 0 });
    assert.equal(manager.state.loading, true);
    manager.dispose();
  });

  it('refreshes once when a view becomes visible and starts watching events', async () => {
    const { calls, manager, states } = await liveManager();
    assert.equal(calls.snapshot, 1);
    assert.equal(calls.watch, 1);
    assert.equal(states.length, 1);
    assert.equal(states[0]?.loading, false);
    assert.equal(states[0]?.snapshot?.containers.length, 1);
    manager.dispose();
  });

  it('turns a storm of events into one refresh after the debounce', async () => {
    const { calls, manager, event, states } = await liveManager();
    for (let i = 0; i < 200; i++) event();
    mock.timers.tick(EVENT_DEBOUNCE_MS - 1);
    await settle();
    assert.equal(calls.snapshot, 1, 'nothing before the debounce has passed');
    mock.timers.tick(1);
    await settle();
    assert.equal(calls.snapshot, 2, 'one refresh for the whole storm');
    assert.equal(states.length, 2);
    manager.dispose();
  });

  it('finds drift in the snapshot against the folder setting', async () => {
    const { manager } = await liveManager();
    // The folder wants peers (peerWanted → true) and the container is outside the namespace.
    assert.deepEqual(
      manager.state.findings.map((f) => [f.container.name, f.drift]),
      [['tbxtunit-app-1234abcd', 'planned-on-but-outside']],
    );
    manager.dispose();
  });

  it("finds seccomp drift against the folder's toolbox.seccomp read on each refresh, with one snapshot and no other engine call", async () => {
    const { calls, manager, setSeccomp } = await liveManager();
    assert.equal(manager.state.findings[0]?.seccomp, undefined, 'unconfined, as the setting asks');
    setSeccomp('default');
    await manager.refreshNow();
    assert.deepEqual(
      manager.state.findings.map((f) => [f.container.name, f.drift, f.seccomp]),
      [['tbxtunit-app-1234abcd', 'planned-on-but-outside', 'default']],
      'one finding for both drifts',
    );
    assert.equal(calls.snapshot, 2);
    setSeccomp('unconfined');
    await manager.refreshNow();
    assert.equal(manager.state.findings[0]?.seccomp, undefined);
    manager.dispose();
  });

  it('shows an error state when the engine fails, stops watching, and recovers on the next refresh', async () => {
    const { calls, manager, breakEngine, states } = await liveManager();
    breakEngine(new Error('Docker is not reachable'));
    await manager.refreshNow();
    assert.equal(manager.state.error, 'Docker is not reachable');
    assert.equal(manager.state.loading, false);
    assert.equal(manager.state.snapshot?.containers.length, 1, 'the last good snapshot is kept under the error');
    assert.equal(calls.disposeWatch, 1, 'the event stream is dropped with the engine');

    breakEngine(undefined);
    await manager.refreshNow();
    assert.equal(manager.state.error, undefined);
    assert.equal(calls.watch, 2, 'watching starts again after recovery');
    assert.equal(states.at(-1)?.error, undefined);
    manager.dispose();
  });

  it('keeps the proximo lookup when the engine fails: it does not need Docker', async () => {
    const { manager, breakEngine } = await liveManager();
    breakEngine(new Error('Docker is not reachable'));
    await manager.refreshNow();
    assert.deepEqual(manager.state.proximo, { installed: false, hosts: [] });
    manager.dispose();
  });

  it('shows a container as stopping until told otherwise, across refreshes', async () => {
    const { manager, states } = await liveManager();
    manager.setStopping('tbxtunit-app-1234abcd', true);
    assert.equal(states.length, 2, 'marking it re-renders the views at once');
    assert.ok(states.at(-1)?.stopping?.has('tbxtunit-app-1234abcd'));
    await manager.refreshNow();
    assert.ok(manager.state.stopping?.has('tbxtunit-app-1234abcd'), 'a refresh in between keeps the mark');
    manager.setStopping('tbxtunit-app-1234abcd', false);
    assert.equal(manager.state.stopping?.size, 0);
    manager.dispose();
  });

  it('falls back to the safety poll when the event stream fails', async () => {
    const { calls, manager, eventsFail } = await liveManager();
    eventsFail(new Error('stream closed'));
    mock.timers.tick(SAFETY_POLL_MS);
    await settle();
    assert.equal(calls.snapshot, 2, 'the poll refreshed');
    manager.dispose();
  });

  it('stops asking once disposed', async () => {
    const { calls, manager, event } = await liveManager();
    manager.dispose();
    event();
    mock.timers.tick(SAFETY_POLL_MS);
    await settle();
    await manager.refreshNow();
    assert.equal(calls.snapshot, 1);
    assert.equal(calls.disposeWatch, 1);
  });
});
