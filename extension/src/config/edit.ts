/**
 * Edits of a `.toolbox.yaml` in the upstream-compatible syntax the CLI reads too: `peer_messaging:`
 * and a named shell's `path`. Pure: text in, text out, through the yaml Document API so the rest
 * of the file, its order and its comments stay as they were.
 */
import { isMap, isScalar, parseDocument, type YAMLMap } from 'yaml';

function comment(text: string): string {
  return ` ${text}`;
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
