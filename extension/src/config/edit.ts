/**
 * Edits a project `.toolbox.yaml` to turn one host capability off for the folder, in the
 * upstream-compatible syntax the CLI reads too: a `mounts:` entry `{name, disabled: true}`
 * (a patch of the default mount of that name, or the user mount so named), or a key dropped
 * from `inherit_host_auth`. Pure: text in, text out, through the yaml Document API so the rest
 * of the file, its order and its comments stay as they were.
 *
 * Lists are replaced whole by a higher layer (config/resolve.ts, like upstream's viper): a
 * project file that has no `mounts:` (or `inherit_host_auth:`) yet takes the list that applies
 * now (from ~/.toolbox.yaml) along with the change, so nothing else the container gets changes.
 */
import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import type { MountOverride } from './model';

export type TurnOff = { kind: 'disable-mount'; name: string } | { kind: 'drop-inherit-host-auth'; key: string };

/** The lists that apply to the folder now, for a project file that does not set them yet. */
export interface EffectiveLists {
  mounts: readonly MountOverride[];
  inheritHostAuth: readonly string[];
}

export interface TurnOffEdit {
  text: string;
  /** The file already said so (the container predates the change, or another tool wrote it). */
  alreadyOff: boolean;
}

/**
 * `text` with `change` applied. `note` becomes a comment above the changed entry (a sentence
 * without the leading `#`); `copiedFrom` names the file the copied list came from.
 * Throws when the file's top level is not a mapping (the loader refuses such a file anyway).
 */
export function applyTurnOff(text: string, change: TurnOff, effective: EffectiveLists, note: string, copiedFrom: string): TurnOffEdit {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`it is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  }
  if (!isMap(doc.contents)) throw new Error('its top level is not a mapping of configuration keys');
  const alreadyOff =
    change.kind === 'disable-mount'
      ? disableMount(doc, change.name, effective, note, copiedFrom)
      : dropAuth(doc, change.key, effective, note);
  return alreadyOff ? { text, alreadyOff } : { text: doc.toString(), alreadyOff };
}

function comment(text: string): string {
  return ` ${text}`;
}

/** The key's sequence, created (or copied from `seed`) when the file has none; `block` turns a flow list into a block one. */
function ensureSeq(doc: Document, key: string, seed: unknown[], seedNote: string | undefined, block: boolean): YAMLSeq {
  const current = doc.get(key, true);
  if (isSeq(current)) {
    if (block) current.flow = false;
    return current;
  }
  const seq = doc.createNode(seed) as YAMLSeq;
  seq.flow = false;
  if (seed.length > 0 && seedNote !== undefined) {
    (seq.items[0] as { commentBefore?: string }).commentBefore = comment(seedNote);
  }
  // A scalar key node, so a comment can sit above it.
  (doc.contents as YAMLMap).set(doc.createNode(key), seq);
  return seq;
}

function disableMount(doc: Document, name: string, effective: EffectiveLists, note: string, copiedFrom: string): boolean {
  const had = isSeq(doc.get('mounts', true));
  const seq = ensureSeq(
    doc,
    'mounts',
    had ? [] : effective.mounts.map(toFileEntry),
    `Copied from ${copiedFrom}: a project mounts: list replaces that file's list, so these keep applying.`,
    true,
  );
  const entries = seq.items.filter((item): item is YAMLMap => isMap(item) && String(item.get('name')) === name);
  const last = entries.at(-1);
  if (last) {
    const alreadyOff = last.get('disabled') === true;
    if (!alreadyOff) {
      const value = doc.createNode(true);
      value.comment = comment(note);
      last.set('disabled', value);
    }
    return alreadyOff;
  }
  const entry = doc.createNode({ name, disabled: true });
  entry.commentBefore = comment(note);
  seq.items.push(entry);
  return false;
}

function dropAuth(doc: Document, key: string, effective: EffectiveLists, note: string): boolean {
  const had = isSeq(doc.get('inherit_host_auth', true));
  const seq = ensureSeq(doc, 'inherit_host_auth', had ? [] : [...effective.inheritHostAuth], undefined, false);
  const before = seq.items.length;
  seq.items = seq.items.filter((item) => !(isScalar(item) && item.value === key));
  const alreadyOff = seq.items.length === before && (had || !effective.inheritHostAuth.includes(key));
  if (!alreadyOff) {
    const pair = (doc.contents as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === 'inherit_host_auth');
    if (pair && isScalar(pair.key)) pair.key.commentBefore = comment(note);
    if (seq.items.length === 0) seq.flow = true; // `inherit_host_auth: []`, not an empty block
  }
  return alreadyOff;
}

/** A model mount override as the file spells it (snake_case, only the keys that are set). */
function toFileEntry(m: MountOverride): Record<string, unknown> {
  const out: Record<string, unknown> = { name: m.name };
  if (m.source !== undefined) out.source = m.source;
  if (m.target !== undefined) out.target = m.target;
  if (m.readonly !== undefined) out.readonly = m.readonly;
  if (m.createIfMissing !== undefined) out.create_if_missing = m.createIfMissing;
  if (m.disabled !== undefined) out.disabled = m.disabled;
  return out;
}

/**
 * `text` with the top-level `peer_messaging:` set to `on` (upstream's key; the CLI reads it too),
 * the rest of the file as it was. A new key gets `note` as a comment above it. Throws when the
 * file is not valid YAML or its top level is not a mapping.
 */
export function setPeerMessaging(text: string, on: boolean, note: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`it is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  }
  if (!isMap(doc.contents)) throw new Error('its top level is not a mapping of configuration keys');
  const map = doc.contents as YAMLMap;
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === 'peer_messaging');
  if (pair) {
    if (isScalar(pair.value)) pair.value.value = on;
    else pair.value = doc.createNode(on);
    return doc.toString();
  }
  const key = doc.createNode('peer_messaging');
  key.commentBefore = comment(note);
  map.set(key, doc.createNode(on));
  return doc.toString();
}

/** The header upstream's writers put on a config file they create (`configedit` headerComment). */
export const NEW_CONFIG_HEADER = [
  '.toolbox.yaml — toolbox configuration.',
  "Run 'toolbox config example' for an annotated template covering every field.",
  'Docs: https://github.com/filippolmt/toolbox',
];

/**
 * `text` with `shells.<key>.path` set to `path`, as upstream's `toolbox shell <name> --create`
 * writes it into ~/.toolbox.yaml (`configedit.SetShell`): `key` is chosen by `keyFor` from the
 * keys the file's `shells:` already has (so an entry spelled differently is edited in place),
 * sibling keys of the entry (its `env:`) and the rest of the file stay, and a file being created
 * (`text` undefined) gets upstream's header comment. Throws when the file is not valid YAML or
 * its top level or `shells:` is not a mapping.
 */
export function setShellPath(
  text: string | undefined,
  keyFor: (existing: string[]) => string,
  path: string,
): { text: string; key: string } {
  const doc = parseDocument(text ?? '');
  if (doc.errors.length > 0) throw new Error(`it is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  }
  if (!isMap(doc.contents)) throw new Error('its top level is not a mapping of configuration keys');
  if (text === undefined) doc.commentBefore = NEW_CONFIG_HEADER.map((l) => ` ${l}`).join('\n');
  const root = doc.contents as YAMLMap;
  const current = doc.get('shells', true);
  let shellsMap: YAMLMap;
  if (current === undefined || (isScalar(current) && current.value === null)) {
    shellsMap = doc.createNode({}) as YAMLMap;
    root.set(doc.createNode('shells'), shellsMap);
  } else if (isMap(current)) {
    shellsMap = current as YAMLMap;
  } else {
    throw new Error('its shells: is not a mapping of shell names');
  }
  const existing = shellsMap.items.flatMap((p) => (isScalar(p.key) ? [String(p.key.value)] : []));
  const key = keyFor(existing);
  const found: unknown = shellsMap.get(key, true);
  if (found === undefined || (isScalar(found) && found.value === null)) {
    shellsMap.set(doc.createNode(key), doc.createNode({ path }));
  } else if (isMap(found)) {
    found.set('path', path);
  } else {
    throw new Error(`its shells.${key} is not a mapping`);
  }
  return { text: doc.toString(), key };
}
