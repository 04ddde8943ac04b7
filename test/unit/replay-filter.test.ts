/**
 * Replayed history never makes the terminal answer (issue 26 item 2): every query an agent sends
 * to the terminal is dropped from a replay, split anywhere across chunks; every other byte is
 * kept; live output after the replay is shown as it came.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { StartedShell } from '../../extension/src/backend/api';
import { ReplayQueryFilter } from '../../extension/src/ui/shells/replayQueryFilter';
import { installVscodeLite, silentLog } from '../support/vscodeLite';

const QUERIES: Record<string, string> = {
  DA1: '\x1b[c',
  'DA1 with 0': '\x1b[0c',
  DA2: '\x1b[>c',
  'DA2 with 0': '\x1b[>0c',
  DA3: '\x1b[=c',
  'DSR status': '\x1b[5n',
  'DSR cursor (CPR)': '\x1b[6n',
  'DEC cursor report': '\x1b[?6n',
  XTVERSION: '\x1b[>q',
  'XTVERSION with 0': '\x1b[>0q',
  DECRQM: '\x1b[?2004$p',
  'ANSI DECRQM': '\x1b[4$p',
  'kitty keyboard flags': '\x1b[?u',
  'text area size': '\x1b[18t',
  'pixel size': '\x1b[14t',
  'cell size': '\x1b[16t',
  'foreground colour (BEL)': '\x1b]10;?\x07',
  'background colour (ST)': '\x1b]11;?\x1b\\',
  'cursor colour': '\x1b]12;?\x07',
  'palette entry': '\x1b]4;1;?\x07',
  'clipboard read': '\x1b]52;c;?\x07',
  DECRQSS: '\x1bP$qm\x1b\\',
  XTGETTCAP: '\x1bP+q544e\x1b\\',
  ENQ: '\x05',
};

const KEPT: Record<string, string> = {
  colour: '\x1b[31mred\x1b[0m',
  'clear and home': '\x1b[2J\x1b[H',
  'alternate screen': '\x1b[?1049h',
  'cursor style (DECSCUSR, not XTVERSION)': '\x1b[1 q',
  'window title': '\x1b]0;claude ✳ working\x07',
  hyperlink: '\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\',
  'prompt mark': '\x1b]133;A\x07',
  'set background colour': '\x1b]11;rgb:0000/0000/0000\x07',
  'charset designation': '\x1b(B',
  'save cursor': '\x1b7',
  'scroll region': '\x1b[1;24r',
  notification: '\x1b]9;Approval requested\x07',
  text: 'plain text, ünïcode ✓\r\n',
};

/** The filter's output for `text` cut into chunks at every `step` bytes. */
function filtered(text: string, step: number): string {
  const bytes = Buffer.from(text, 'utf8');
  const f = new ReplayQueryFilter();
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += step) parts.push(f.push(bytes.subarray(i, i + step)));
  parts.push(f.end());
  return Buffer.concat(parts).toString('utf8');
}

describe('ReplayQueryFilter', () => {
  for (const [name, query] of Object.entries(QUERIES)) {
    it(`drops ${name}, whole and split anywhere`, () => {
      const text = `before${query}after`;
      for (let step = 1; step <= text.length; step++) assert.equal(filtered(text, step), 'beforeafter', `chunks of ${step}`);
    });
  }

  it('keeps every other sequence and text byte for byte, split anywhere', () => {
    const text = Object.values(KEPT).join('');
    for (let step = 1; step <= 12; step++) assert.equal(filtered(text, step), text, `chunks of ${step}`);
  });

  it('drops a query after a lone ESC and keeps the ESC', () => {
    assert.equal(filtered('a\x1b\x1b[6nb', 1), 'a\x1bb');
  });

  it('hands back an unfinished sequence at the end of the replay as it came', () => {
    const f = new ReplayQueryFilter();
    assert.equal(f.push(Buffer.from('x\x1b]11;')).toString(), 'x');
    assert.equal(f.end().toString(), '\x1b]11;');
  });

  it('passes an overlong sequence on instead of holding it', () => {
    const long = `\x1b]0;${'t'.repeat(5000)}\x07`;
    assert.equal(filtered(long, 100), long);
  });
});

describe('the terminal after a reload (issue 26 item 2)', () => {
  it('shows the replay without its queries, and live output as it came', async () => {
    installVscodeLite();
    const { ToolboxShellPty } = await import('../../extension/src/ui/shells/toolboxShellPty');
    const stream = new PassThrough();
    const shell = {
      stream,
      exitCode: new Promise<number>(() => undefined),
      resize: async () => undefined,
      dispose: () => undefined,
    } as unknown as StartedShell;
    // What Claude Code printed before the reload: its colour and device queries among its frames.
    const replay = Buffer.from('\x1b]11;?\x1b\\\x1b[c\x1b[>0q\x1b[6nframe one\r\n\x1b]10;?\x07frame two\r\n');
    // After the reattach, a program asks again: that one is live and must reach xterm.js.
    const live = Buffer.from('\x1b[6nprompt$ ');
    Object.assign(shell, { replayBytes: replay.length });
    const pty = new ToolboxShellPty({ container: 'toolbox-app', start: async () => shell, log: silentLog as never });
    let written = '';
    pty.onDidWrite((t) => (written += t));
    pty.open({ columns: 80, rows: 24 });
    await new Promise((r) => setImmediate(r));
    const bytes = Buffer.concat([replay, live]);
    for (let i = 0; i < bytes.length; i += 5) stream.emit('data', bytes.subarray(i, i + 5));
    assert.equal(written, 'frame one\r\nframe two\r\n\x1b[6nprompt$ ');
    pty.close();
  });
});
