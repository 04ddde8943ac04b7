import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { coalesce } from '../../extension/src/ui/coalesce';

describe('coalesce', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('runs once per burst, ms after its first call', () => {
    let runs = 0;
    const redraw = coalesce(() => runs++, 250);
    redraw();
    mock.timers.tick(100);
    redraw();
    mock.timers.tick(149);
    assert.equal(runs, 0);
    mock.timers.tick(1);
    assert.equal(runs, 1);
    redraw();
    mock.timers.tick(250);
    assert.equal(runs, 2);
  });

  it('drops a scheduled run on cancel and dispose', () => {
    let runs = 0;
    const check = coalesce(() => runs++, 1000);
    check();
    check.cancel();
    mock.timers.tick(1000);
    check();
    check.dispose();
    mock.timers.tick(1000);
    assert.equal(runs, 0);
  });
});
