/**
 * Recognises, in the bytes a container sends to a Toolbox terminal, the signals agents emit:
 * OSC 9 and OSC 777 (and kitty's OSC 99) notifications, BEL, title changes (OSC 0 / OSC 2),
 * ConEmu progress (OSC 9;4), the prompt markers of shell integration (OSC 133 / OSC 633) and the
 * agent launcher's exit mark (contract/constants.ts AGENT_EXIT_MARK).
 *
 * It only reads: the terminal writes every byte unchanged (ui/shells/toolboxShellPty.ts). It is incremental (a
 * sequence split across chunks is recognised the same) and bounded: one fixed buffer of
 * AGENT_STREAM_LIMITS.oscPayloadBytes holds the OSC being read; a longer one is skipped to its
 * end; an OSC that never ends is abandoned at the next ESC, CAN or SUB, as xterm does. Nothing is
 * allocated per chunk and nothing decoded, except the payload of a recognised sequence: in
 * Ground, two native scans per chunk (Buffer.indexOf of BEL and of "]", each about 1 µs per
 * 64 KiB; a scan per ESC, or for the two bytes "ESC ]", costs several times both), and a title
 * set again is not decoded again (title()).
 *
 * Pure (no vscode, no I/O): test/unit/agent-stream.test.ts.
 */

import { AGENT_EXIT_MARK } from '../../contract/constants';

/**
 * Bounds of the terminal stream recogniser (ui/agents/agentStream.ts), which reads every byte a container
 * sends to a Toolbox terminal: the recogniser keeps one fixed buffer of this size and nothing else.
 */
export const AGENT_STREAM_LIMITS = {
  /** Bytes of one OSC payload kept (the rest of a longer one is skipped, its terminator still awaited). */
  oscPayloadBytes: 4096,
  /** Characters of a notification message or title kept, after control characters are removed. */
  messageChars: 200,
  /** A title up to this many bytes is remembered, so the same title set again is not decoded again. */
  titleBytes: 512,
  /** A BEL this soon after the user typed is the shell answering a keystroke (tab completion), not a call. */
  bellAfterInputMs: 1000,
} as const;

export type StreamSignal =
  /** A desktop notification asked for by the program; `message` is sanitised and capped. */
  | { kind: 'notify'; source: 'osc9' | 'osc777' | 'osc99'; message: string }
  /** BEL outside any escape sequence. */
  | { kind: 'bell' }
  /** OSC 0 or OSC 2, sanitised and capped. */
  | { kind: 'title'; title: string }
  /** ConEmu's OSC 9;4 progress: active while a progress state other than 0 (remove) is set. */
  | { kind: 'progress'; active: boolean }
  /** Shell integration (OSC 133 / VS Code's OSC 633): A prompt start, B input start, C output start, D command end. */
  | { kind: 'prompt'; mark: 'A' | 'B' | 'C' | 'D' }
  /**
   * The agent launcher's mark (AGENT_EXIT_MARK): the agent exited with `status` (0–255); `agent`
   * is the command it ran (cleaned, short), only ever matched against the known agents.
   */
  | { kind: 'agentExit'; status: number; agent: string };

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const SEMI = 0x3b;
const BACKSLASH = 0x5c;

const NOTIFY = Buffer.from('notify;');
const AGENT_EXIT = new RegExp(`^${AGENT_EXIT_MARK.tag};(\\d{1,3})(?:;([^;]{0,64}))?$`);

const enum Mode {
  Ground,
  /** After ESC. */
  Escape,
  /** In an OSC (ESC ]), collecting its payload. */
  Osc,
  /** In an OSC, after ESC: a backslash ends it (ST), anything else abandons it. */
  OscEscape,
  /** In a DCS, SOS, PM or APC string (ESC P, X, ^, _): skipped; BEL means nothing there. */
  Str,
  /** In such a string, after ESC. */
  StrEscape,
}

/** Control characters (C0, DEL, C1) and bidirectional overrides: never shown to the user from a container. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g;

/** Untrusted text for a notification or a tree row: no control characters, one line, capped. */
export function cleanText(raw: string, max: number = AGENT_STREAM_LIMITS.messageChars): string {
  const text = raw.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * cleanText of the UTF-8 in bytes[start, end), without the regexes when the bytes show that
 * nothing would change: no C0/DEL byte, no space at either end or twice in a row, and none of
 * the UTF-8 lead pairs under which every other character UNSAFE or \s matches lives (C2 80–A0:
 * C1, NEL, NBSP; E1 9A: U+1680; E2 80/81: U+2000–U+207F, the spaces and bidi marks; E3 80:
 * U+3000; EF BB: U+FEFF). Anything else takes cleanText (test/unit/agent-stream.test.ts holds
 * the two to the same result on random bytes).
 */
export function cleanBytes(bytes: Buffer, start: number, end: number, max: number = AGENT_STREAM_LIMITS.messageChars): string {
  if (start >= end) return '';
  if (bytes[start] === 0x20 || bytes[end - 1] === 0x20) return cleanText(bytes.toString('utf8', start, end), max);
  for (let j = start; j < end; j++) {
    const b = bytes[j]!;
    if (b < 0x80) {
      if (b < 0x20 || b === 0x7f || (b === 0x20 && bytes[j + 1] === 0x20)) return cleanText(bytes.toString('utf8', start, end), max);
      continue;
    }
    const c = j + 1 < end ? bytes[j + 1]! : 0;
    if (
      (b === 0xc2 && c <= 0xa0) ||
      (b === 0xe1 && c === 0x9a) ||
      (b === 0xe2 && (c === 0x80 || c === 0x81)) ||
      (b === 0xe3 && c === 0x80) ||
      (b === 0xef && c === 0xbb)
    ) {
      return cleanText(bytes.toString('utf8', start, end), max);
    }
  }
  const text = bytes.toString('utf8', start, end);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export class AgentStreamRecognizer {
  private mode = Mode.Ground;
  private readonly payload: Buffer;
  private length = 0;
  /** The OSC being read is longer than the buffer: it is skipped to its end, never dispatched. */
  private overflow = false;
  /** The bytes of the last title (allocated at the first one) and what they gave (title()). */
  private lastTitle: Buffer | undefined;
  private lastTitleLength = -1;
  private lastTitleText = '';

  constructor(
    private readonly emit: (signal: StreamSignal) => void,
    payloadBytes: number = AGENT_STREAM_LIMITS.oscPayloadBytes,
  ) {
    this.payload = Buffer.alloc(payloadBytes);
  }

  /** Bytes of an OSC held between chunks (at most the payload buffer's size). */
  get heldBytes(): number {
    return this.mode === Mode.Osc || this.mode === Mode.OscEscape ? this.length : 0;
  }

  /** Reads one chunk of terminal output. The chunk is not modified or kept. */
  feed(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) i = this.mode === Mode.Ground ? this.ground(chunk, i) : this.sequence(chunk, i);
  }

  /**
   * Ground, the common case, without looking at every ESC (Ink and ratatui write thousands of
   * CSI sequences per 64 KiB, and a native call per ESC costs more than the terminal itself).
   * Only three things matter here, found with native scans: a BEL; "ESC ]" (an OSC starts, in
   * any state: found by scanning for "]", rare in terminal output, and checking the byte before);
   * and, to know what a BEL means and in which state the chunk ends, the last ESC before it.
   * Everything else in Ground (CSI, ESC x) returns to Ground. test/unit/agent-stream.test.ts
   * holds this to the byte-at-a-time state machine (sequence()) on random input.
   */
  private ground(chunk: Buffer, from: number): number {
    const n = chunk.length;
    let p = from;
    let bel = chunk.indexOf(BEL, p);
    let osc = this.oscStart(chunk, p);
    for (;;) {
      if (bel >= 0 && (osc < 0 || bel < osc)) {
        // What the BEL means depends on the last ESC before it (in this Ground stretch).
        const e = chunk.lastIndexOf(ESC, bel);
        if (e >= p) {
          const c = chunk[e + 1]!;
          if (isStringStart(c)) {
            this.mode = Mode.Str; // a DCS/SOS/PM/APC string is open: the BEL is in it
            return e + 2;
          }
          if (e + 1 !== bel) this.emit({ kind: 'bell' }); // ESC BEL is no bell
        } else {
          this.emit({ kind: 'bell' });
        }
        p = bel + 1;
        bel = chunk.indexOf(BEL, p);
        if (osc >= 0 && osc < p) osc = this.oscStart(chunk, p);
        continue;
      }
      if (osc >= 0) {
        this.mode = Mode.Osc;
        this.length = 0;
        this.overflow = false;
        return osc + 2;
      }
      // Nothing more in this chunk: the state it ends in follows from its last ESC.
      const last = chunk.lastIndexOf(ESC, n - 1);
      if (last >= p) {
        if (last === n - 1) this.mode = Mode.Escape;
        else if (isStringStart(chunk[last + 1]!)) {
          this.mode = Mode.Str;
          return last + 2;
        }
      }
      return n;
    }
  }

  /** Where the next "ESC ]" at or after `from` starts, or -1. */
  private oscStart(chunk: Buffer, from: number): number {
    for (let k = chunk.indexOf(0x5d, from + 1); k >= 0; k = chunk.indexOf(0x5d, k + 1)) {
      if (chunk[k - 1] === ESC) return k - 1;
    }
    return -1;
  }

  /** Byte at a time, in an escape sequence, an OSC or a string, until Ground (or the chunk's end). */
  private sequence(chunk: Buffer, from: number): number {
    const n = chunk.length;
    let i = from;
    while (i < n) {
      switch (this.mode) {
        case Mode.Ground:
          return i;
        case Mode.Escape: {
          const b = chunk[i++]!;
          if (b === 0x5d /* ] */) {
            this.mode = Mode.Osc;
            this.length = 0;
            this.overflow = false;
          } else if (isStringStart(b)) {
            this.mode = Mode.Str;
          } else if (b !== ESC) {
            // CSI and every other escape sequence: their bytes carry no ESC or BEL of ours.
            this.mode = Mode.Ground;
          }
          break;
        }
        case Mode.Osc: {
          // The payload runs to the first BEL, ESC, CAN or SUB (all below 0x20): copied in one go.
          let k = i;
          let b = 0;
          while (k < n && ((b = chunk[k]!) >= 0x20 || (b !== BEL && b !== ESC && b !== CAN && b !== SUB))) k++;
          const room = this.payload.length - this.length;
          if (k - i > room) {
            chunk.copy(this.payload, this.length, i, i + room);
            this.length += room;
            this.overflow = true;
          } else {
            chunk.copy(this.payload, this.length, i, k);
            this.length += k - i;
          }
          i = k;
          if (k === n) break;
          i++;
          if (b === BEL) {
            this.dispatch();
            this.mode = Mode.Ground;
          } else if (b === ESC) {
            this.mode = Mode.OscEscape;
          } else {
            this.mode = Mode.Ground; // CAN or SUB
          }
          break;
        }
        case Mode.OscEscape: {
          if (chunk[i] === BACKSLASH) {
            i++;
            this.dispatch();
            this.mode = Mode.Ground;
          } else {
            // ESC followed by something else: the OSC is abandoned and that ESC starts a sequence.
            this.mode = Mode.Escape;
          }
          this.length = 0;
          break;
        }
        case Mode.Str: {
          const e = indexOrEnd(chunk, ESC, i);
          const can = firstAbort(chunk, i, e);
          if (can < e) {
            i = can + 1;
            this.mode = Mode.Ground;
          } else if (e < n) {
            i = e + 1;
            this.mode = Mode.StrEscape;
          } else {
            i = n;
          }
          break;
        }
        case Mode.StrEscape: {
          if (chunk[i] === BACKSLASH) {
            i++;
            this.mode = Mode.Ground;
          } else {
            this.mode = Mode.Escape;
          }
          break;
        }
      }
    }
    return i;
  }

  /** A complete OSC: recognise the few we care about; every other one is ignored unread. */
  private dispatch(): void {
    const len = this.length;
    this.length = 0;
    if (this.overflow) return;
    const p = this.payload;
    // The command number: up to six digits, then ';' or the end.
    let id = 0;
    let j = 0;
    while (j < len && j < 6 && p[j]! >= 0x30 && p[j]! <= 0x39) id = id * 10 + (p[j++]! - 0x30);
    if (j === 0 || (j < len && p[j] !== SEMI)) return;
    const rest = j + 1; // first byte after the ';'
    switch (id) {
      case 0:
      case 2:
        this.emit({ kind: 'title', title: this.title(rest, len) });
        return;
      case 9:
        this.osc9(rest, len);
        return;
      case 777: {
        // OSC 777 ; notify ; title ; body (rxvt, ghostty, foot, …)
        if (len - rest < NOTIFY.length || p.compare(NOTIFY, 0, NOTIFY.length, rest, rest + NOTIFY.length) !== 0) return;
        const title = rest + NOTIFY.length;
        let semi = p.indexOf(SEMI, title);
        if (semi < 0 || semi >= len) semi = len;
        const message = (semi < len ? cleanBytes(p, semi + 1, len) : '') || cleanBytes(p, title, semi);
        if (message) this.emit({ kind: 'notify', source: 'osc777', message });
        return;
      }
      case 99: {
        // kitty: OSC 99 ; metadata ; payload. Only a title or body payload is a message.
        const text = this.text(rest, len);
        const k = text.indexOf(';');
        if (k < 0) return;
        const meta = text.slice(0, k);
        const part = /(?:^|:)p=([a-z?]+)/.exec(meta)?.[1];
        if (part !== undefined && part !== 'title' && part !== 'body') return;
        if (/(?:^|:)e=1/.test(meta)) return; // base64: not decoded
        const message = cleanText(text.slice(k + 1));
        if (message) this.emit({ kind: 'notify', source: 'osc99', message });
        return;
      }
      case AGENT_EXIT_MARK.osc: {
        const m = AGENT_EXIT.exec(this.text(rest, len));
        const status = m ? Number(m[1]) : 256;
        if (status <= 255) this.emit({ kind: 'agentExit', status, agent: cleanText(m![2] ?? '', 64) });
        return;
      }
      case 133:
      case 633: {
        const mark = rest < len ? p[rest]! : 0;
        if (mark >= 0x41 && mark <= 0x44 && (rest + 1 === len || p[rest + 1] === SEMI)) {
          this.emit({ kind: 'prompt', mark: String.fromCharCode(mark) as 'A' | 'B' | 'C' | 'D' });
        }
        return;
      }
    }
  }

  /**
   * OSC 9: iTerm2's notification (OSC 9 ; message), unless the message is a ConEmu command
   * (digits then ';' or the end): of those only 9;4 (progress) means something here.
   */
  private osc9(start: number, len: number): void {
    const p = this.payload;
    let j = start;
    while (j < len && p[j]! >= 0x30 && p[j]! <= 0x39) j++;
    if (j > start && (j === len || p[j] === SEMI)) {
      if (j === start + 1 && p[start] === 0x34 /* 4 */) {
        // 9;4;<state>[;<percent>]: state 0 removes the progress.
        const state = j + 1 < len ? p[j + 1]! : 0x30;
        this.emit({ kind: 'progress', active: state !== 0x30 });
      }
      return;
    }
    const message = cleanBytes(p, start, len);
    if (message) this.emit({ kind: 'notify', source: 'osc9', message });
  }

  /**
   * A title, cleaned. Agents set the same title many times a second (a spinner has a few
   * frames): the bytes of the last one are kept, and an equal title is the same string again,
   * not decoded or cleaned twice.
   */
  private title(start: number, end: number): string {
    const n = end - start;
    const last = this.lastTitle;
    if (last && n === this.lastTitleLength && this.payload.compare(last, 0, n, start, end) === 0) return this.lastTitleText;
    const title = cleanBytes(this.payload, start, end);
    if (n <= AGENT_STREAM_LIMITS.titleBytes) {
      const keep = last ?? (this.lastTitle = Buffer.alloc(AGENT_STREAM_LIMITS.titleBytes));
      this.payload.copy(keep, 0, start, end);
      this.lastTitleLength = n;
      this.lastTitleText = title;
    } else {
      this.lastTitleLength = -1;
    }
    return title;
  }

  private text(start: number, end: number): string {
    return start < end ? this.payload.toString('utf8', start, end) : '';
  }
}

/** ESC followed by one of these opens a DCS, SOS, PM or APC string. */
function isStringStart(b: number): boolean {
  return b === 0x50 /* P */ || b === 0x58 /* X */ || b === 0x5e /* ^ */ || b === 0x5f; /* _ */
}

function indexOrEnd(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at < 0 ? chunk.length : at;
}

/** The first CAN or SUB in [from, to), or `to`. */
function firstAbort(chunk: Buffer, from: number, to: number): number {
  for (let k = from; k < to; k++) {
    const b = chunk[k];
    if (b === CAN || b === SUB) return k;
  }
  return to;
}
