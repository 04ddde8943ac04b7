/**
 * ui/loginForwards/loginForwardText.ts (issue 29): the status bar item, its tooltip, pick rows and notices for
 * login callback forwards. Container names come from the engine: plain text, one line, no icons.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoginForwardInfo } from '../../extension/src/backend/api/loginForwards';
import {
  forwardSentence,
  loginForwardNotice,
  loginForwardPickItem,
  loginForwardStatus,
} from '../../extension/src/ui/loginForwards/loginForwardText';

const now = 1_000_000;
const f = (port: number, container: string): LoginForwardInfo => ({
  port,
  container,
  origin: 'url',
  openedAt: now,
  closesAt: now + 10 * 60_000,
});

describe('login forward texts', () => {
  it('the status bar names each port, the tooltip each container and when it closes', () => {
    assert.equal(loginForwardStatus([], now), undefined);
    const status = loginForwardStatus([f(1455, 'toolbox-app-1234abcd'), f(8976, 'toolbox-web-5678abcd')], now)!;
    assert.equal(status.text, '$(key) Login :1455 :8976');
    assert.equal(
      status.tooltip,
      [
        'Login callback on port 1455 forwarded to toolbox-app-1234abcd (127.0.0.1:1455 on this host; closes after the login, at the latest in 10 min).',
        'Login callback on port 8976 forwarded to toolbox-web-5678abcd (127.0.0.1:8976 on this host; closes after the login, at the latest in 10 min).',
        '',
        'Click to stop forwarding.',
      ].join('\n'),
    );
    assert.equal(forwardSentence(f(1455, 'c')), 'Login callback on port 1455 forwarded to c');
  });

  it('a hostile container name stays plain: no icon, no new line, no escape sequence', () => {
    const ESC = String.fromCharCode(27);
    const BEL = String.fromCharCode(7);
    const evil = `x$(alert)\n[link](https://evil.example)${ESC}]8;;https://evil.example${BEL}`;
    const controls = (text: string) => text.includes(ESC) || text.includes(BEL);
    const status = loginForwardStatus([f(1455, evil)], now)!;
    assert.equal(controls(status.tooltip), false);
    assert.equal(status.tooltip.split('\n').length, 3, 'one line per forward, then the hint');
    const row = loginForwardPickItem(f(1455, evil), now);
    // iconLabel escapes `$(` so VS Code shows it as written.
    assert.doesNotMatch(row.description, /(^|[^\\])\$\(|\n/);
    assert.equal(controls(row.description), false);
    const failed = loginForwardNotice({ kind: 'failed', port: 1455, container: evil, message: 'taken\nby x' })!;
    assert.equal(failed.level, 'error');
    assert.doesNotMatch(failed.text, /\n/);
    assert.equal(controls(failed.text), false);
    assert.match(failed.text, /^The login callback on port 1455 cannot reach x/);
  });

  it('says why a forward closed', () => {
    const closed = (end: 'answered' | 'timed-out' | 'stopped' | 'connections' | 'failed') =>
      loginForwardNotice({ kind: 'closed', forward: f(1455, 'c'), end })!.text;
    assert.equal(closed('answered'), 'Login callback on port 1455 closed: the login callback was answered.');
    assert.equal(closed('timed-out'), 'Login callback on port 1455 closed: its time ran out.');
    assert.equal(loginForwardNotice({ kind: 'opened', forward: f(1455, 'c') })!.text, 'Login callback on port 1455 forwarded to c.');
  });
});
