import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  AGENT_STREAM_LIMITS,
  AgentStreamRecognizer,
  cleanBytes,
  cleanText,
  type StreamSignal,
} from '../../extension/src/ui/agents/agentStream';
import { AGENT_FIXTURES } from '../fixtures/agentOutput';

function recognise(...chunks: Buffer[]): StreamSignal[] {
  const seen: StreamSignal[] = [];
  const r = new AgentStreamRecognizer((s) => seen.push(s));
  for (const c of chunks) r.feed(c);
  return seen;
}

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('agent stream recogniser: recorded agent output', () => {
  for (const f of AGENT_FIXTURES) {
    it(`${f.name}: the signals it carries, in order`, () => {
      assert.deepEqual(recognise(f.bytes), f.signals);
    });

    it(`${f.name}: the same signals when split at every byte offset`, () => {
      for (let k = 0; k <= f.bytes.length; k++) {
        assert.deepEqual(recognise(f.bytes.subarray(0, k), f.bytes.subarray(k)), f.signals, `split at ${k}`);
      }
    });

    it(`${f.name}: the same signals one byte at a time, and in three random pieces`, () => {
      const bytes = [...f.bytes].map((b) => Buffer.from([b]));
      assert.deepEqual(recognise(...bytes), f.signals);
      const rnd = prng(f.bytes.length);
      for (let n = 0; n < 200; n++) {
        const [a, b] = [Math.floor(rnd() * f.bytes.length), Math.floor(rnd() * f.bytes.length)].sort((x, y) => x - y);
        assert.deepEqual(recognise(f.bytes.subarray(0, a), f.bytes.subarray(a, b), f.bytes.subarray(b)), f.signals, `split at ${a}, ${b}`);
      }
    });
  }

  it('all fixtures back to back give all their signals (the state carries over cleanly)', () => {
    assert.deepEqual(
      recognise(...AGENT_FIXTURES.map((f) => f.bytes)),
      AGENT_FIXTURES.flatMap((f) => f.signals),
    );
  });
});

describe('agent stream recogniser: what it recognises', () => {
  it('OSC 9 is a notification, but its ConEmu commands are not (9;4 is progress)', () => {
    assert.deepEqual(recognise(Buffer.from('\x1b]9;Build done\x07\x1b]9;4;1;50\x07\x1b]9;4;0\x07\x1b]9;4\x07\x1b]9;2;x\x07')), [
      { kind: 'notify', source: 'osc9', message: 'Build done' },
      { kind: 'progress', active: true },
      { kind: 'progress', active: false },
      { kind: 'progress', active: false },
    ]);
    // A message that merely starts with a number is a message.
    assert.deepEqual(recognise(Buffer.from('\x1b]9;3 tests failed\x07')), [{ kind: 'notify', source: 'osc9', message: '3 tests failed' }]);
  });

  it('OSC 777 takes the body (the title when there is none); other 777 commands are ignored', () => {
    assert.deepEqual(
      recognise(Buffer.from('\x1b]777;notify;Codex;Turn done; tests pass\x07\x1b]777;notify;Only a title\x07\x1b]777;preexec\x07')),
      [
        { kind: 'notify', source: 'osc777', message: 'Turn done; tests pass' },
        { kind: 'notify', source: 'osc777', message: 'Only a title' },
      ],
    );
  });

  it("kitty's OSC 99: a title or body is a message; a close or base64 payload is not", () => {
    assert.deepEqual(
      recognise(Buffer.from('\x1b]99;;Hello\x1b\\\x1b]99;i=1:p=body;Body text\x1b\\\x1b]99;i=1:p=close;\x1b\\\x1b]99;e=1;SGVsbG8=\x1b\\')),
      [
        { kind: 'notify', source: 'osc99', message: 'Hello' },
        { kind: 'notify', source: 'osc99', message: 'Body text' },
      ],
    );
  });

  it('titles from OSC 0 and 2, not 1 (the icon name)', () => {
    assert.deepEqual(recognise(Buffer.from('\x1b]0;zero\x07\x1b]1;one\x07\x1b]2;two\x1b\\')), [
      { kind: 'title', title: 'zero' },
      { kind: 'title', title: 'two' },
    ]);
  });

  it('BEL on its own is a bell; BEL ending an OSC or inside a DCS/APC string is not', () => {
    assert.deepEqual(recognise(Buffer.from('a\x07b\x1b]2;t\x07\x1bPq\x07\x1b\\\x1b_x\x07\x1b\\\x07')), [
      { kind: 'bell' },
      { kind: 'title', title: 't' },
      { kind: 'bell' },
    ]);
  });

  it('prompt markers only for A–D alone or with parameters', () => {
    assert.deepEqual(recognise(Buffer.from('\x1b]133;A\x07\x1b]133;D;1\x07\x1b]633;E;ls\x07\x1b]133;AB\x07\x1b]133;\x07\x1b]1330;A\x07')), [
      { kind: 'prompt', mark: 'A' },
      { kind: 'prompt', mark: 'D' },
    ]);
  });

  it('text from the container is cleaned: no control characters, no bidi overrides, one line, capped', () => {
    // An ESC inside abandons the OSC (as xterm does): no notification; the BEL after it is a bell.
    assert.deepEqual(recognise(Buffer.from('\x1b]9;Pay\x1b\x08me\u202enow\r\nplease\x07')), [{ kind: 'bell' }]);
    assert.deepEqual(recognise(Buffer.from('\x1b]9;Pay\x08me\u202enow\r\n\tplease\u009b\x07')), [
      { kind: 'notify', source: 'osc9', message: 'Pay me now please' },
    ]);
    const long = recognise(Buffer.from(`\x1b]9;${'é'.repeat(1000)}\x07`))[0];
    assert.equal(long?.kind, 'notify');
    assert.equal((long as { message: string }).message.length, AGENT_STREAM_LIMITS.messageChars);
    assert.equal(cleanText('  a \u2066b\u2069  '), 'a b');
  });

  it('the byte fast path cleans exactly as cleanText does, on random bytes and the characters that matter', () => {
    const rnd = prng(17);
    // Spaces, controls, C1/NBSP, U+1680, U+2000–U+207F (spaces, bidi), U+3000, U+FEFF, and harmless neighbours.
    const pieces = [
      ' ',
      '  ',
      'a',
      'Z',
      '~',
      '\t',
      '\x1f',
      '\x7f',
      '\u0085',
      '\u009b',
      '\u00a0',
      '\u00a1',
      'é',
      '\u1680',
      '\u16a0',
      '\u2003',
      '\u200e',
      '\u2028',
      '\u202e',
      '\u202f',
      '\u205f',
      '\u2066',
      '\u2069',
      '\u2026',
      '\u2733',
      '\u2800',
      '\u3000',
      '\u3042',
      '\ufeff',
      '\uff21',
      '😀',
    ];
    const raw = [0x80, 0xc2, 0xe1, 0xe2, 0xe3, 0xef, 0xff, 0x20];
    for (let n = 0; n < 20000; n++) {
      const parts: Buffer[] = [];
      const count = 1 + Math.floor(rnd() * 12);
      for (let k = 0; k < count; k++) {
        parts.push(
          rnd() < 0.15 ? Buffer.from([raw[Math.floor(rnd() * raw.length)]!]) : Buffer.from(pieces[Math.floor(rnd() * pieces.length)]!),
        );
      }
      const bytes = Buffer.concat(parts);
      const max = rnd() < 0.2 ? 1 + Math.floor(rnd() * 8) : AGENT_STREAM_LIMITS.messageChars;
      assert.equal(cleanBytes(bytes, 0, bytes.length, max), cleanText(bytes.toString('utf8'), max), JSON.stringify([...bytes]));
    }
  });

  it('a title set again gives the same title; a different one, its own', () => {
    const spin = ['\u2810 Working', '\u2820 Working', '\u2810 Working', '\u2810 Working'];
    const seen = recognise(
      ...spin.map((t) => Buffer.from(`\x1b]0;${t}\x07`)),
      Buffer.from('\x1b]2; two\tspaces \x07\x1b]2; two\tspaces \x07'),
    );
    assert.deepEqual(
      seen.map((s) => (s.kind === 'title' ? s.title : s.kind)),
      [...spin, 'two spaces', 'two spaces'],
    );
  });
});

describe('agent stream recogniser: hostile input', () => {
  it('bytes are never changed, whatever they are', () => {
    const rnd = prng(7);
    const bytes = Buffer.alloc(1 << 16);
    for (let i = 0; i < bytes.length; i++)
      bytes[i] = rnd() < 0.05 ? [0x1b, 0x07, 0x5d, 0x3b, 0x5c][Math.floor(rnd() * 5)]! : Math.floor(rnd() * 256);
    const before = Buffer.from(bytes);
    const r = new AgentStreamRecognizer(() => undefined);
    for (let i = 0; i < bytes.length; i += 997) r.feed(bytes.subarray(i, i + 997));
    assert.equal(Buffer.compare(before, bytes), 0);
  });

  it('an OSC that never ends holds at most the payload buffer, and the next one is still seen', () => {
    const seen: StreamSignal[] = [];
    const r = new AgentStreamRecognizer((s) => seen.push(s));
    r.feed(Buffer.from('\x1b]9;'));
    const junk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 16 * 16; i++) {
      r.feed(junk); // 16 MiB of payload, no terminator
      assert.ok(r.heldBytes <= AGENT_STREAM_LIMITS.oscPayloadBytes, `held ${r.heldBytes}`);
    }
    assert.deepEqual(seen, []);
    // The overlong one ends: it is dropped, not shown truncated.
    r.feed(Buffer.from('\x07'));
    assert.deepEqual(seen, []);
    r.feed(Buffer.from('\x1b]9;after the flood\x07'));
    assert.deepEqual(seen, [{ kind: 'notify', source: 'osc9', message: 'after the flood' }]);
  });

  it('an unterminated OSC is abandoned at the next escape sequence; CAN and SUB cancel it', () => {
    assert.deepEqual(recognise(Buffer.from('\x1b]9;never ended'), Buffer.from('\x1b[0m text \x1b]9;ok\x07')), [
      { kind: 'notify', source: 'osc9', message: 'ok' },
    ]);
    assert.deepEqual(recognise(Buffer.from('\x1b]9;x\x18\x1b]9;y\x1a\x07')), [{ kind: 'bell' }]);
  });

  it('an OSC of exactly the buffer size is read; one byte more is dropped', () => {
    const cap = AGENT_STREAM_LIMITS.oscPayloadBytes;
    const fits = `9;${'m'.repeat(cap - 2)}`;
    assert.equal(recognise(Buffer.from(`\x1b]${fits}\x07`)).length, 1);
    assert.equal(recognise(Buffer.from(`\x1b]${fits}m\x07`)).length, 0);
  });

  it('10 MiB of random bytes in random chunks: bounded memory, bytes unchanged, no stall', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const rnd = prng(42);
    const total = 10 * 2 ** 20;
    const data = Buffer.alloc(total);
    for (let i = 0; i < total; i += 4) data.writeUInt32LE(Math.floor(rnd() * 2 ** 32), i);
    const digest = createHash('sha256').update(data).digest('hex');
    let signals = 0;
    const r = new AgentStreamRecognizer(() => signals++);
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let maxHeld = 0;
    for (let i = 0; i < total;) {
      const size = 1 + Math.floor(rnd() * 65536);
      r.feed(data.subarray(i, i + size));
      maxHeld = Math.max(maxHeld, r.heldBytes);
      i += size;
    }
    gc();
    const grown = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(maxHeld <= AGENT_STREAM_LIMITS.oscPayloadBytes);
    assert.ok(grown < 4 * 2 ** 20, `heap grew by ${grown} bytes`);
    assert.equal(createHash('sha256').update(data).digest('hex'), digest);
    // Random bytes carry BELs (about one in 256): they were seen, so the scan did not stop.
    assert.ok(signals > total / 512, `${signals} signals`);
  });
});

describe('agent stream recogniser: the fast Ground scan agrees with the byte-at-a-time machine', () => {
  // One byte at a time, Ground sees one byte per call: that is the plain state machine.
  const byteAtATime = (bytes: Buffer) => recognise(...[...bytes].map((b) => Buffer.from([b])));
  const alphabet = Buffer.from('\x1b\x1b\x1b\x07\x07]]P_X^\\[9;0127738;Aa b\x18\x1a');

  it('on 3000 random streams of the bytes that matter, in random chunks', () => {
    const rnd = prng(2026);
    for (let n = 0; n < 3000; n++) {
      const len = 1 + Math.floor(rnd() * 80);
      const bytes = Buffer.alloc(len);
      for (let i = 0; i < len; i++) bytes[i] = alphabet[Math.floor(rnd() * alphabet.length)]!;
      const cut = Math.floor(rnd() * len);
      assert.deepEqual(recognise(bytes), byteAtATime(bytes), JSON.stringify(bytes.toString('latin1')));
      assert.deepEqual(
        recognise(bytes.subarray(0, cut), bytes.subarray(cut)),
        byteAtATime(bytes),
        `cut ${cut}: ${JSON.stringify(bytes.toString('latin1'))}`,
      );
    }
  });

  it('on the recorded fixtures with CSI around every sequence', () => {
    for (const f of AGENT_FIXTURES) {
      const wrapped = Buffer.concat([Buffer.from('\x1b[1m\x1bPq\x07\x1b\\'), f.bytes, Buffer.from('\x1b[0m\x07\x1b_a\x07')]);
      assert.deepEqual(recognise(wrapped), byteAtATime(wrapped), f.name);
    }
  });
});
