/**
 * Replayed history must never make the terminal answer. A held session attached again replays
 * its recent output (engine/sessions.ts `replayBytes`); an agent's output holds its queries to
 * the terminal (colours: OSC 10/11; device attributes: DA1/DA2/DA3; status and cursor reports:
 * DSR; XTVERSION; DECRQM; window reports; DECRQSS and XTGETTCAP; ENQ). Shown again, xterm.js
 * answers each one, and the answers go to the shell as if typed (`11;rgb:f8f8/…` at the prompt).
 * This filter drops those queries from the replayed bytes and keeps every other byte, across
 * chunk boundaries. Live output is never filtered: the program asking then reads its answer.
 */

const ESC = 0x1b;
const BEL = 0x07;
const ENQ = 0x05;
/** A sequence longer than this is not a query: it is passed on as it is. */
const MAX_SEQUENCE = 4096;

/** Whether a complete CSI sequence (`ESC [` … final byte) asks the terminal for an answer. */
function csiIsQuery(body: string): boolean {
  const final = body.at(-1);
  const params = body.slice(0, -1);
  if (final === 'c') return /^[>=]?0?$/.test(params); // DA1, DA2, DA3
  if (final === 'n') return /^\??\d*$/.test(params); // DSR, CPR, private status reports
  if (final === 'q') return /^>\d*$/.test(params); // XTVERSION
  if (final === 'p') return /^\??\d*\$$/.test(params); // DECRQM
  if (final === 'u') return params === '?'; // kitty keyboard flags
  if (final === 't') return /^(1[13-9]|2[01])(;\d*)*$/.test(params); // window state and size reports
  return false;
}

/** Whether a complete OSC payload asks for a value (`OSC 11;?`, `OSC 4;1;?`, `OSC 52;c;?`). */
function oscIsQuery(payload: string): boolean {
  return payload.split(';').slice(1).includes('?');
}

/** Whether a complete DCS payload is a request (DECRQSS `$q…`, XTGETTCAP `+q…`). */
function dcsIsQuery(payload: string): boolean {
  return payload.startsWith('$q') || payload.startsWith('+q');
}

export class ReplayQueryFilter {
  /** Bytes of an escape sequence not complete yet (held until it is, or until end()). */
  private held: number[] = [];

  /** The chunk without the queries it completes; an unfinished sequence is held for the next. */
  push(chunk: Uint8Array): Buffer {
    const out: number[] = [];
    for (const byte of chunk) {
      if (this.held.length === 0) {
        if (byte === ESC) this.held.push(byte);
        else if (byte !== ENQ) out.push(byte);
        continue;
      }
      if (byte === ESC && this.held.length === 1) {
        // ESC ESC: the first one stands alone; the second may start a sequence.
        out.push(ESC);
        continue;
      }
      this.held.push(byte);
      const verdict = this.judge();
      if (verdict === 'pending') continue;
      if (verdict === 'keep') out.push(...this.held);
      this.held = [];
    }
    return Buffer.from(out);
  }

  /** What is still held (an unfinished sequence at the end of the replay), as it came. */
  end(): Buffer {
    const rest = Buffer.from(this.held);
    this.held = [];
    return rest;
  }

  /** The held sequence: complete and a query (drop), complete or too long (keep), or not yet complete. */
  private judge(): 'drop' | 'keep' | 'pending' {
    const seq = this.held;
    if (seq.length > MAX_SEQUENCE) return 'keep';
    const kind = seq[1]!;
    const last = seq.at(-1)!;
    if (kind === 0x5b /* [ */) {
      if (seq.length < 3 || last < 0x40 || last > 0x7e) return 'pending';
      return csiIsQuery(Buffer.from(seq.slice(2)).toString('latin1')) ? 'drop' : 'keep';
    }
    if (kind === 0x5d /* ] */ || kind === 0x50 /* P */) {
      const st = last === 0x5c && seq.at(-2) === ESC && seq.length > 3;
      if (!(last === BEL && kind === 0x5d) && !st) return 'pending';
      const payload = Buffer.from(seq.slice(2, st ? -2 : -1)).toString('utf8');
      return (kind === 0x5d ? oscIsQuery(payload) : dcsIsQuery(payload)) ? 'drop' : 'keep';
    }
    // Any other escape (a two-byte one, or an ESC followed by text) is not a query.
    return seq.length >= 2 && (kind < 0x20 || kind > 0x2f) ? 'keep' : seq.length >= 3 ? 'keep' : 'pending';
  }
}
