import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { parseEngineEvent, watchEngineEvents, type EngineEvent, type EngineFeedState } from '../../extension/src/engine/events';
import { TEST_LABEL, TEST_ROOTLESS, testNamespace, type TestNamespace } from '../support/docker';
import { startSecondEngine, type SecondEngine } from '../support/second-engine';
import { ensureTestRuntimeImage } from '../support/image';

/** Records what a watcher reports and resolves waits on it; bounded so a miss fails, not hangs. */
class FeedRecorder {
  readonly events: EngineEvent[] = [];
  readonly states: EngineFeedState[] = [];
  private waiters: Array<() => void> = [];

  onEvent = (e: EngineEvent) => {
    this.events.push(e);
    this.wake();
  };
  onStateChange = (s: EngineFeedState) => {
    this.states.push(s);
    this.wake();
  };

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  async until(what: string, done: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `Timed out waiting for ${what}; states ${JSON.stringify(this.states)}, events ${JSON.stringify(this.events.map((e) => `${e.type} ${e.action} ${e.name}`))}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  saw(type: EngineEvent['type'], action: string, name: string): boolean {
    return this.events.some((e) => e.type === type && e.action === action && e.name === name);
  }
}

describe('parseEngineEvent', () => {
  it('reads a container event line with its name and exact nanosecond time', () => {
    const line =
      '{"status":"start","id":"abc","from":"img","Type":"container","Action":"start","Actor":{"ID":"abc","Attributes":{"image":"img","name":"tbx-one"}},"scope":"local","time":1764676800,"timeNano":1764676800123456789}';
    assert.deepEqual(parseEngineEvent(line), {
      type: 'container',
      action: 'start',
      id: 'abc',
      name: 'tbx-one',
      attributes: { image: 'img', name: 'tbx-one' },
      time: 1764676800123,
      timeNano: '1764676800123456789',
    });
  });

  it('names a volume event after the volume', () => {
    const line =
      '{"Type":"volume","Action":"create","Actor":{"ID":"tbx-vol","Attributes":{"driver":"local"}},"scope":"local","time":1764676800,"timeNano":1764676800000000001}';
    assert.equal(parseEngineEvent(line)?.name, 'tbx-vol');
  });

  it('skips malformed lines and event types it does not watch', () => {
    assert.equal(parseEngineEvent('{"Type":"container",'), undefined);
    assert.equal(parseEngineEvent('not json'), undefined);
    assert.equal(parseEngineEvent('{"Type":"container","Action":"start"}'), undefined);
    assert.equal(parseEngineEvent('{"Type":"network","Action":"connect","Actor":{"ID":"n"},"time":1,"timeNano":1}'), undefined);
  });
});

describe('watchEngineEvents reconnect bookkeeping (stubbed engine)', () => {
  const line = (action: string, name: string, timeNano: string) =>
    JSON.stringify({
      Type: 'volume',
      Action: action,
      Actor: { ID: name, Attributes: { driver: 'local' } },
      time: Number(timeNano.slice(0, 10)),
      timeNano: 0,
    }).replace('"timeNano":0', `"timeNano":${timeNano}`) + '\n';

  it('resumes with since = the last event time and delivers a replayed event only once', async () => {
    const streams: PassThrough[] = [];
    const sinces: unknown[] = [];
    const stub = {
      getEvents: async (o: { since?: unknown }) => {
        sinces.push(o.since);
        const s = new PassThrough();
        streams.push(s);
        return s;
      },
    } as unknown as Docker;
    const feed = new FeedRecorder();
    const watcher = watchEngineEvents({
      connect: async () => stub,
      onEvent: feed.onEvent,
      onStateChange: feed.onStateChange,
      backoffMs: { initial: 1, max: 4 },
    });
    try {
      await feed.until('the first connection', () => streams.length === 1 && feed.states.includes('connected'));
      const first = line('create', 'v1', '1764676800000000042');
      streams[0].write(first.slice(0, 20));
      streams[0].write(first.slice(20) + 'garbage\n{"Type":"volume"}\n');
      await feed.until('v1', () => feed.saw('volume', 'create', 'v1'));
      streams[0].end();
      await feed.until('the reconnect', () => streams.length === 2 && feed.states.at(-1) === 'connected');
      assert.equal(sinces[0], undefined, 'the first subscription starts now');
      assert.equal(sinces[1], '1764676800.000000042', 'the reconnect asks for everything since the last event');
      // The engine's since is inclusive: it replays v1 before the new event.
      streams[1].write(first + line('create', 'v2', '1764676801000000000'));
      await feed.until('v2', () => feed.saw('volume', 'create', 'v2'));
      assert.deepEqual(
        feed.events.map((e) => e.name),
        ['v1', 'v2'],
      );
      assert.deepEqual(feed.states, ['connected', 'reconnecting', 'connected']);
    } finally {
      watcher.dispose();
    }
    assert.equal(feed.states.at(-1), 'stopped');
  });
});

// A private dockerd needs root; the rootless Podman pass runs as the engine's user.
describe('watchEngineEvents across a restart of the engine (private second dockerd)', { skip: TEST_ROOTLESS }, () => {
  let engine: SecondEngine | undefined;
  let watcher: { dispose(): void } | undefined;
  const prefix = `tbxt${Math.random().toString(16).slice(2, 8)}`;

  before(async () => {
    engine = await startSecondEngine();
  });

  after(async () => {
    watcher?.dispose();
    await engine?.dispose();
  });

  it('sees volume events before and after the engine is killed and restarted, including one made while it was reconnecting', async () => {
    const e = engine!;
    const feed = new FeedRecorder();
    // The test decides when a reconnect may go through, to put an event squarely in the gap.
    let gate: Promise<void> = Promise.resolve();
    let openGate: () => void = () => undefined;
    const connect = async (): Promise<Docker> => {
      await gate;
      return e.client();
    };
    watcher = watchEngineEvents({
      connect,
      onEvent: feed.onEvent,
      onStateChange: feed.onStateChange,
      backoffMs: { initial: 50, max: 500 },
    });
    await feed.until('the first connection', () => feed.states.includes('connected'));

    await e.client().createVolume({ Name: `${prefix}-before`, Labels: { [TEST_LABEL]: prefix } });
    await feed.until('the first volume event', () => feed.saw('volume', 'create', `${prefix}-before`));

    gate = new Promise<void>((resolve) => (openGate = resolve));
    await e.stop('SIGKILL');
    await feed.until('the feed to notice the engine is gone', () => feed.states.at(-1) === 'reconnecting');

    await e.start();
    await e.client().createVolume({ Name: `${prefix}-in-gap`, Labels: { [TEST_LABEL]: prefix } });
    openGate();
    await feed.until('the feed to reconnect', () => feed.states.at(-1) === 'connected');
    await feed.until('the volume made during the gap', () => feed.saw('volume', 'create', `${prefix}-in-gap`));

    await e.client().createVolume({ Name: `${prefix}-after`, Labels: { [TEST_LABEL]: prefix } });
    await feed.until('the volume made after reconnecting', () => feed.saw('volume', 'create', `${prefix}-after`));

    assert.deepEqual(feed.states, ['connected', 'reconnecting', 'connected']);
    const creates = feed.events.filter((ev) => ev.type === 'volume' && ev.action === 'create').map((ev) => ev.name);
    assert.deepEqual(creates, [`${prefix}-before`, `${prefix}-in-gap`, `${prefix}-after`], 'each event exactly once, in order');

    watcher.dispose();
    assert.equal(feed.states.at(-1), 'stopped');
  });

  it('keeps retrying while the engine is down and connects once it is back', async () => {
    const e = engine!;
    await e.stop('SIGTERM');
    const feed = new FeedRecorder();
    watcher = watchEngineEvents({
      connect: async () => e.client(),
      onEvent: feed.onEvent,
      onStateChange: feed.onStateChange,
      backoffMs: { initial: 50, max: 200 },
    });
    await feed.until('a failed first attempt', () => feed.states.includes('reconnecting'));
    assert.ok(!feed.states.includes('connected'));
    await e.start();
    await feed.until('the connection once the engine is back', () => feed.states.at(-1) === 'connected');
    await e.client().createVolume({ Name: `${prefix}-late`, Labels: { [TEST_LABEL]: prefix } });
    await feed.until('the volume event', () => feed.saw('volume', 'create', `${prefix}-late`));
    watcher.dispose();
  });
});

describe('watchEngineEvents on the main engine', () => {
  let ns: TestNamespace;
  let watcher: { dispose(): void } | undefined;

  before(() => {
    ns = testNamespace();
  });

  after(async () => {
    watcher?.dispose();
    await ns.cleanup();
  });

  it('reports the start of a test container with the container name', async () => {
    const feed = new FeedRecorder();
    watcher = watchEngineEvents({ connect: async () => ns.docker, onEvent: feed.onEvent, onStateChange: feed.onStateChange });
    await feed.until('the connection', () => feed.states.includes('connected'));
    const name = `${ns.names.prefix}-events`;
    const container = await ns.docker.createContainer({
      name,
      Image: await ensureTestRuntimeImage(),
      Entrypoint: ['true'],
      Cmd: [],
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none' },
    });
    await container.start();
    await feed.until('the start event', () => feed.saw('container', 'start', name));
    const start = feed.events.find((e) => e.type === 'container' && e.action === 'start' && e.name === name)!;
    assert.equal(start.id, container.id);
    watcher.dispose();
    watcher = undefined;
    assert.equal(feed.states.at(-1), 'stopped');
  });
});
