/**
 * The `changes` of `POST /commit`: Dockerfile instructions the daemon applies to the committed
 * image's config (docs/decisions/0047-docker-endpoint-policy.md). Docker joins every `changes`
 * value with newlines and parses the result as a Dockerfile (BuildFromConfig), so one value can
 * continue into the next, a first line can be a parser directive (`# escape=`), and a LABEL key is
 * read after quote removal, escapes and `$` expansion: `LABEL "dev.toolbox".docker-owner=x` sets
 * the owner label. Podman parses them with a simpler reader of its own. So each value must be one
 * plain instruction that both read alike, and a LABEL may name no key in Toolbox's label namespace
 * however it is spelt. Pure: no I/O.
 */
import { forbidden, foldKey, malformed, type Refused } from './wire';

/** What `docker commit --change` takes (Docker's validCommitCommands), ONBUILD left out. */
const COMMIT_INSTRUCTIONS: ReadonlySet<string> = new Set([
  'cmd',
  'entrypoint',
  'env',
  'expose',
  'healthcheck',
  'label',
  'stopsignal',
  'user',
  'volume',
  'workdir',
]);

/**
 * White space that Go's unicode.IsSpace and a JavaScript `\s` do not agree on, or that only one
 * of Docker's readers splits words at (its instruction split takes ASCII only, its word split any
 * Unicode space). The query reader already refuses control characters, tabs and newlines included.
 */
const ODD_SPACE = /[\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** A label key that no reader changes: no quotes, escapes or `$`, nothing to remove or expand. */
const PLAIN_KEY = /^[A-Za-z0-9][A-Za-z0-9._/:-]*$/;

const DO_INSTEAD = 'Give each --change one instruction on one line, label keys unquoted.';

/**
 * The words of an instruction's arguments as Docker's Dockerfile parser splits them (parseWords in
 * its line parsers, the escape token `\`): on white space outside quotes, quotes and escapes kept.
 */
export function dockerfileWords(rest: string): string[] {
  const words: string[] = [];
  let word = '';
  let phase: 'spaces' | 'word' | 'quote' = 'spaces';
  let quote = '';
  let blankOK = false;
  const chars = [...rest];
  for (let i = 0; i <= chars.length; i++) {
    const ch = chars[i];
    if (phase === 'spaces') {
      if (ch === undefined) break;
      if (/\s/.test(ch)) continue;
      phase = 'word';
    }
    if (ch === undefined) {
      if (blankOK || word.length > 0) words.push(word);
      break;
    }
    if (phase === 'word') {
      if (/\s/.test(ch)) {
        phase = 'spaces';
        if (blankOK || word.length > 0) words.push(word);
        word = '';
        blankOK = false;
        continue;
      }
      if (ch === "'" || ch === '"') {
        quote = ch;
        blankOK = true;
        phase = 'quote';
      }
      if (ch === '\\') {
        if (i + 1 === chars.length) continue;
        word += ch;
        i++;
        word += chars[i];
        continue;
      }
      word += ch;
      continue;
    }
    if (ch === quote) phase = 'word';
    if (ch === '\\' && quote !== "'") {
      if (i + 1 === chars.length) {
        phase = 'word';
        continue;
      }
      word += ch;
      i++;
      word += chars[i];
      continue;
    }
    word += ch;
  }
  return words;
}

/**
 * One `changes` value of a commit, checked; `namespace` is Toolbox's label namespace
 * (`dev.toolbox.`), where the owner label lives. Throws Refused.
 */
export function checkCommitChange(value: string, namespace: string): void {
  if (ODD_SPACE.test(value)) throw commitChange(value, 'holds a white space character other than the plain space');
  const line = value.trim();
  if (line === '') return;
  if (line.startsWith('#'))
    throw commitChange(value, 'is a comment or a parser directive (# escape=), which changes how the others are read');
  // The parser joins a line that ends in the escape token to the next: to the next --change.
  if (/\\ *$/.test(line)) throw commitChange(value, 'ends in a backslash, which continues it into the next one');
  const m = /^([A-Za-z]+)(?: +(.*))?$/.exec(line);
  if (!m) throw commitChange(value, 'is not an instruction followed by its arguments');
  const instruction = m[1].toLowerCase();
  const args = m[2] ?? '';
  if (instruction === 'onbuild') {
    throw forbidden(
      'commit-changes',
      `The commit change ${quoted(value)} is an ONBUILD, which runs its instruction in every build FROM the image, whoever makes it; it is not offered. Commit without it.`,
    );
  }
  if (!COMMIT_INSTRUCTIONS.has(instruction))
    throw malformed('query', `The commit change ${quoted(value)} is not an instruction docker commit takes.`);
  if (instruction !== 'label') return;

  // However the key is spelt: no reader can make a namespace key out of text without it.
  const bare = foldKey(args.replace(/["'\\]/g, ''));
  if (bare.includes(foldKey(namespace))) throw namespaceLabel(value, namespace);
  const words = dockerfileWords(args);
  if (words.length === 0 || words[0].startsWith('--')) throw commitChange(value, 'is a LABEL without a key, or with a flag');
  const keys = words[0].includes('=')
    ? words.map((w) => {
        const eq = w.indexOf('=');
        if (eq < 0) throw commitChange(value, `has ${JSON.stringify(w)}, which is not key=value`);
        return w.slice(0, eq);
      })
    : // Docker's older form, `LABEL key value`: the key is the first word, the rest its value.
      [args.trim().split(/ +/)[0]];
  for (const key of keys) {
    if (!PLAIN_KEY.test(key)) throw commitChange(value, `has the label key ${JSON.stringify(key)}, which is quoted, escaped or expanded`);
    if (foldKey(key).startsWith(foldKey(namespace))) throw namespaceLabel(value, namespace);
  }
}

/** A change as a refusal quotes it: JSON-quoted, at most 120 characters. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 120 ? `${value.slice(0, 119)}…` : value);
}

function commitChange(value: string, why: string): Refused {
  return forbidden(
    'commit-changes',
    `The commit change ${quoted(value)} ${why}; it is refused rather than read one way here and another by the engine. ${DO_INSTEAD}`,
  );
}

function namespaceLabel(value: string, namespace: string): Refused {
  return forbidden(
    'owner-label',
    `The commit change ${quoted(value)} sets a label in ${namespace}, Toolbox's own namespace, where the endpoint's owner label says which workspace an object is. Leave it out.`,
  );
}
