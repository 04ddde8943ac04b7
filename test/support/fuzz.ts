/**
 * Seeded randomness for the fuzz tests of the Docker endpoint (test/unit/docker-endpoint-policy.test.ts,
 * test/engine/docker-endpoint-policy.test.ts): a PRNG whose seed replays a failure, and spellings of
 * a JSON key that Go's encoding/json reads as the same field, or that the policy must not know.
 */

/** mulberry32: a small seeded PRNG, so a failure replays from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Characters that look like ASCII letters, and the ones Go's case folding maps onto them (ſ is s, K is k). */
const LOOKALIKES: Record<string, readonly string[]> = {
  s: ['\u017f', '\u0455'],
  S: ['\u017f', '\u0405'],
  k: ['\u212a', '\u03ba'],
  K: ['\u212a', '\u039a'],
  e: ['\u0435', '\u00e9'],
  i: ['\u0456', '\u0131'],
  o: ['\u043e', '\u03bf'],
  a: ['\u0430'],
  p: ['\u0440'],
  P: ['\u0420'],
  C: ['\u0421'],
  c: ['\u0441'],
};

export function caseVariant(key: string, rng: Rng): string {
  for (;;) {
    const v = [...key].map((ch) => (rng.chance(0.5) ? ch.toLowerCase() : ch.toUpperCase())).join('');
    if (v !== key) return v;
    if (key.toLowerCase() === key.toUpperCase()) return key + ' ';
  }
}

/** A key spelled some other way: each variant is a key Docker reads as the same field, or a key the policy must not know. */
export function keyVariant(key: string, rng: Rng, mapKey: boolean): { text: string; exact: boolean } {
  const kinds = mapKey
    ? ['exact', 'case', 'lower', 'upper', 'escaped']
    : ['exact', 'case', 'lower', 'upper', 'escaped', 'lookalike', 'zero-width', 'space', 'fullwidth', 'combining'];
  const kind = rng.pick(kinds);
  const json = (s: string) => JSON.stringify(s);
  switch (kind) {
    case 'exact':
      return { text: json(key), exact: true };
    case 'case':
      return { text: json(caseVariant(key, rng)), exact: false };
    case 'lower':
      return { text: json(key.toLowerCase()), exact: key.toLowerCase() === key };
    case 'upper':
      return { text: json(key.toUpperCase()), exact: key.toUpperCase() === key };
    case 'escaped':
      // Decodes to the exact key: the value must be refused by the rule itself.
      return {
        text: `"${[...key].map((ch) => (rng.chance(0.4) ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch === '"' || ch === '\\' ? `\\${ch}` : ch)).join('')}"`,
        exact: true,
      };
    case 'lookalike': {
      const positions = [...key].map((ch, i) => (LOOKALIKES[ch] ? i : -1)).filter((i) => i >= 0);
      if (positions.length === 0) return { text: json(`${key}\u200b`), exact: false };
      const chars = [...key];
      const i = rng.pick(positions);
      chars[i] = rng.pick(LOOKALIKES[chars[i]]);
      return { text: json(chars.join('')), exact: false };
    }
    case 'zero-width': {
      const i = rng.int(key.length + 1);
      return { text: json(key.slice(0, i) + rng.pick(['\u200b', '\u200d', '\ufeff', '\u2060']) + key.slice(i)), exact: false };
    }
    case 'space':
      return { text: json(rng.pick([` ${key}`, `${key} `, `${key}\t`])), exact: false };
    case 'fullwidth': {
      const i = rng.int(key.length);
      const c = key.charCodeAt(i);
      return {
        text: json(key.slice(0, i) + (c > 0x20 && c < 0x7f ? String.fromCharCode(c + 0xfee0) : '\uff3f') + key.slice(i + 1)),
        exact: false,
      };
    }
    default: {
      const i = rng.int(key.length) + 1;
      return { text: json(key.slice(0, i) + '\u0301' + key.slice(i)), exact: false };
    }
  }
}
