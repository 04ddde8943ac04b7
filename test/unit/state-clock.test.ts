import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StateClock, type IntervalTimers } from '../../extension/src/ui/agents/stateClock';

/** Timers that run nothing by themselves: the test sees which intervals are live and ticks them. */
function fakeTimers() {
  const live = new Map<number, () => void>();
  let next = 1;
  const timers: IntervalTimers = {
    setInterval: (tick) => {
      live.set(next, tick);
      return next++;
    },
    clearInterval: (handle) => {
      live.delete(handle as number);
    },
  };
  return { timers, live, tickAll: () => [...live.values()].forEach((tick) => tick()) };
}

describe('the state clock (time in each agent state)', () => {
  it('holds no timer while the window has no Toolbox terminal', () => {
    const { timers, live } = fakeTimers();
    const clock = new StateClock(
      () => false,
      () => assert.fail('redrawn without a terminal'),
      timers,
    );
    clock.sync();
    clock.sync();
    assert.equal(live.size, 0);
    assert.equal(clock.running, false);
  });

  it('starts with the first terminal, runs once however often it is synced, and stops when the last one closes', () => {
    const { timers, live, tickAll } = fakeTimers();
    let terminals = 0;
    let redraws = 0;
    const clock = new StateClock(
      () => terminals > 0,
      () => redraws++,
      timers,
    );
    terminals = 1;
    clock.sync();
    terminals = 2;
    clock.sync();
    assert.equal(live.size, 1);
    tickAll();
    assert.equal(redraws, 1);
    terminals = 1;
    clock.sync();
    assert.equal(live.size, 1);
    terminals = 0;
    clock.sync();
    assert.equal(live.size, 0);
    assert.equal(clock.running, false);
    // A terminal opened again starts it again.
    terminals = 1;
    clock.sync();
    assert.equal(live.size, 1);
    clock.dispose();
    assert.equal(live.size, 0);
  });

  it('with the real timers, leaves nothing that keeps the process alive when there is no terminal', () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const clock = new StateClock(
      () => false,
      () => undefined,
    );
    clock.sync();
    assert.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, before);
    clock.dispose();
  });
});
