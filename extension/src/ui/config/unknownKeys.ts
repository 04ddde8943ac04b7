/**
 * What Open Toolbox Shell says about keys a config file has that mean nothing (issue 26, item 10):
 * a typo such as `peer_mesaging` keeps the default silently, so the open says it once per folder
 * and file content (ui/config/unknownKeyNotice.ts), with the key it probably meant. The key is text from
 * a file the container can write: quoted, one line, bounded (ui/plainText.ts). Pure.
 */
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import type { UnknownKey } from '../../config/openIssues';
import { HOST } from '../../contract/upstream';
import { plainText, quoted } from '../plainText';

/** Keys named in one notice; the rest are counted. */
export const NOTICE_KEYS = 3;
/** Characters of one key shown. */
const KEY_CHARS = 60;

/** The quick fix's title (ui/config/configDiagnostics.ts): our own words and a key or mount name of ours, never the file's text. */
export function quickFixTitle(replacement: string): string {
  return `Change to ${replacement}`;
}

/** How a config file is named to the user: `~/.toolbox.yaml` for the user's own, `.toolbox.yaml` for a project's. */
export function configFileLabel(file: string, home: string): string {
  return file === join(home, HOST.userConfig) ? `~/${HOST.userConfig}` : basename(file);
}

/** The notice's text, or undefined when there is nothing to say. */
export function unknownKeysNotice(keys: readonly UnknownKey[], home: string): string | undefined {
  if (keys.length === 0) return undefined;
  const one = (k: UnknownKey) => {
    const where = `${configFileLabel(k.file, home)}${k.line !== undefined ? ` line ${k.line}` : ''}`;
    const meant = k.suggestion !== undefined ? `; did you mean ${k.suggestion}?` : '';
    return `${quoted(k.key, 'message', KEY_CHARS)} (${where}${meant})`;
  };
  const shown = keys.slice(0, NOTICE_KEYS).map(one).join(', ');
  const more = keys.length > NOTICE_KEYS ? `, and ${keys.length - NOTICE_KEYS} more` : '';
  const subject =
    keys.length === 1 ? 'this key is not a Toolbox setting, so it is ignored' : 'these keys are not Toolbox settings, so they are ignored';
  return plainText(`Toolbox: ${subject} and the default applies: ${shown}${more}. The Problems panel has the fix.`, 'message');
}

/** Names one folder's unknown keys in exactly these files' contents: a changed file is said again. */
export function noticeFingerprint(keys: readonly UnknownKey[], contents: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256');
  for (const file of [...new Set(keys.map((k) => k.file))].sort()) {
    hash.update(`${file}\0${contents.get(file) ?? ''}\0`);
  }
  for (const k of keys) hash.update(`${k.file}\0${k.key}\0${k.line ?? ''}\0${k.suggestion ?? ''}\0`);
  return hash.digest('hex').slice(0, 32);
}
