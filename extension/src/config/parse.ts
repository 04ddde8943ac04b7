/**
 * Parse one `.toolbox.yaml` text into a config layer. Pure and total: it never throws, every
 * issue names the file, the key and the 1-based line of that key, and a file with any error
 * contributes no layer at all (never half a file). Unknown keys are warnings and are dropped.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import type { ConfigIssue, MountOverride, ShellConfig, TextSpan, ToolboxConfig } from './model';
import { fileSchema, mountSchema, mountsRootProblem, shellBlockSchema, type ToolboxFile } from './schema';
import { closest } from './suggest';

export interface ParsedFile {
  layer: Partial<ToolboxConfig>;
  issues: ConfigIssue[];
  /** The text is not YAML at all (its one issue says where), as opposed to YAML with a bad value. */
  notYaml?: boolean;
  /**
   * The 1-based line of each key the layer sets, named as in `ResolvedConfig.origins` (`pull`,
   * `env.FOO`, `shells.dev`, `mounts[0]`, `worktree.seed`); empty when the file has an error.
   */
  keyLines?: Record<string, number>;
}

type Path = ReadonlyArray<PropertyKey>;

/** Upstream removed per-tool switches; like the CLI, a `tools:` block is only warned about. */
export const TOOLS_REMOVED_MESSAGE =
  'is no longer supported and is ignored: every tool in the image is always installed, as with the toolbox CLI. Remove the block to silence this warning.';

export interface ParseContext {
  /** The user's home: values that are judged against it (mounts_root) are checked when known. */
  home?: string;
}

export function parseConfigFile(text: string, filePath: string, context: ParseContext = {}): ParsedFile {
  try {
    return parseText(text, filePath, context);
  } catch (err) {
    // Belt and braces: nothing below is expected to throw, but a config file must never crash us.
    const message = `could not be read as configuration (${errorText(err)}); fix or remove the file`;
    return { layer: {}, issues: [{ severity: 'error', source: filePath, key: '', message }] };
  }
}

function parseText(text: string, filePath: string, context: ParseContext): ParsedFile {
  const lineCounter = new LineCounter();
  // merge: go-yaml v3 (upstream) honours `<<` merge keys.
  const doc = parseDocument(text, { lineCounter, merge: true });
  const error = (key: string, line: number | undefined, message: string, span?: TextSpan): ConfigIssue => ({
    severity: 'error',
    source: filePath,
    key,
    line,
    message,
    ...(span ? { span } : {}),
  });

  const syntax = doc.errors[0];
  if (syntax) {
    // yaml appends " at line N, column M:" and a code excerpt; the line goes in its own field.
    const what = syntax.message.split(' at line ')[0];
    const [start, end] = syntax.linePos ?? [];
    const span = start && {
      line: start.line,
      column: start.col,
      endLine: end?.line ?? start.line,
      endColumn: end && (end.line > start.line || end.col > start.col) ? end.col : start.col + 1,
    };
    return { layer: {}, issues: [error('', start?.line, `is not valid YAML: ${what}`, span)], notYaml: true };
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { layer: {}, issues: [error('', undefined, `is not valid YAML: ${errorText(err)}`)], notYaml: true };
  }
  if (raw === null || raw === undefined) return { layer: {}, issues: [] }; // empty or comments only
  if (isPlainObject(raw)) {
    // `image:` with no value is a common template line; like upstream it reads as "not set".
    for (const [key, value] of Object.entries(raw)) if (value === null) delete raw[key];
  }

  const lineOf = (path: Path) => lineOfKey(doc, lineCounter, path);
  const spanOf = (path: Path, part: 'key' | 'value') => spanAt(doc, lineCounter, path, part);
  const warnings: ConfigIssue[] = [];
  let result = fileSchema.safeParse(raw);
  if (!result.success) {
    const errors: ConfigIssue[] = [];
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          const path = [...issue.path, key];
          const meant = closest(key, knownKeysAt(issue.path));
          // Renaming onto a key the mapping already has would make a duplicate key: said, not offered as the fix.
          const siblings = valueAt(raw, issue.path);
          const renamable = meant !== undefined && !(isPlainObject(siblings) && Object.hasOwn(siblings, meant));
          warnings.push({
            severity: 'warning',
            source: filePath,
            key: formatKey(path),
            line: lineOf(path),
            message: meant === undefined ? 'unknown key, ignored' : `unknown key, ignored; did you mean ${meant}?`,
            ...withSpan(spanOf(path, 'key')),
            unknownKey: true,
            ...(renamable ? { suggestion: meant } : {}),
          });
          deleteAt(raw, issue.path, key);
        }
      } else {
        errors.push(
          error(formatKey(issue.path), lineOf(issue.path), explain(issue, valueAt(raw, issue.path)), spanOf(issue.path, 'value')),
        );
      }
    }
    if (errors.length > 0) return { layer: {}, issues: byLine([...warnings, ...errors]) };
    // Only unknown keys: they are gone from `raw` now, so the rest validates on its own.
    result = fileSchema.safeParse(raw);
    if (!result.success) {
      const issues = result.error.issues.map((i) =>
        error(formatKey(i.path), lineOf(i.path), explain(i, valueAt(raw, i.path)), spanOf(i.path, 'value')),
      );
      return { layer: {}, issues: byLine([...warnings, ...issues]) };
    }
  }
  const rootProblem = result.data.mounts_root === undefined ? undefined : mountsRootProblem(result.data.mounts_root, context.home);
  if (rootProblem !== undefined) {
    return {
      layer: {},
      issues: byLine([...warnings, error('mounts_root', lineOf(['mounts_root']), rootProblem, spanOf(['mounts_root'], 'value'))]),
    };
  }
  if (result.data.tools !== undefined) {
    warnings.push({
      severity: 'warning',
      source: filePath,
      key: 'tools',
      line: lineOf(['tools']),
      message: TOOLS_REMOVED_MESSAGE,
      ...withSpan(spanOf(['tools'], 'key')),
    });
  }
  if (result.data.browser_bridge !== undefined) {
    const alsoBridge = result.data.bridge !== undefined ? ' (bridge is also set and wins)' : '';
    warnings.push({
      severity: 'warning',
      source: filePath,
      key: 'browser_bridge',
      line: lineOf(['browser_bridge']),
      message: `is deprecated; rename it to bridge${alsoBridge}`,
      ...withSpan(spanOf(['browser_bridge'], 'key')),
    });
  }
  return { layer: toLayer(result.data), issues: byLine(warnings), keyLines: keyLinesOf(doc, lineCounter) };
}

/** Lines of the keys a layer sets (see ParsedFile.keyLines). */
function keyLinesOf(doc: Document, lineCounter: LineCounter): Record<string, number> {
  const lines: Record<string, number> = {};
  const lineOfNode = (node: unknown) => {
    const start = rangeStart(node);
    return start === undefined ? undefined : lineCounter.linePos(start).line;
  };
  const set = (name: string, node: unknown) => {
    const line = lineOfNode(node);
    if (line !== undefined) lines[name] = line;
  };
  if (!isMap(doc.contents)) return lines;
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    set(key, pair.key);
    if ((key === 'env' || key === 'shells' || key === 'worktree') && isMap(pair.value)) {
      for (const sub of pair.value.items) set(`${key}.${isScalar(sub.key) ? String(sub.key.value) : String(sub.key)}`, sub.key);
    } else if (key === 'mounts' && isSeq(pair.value)) {
      pair.value.items.forEach((item, i) => set(`mounts[${i}]`, item));
    }
  }
  return lines;
}

/** snake_case file keys to the camelCase model; keys the file does not set stay absent. */
function toLayer(f: ToolboxFile): Partial<ToolboxConfig> {
  return withoutUndefined<Partial<ToolboxConfig>>({
    shell: f.shell,
    agent: f.agent,
    image: f.image,
    registryMirror: f.registry_mirror,
    pull: f.pull,
    mountsRoot: f.mounts_root,
    bridge: f.bridge ?? f.browser_bridge,
    proximo: f.proximo,
    managedStatusline: f.managed_statusline,
    imageReclaim: f.image_reclaim,
    peerMessaging: f.peer_messaging,
    env: f.env,
    shells: f.shells && mapValues(f.shells, (s) => withoutUndefined<ShellConfig>({ path: s.path, env: s.env ?? {} })),
    mounts: f.mounts?.map((m) =>
      withoutUndefined<MountOverride>({
        name: m.name,
        source: m.source,
        target: m.target,
        readonly: m.readonly,
        createIfMissing: m.create_if_missing,
        symlinkFrom: m.symlink_from,
        disabled: m.disabled,
      }),
    ),
    inheritHostAuth: f.inherit_host_auth,
    worktreeSeed: f.worktree?.seed,
    egress: f.egress && withoutUndefined({ mode: f.egress.mode, allow: f.egress.allow, defaults: f.egress.defaults }),
  });
}

/** The 1-based line of the deepest node of `path` that exists (the key itself when it does). */
function lineOfKey(doc: Document, lineCounter: LineCounter, path: Path): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(segment));
      if (!pair) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
      node = node.items[segment];
      offset = rangeStart(node) ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

/** The keys a mapping at `path` may have, for "did you mean": live keys only (not tools, not browser_bridge). */
function knownKeysAt(path: Path): string[] {
  if (path.length === 0) return Object.keys(fileSchema.shape).filter((k) => k !== 'tools' && k !== 'browser_bridge');
  if (path[0] === 'mounts' && path.length === 2) return Object.keys(mountSchema.shape);
  if (path[0] === 'shells' && path.length === 2) return Object.keys(shellBlockSchema.shape);
  if (path[0] === 'worktree' && path.length === 1) return Object.keys(fileSchema.shape.worktree.unwrap().shape);
  return [];
}

/**
 * Where `path` is written: its key (`part` 'key') or its value, else the deepest part of the
 * path that exists (a missing key: the mapping that lacks it), else the start of the file.
 */
export function spanAt(doc: Document, lineCounter: LineCounter, path: Path, part: 'key' | 'value'): TextSpan | undefined {
  let node: unknown = doc.contents;
  let keyNode: unknown;
  let found = true;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(segment));
      if (!pair) {
        found = false;
        break;
      }
      keyNode = pair.key;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
      keyNode = undefined;
      node = node.items[segment];
    } else {
      found = false;
      break;
    }
  }
  // A value that is not there (`image:` alone) has no range: the key stands for it. A missing key:
  // the key of the mapping that lacks it.
  const target = found ? (part === 'key' && keyNode !== undefined ? keyNode : nodeRange(node) ? node : keyNode) : (keyNode ?? node);
  const range = nodeRange(target) ?? nodeRange(keyNode);
  if (!range) return undefined;
  const start = lineCounter.linePos(range[0]);
  const end = lineCounter.linePos(Math.max(range[0] + 1, range[1]));
  // A block (a mapping or list value) is marked on its first line only; the rest of that line.
  if (end.line > start.line) return { line: start.line, column: start.col, endLine: start.line, endColumn: Number.MAX_SAFE_INTEGER };
  return { line: start.line, column: start.col, endLine: end.line, endColumn: end.col };
}

function nodeRange(node: unknown): [number, number] | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range ? [range[0], range[1]] : undefined;
}

function withSpan(span: TextSpan | undefined): { span?: TextSpan } {
  return span ? { span } : {};
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range?.[0];
}

/** A schema message plus what was written: `expected true or false, got "maybe"`. */
export function explain(issue: z.core.$ZodIssue, value: unknown): string {
  if (value === undefined && issue.code === 'invalid_type') return 'is required';
  if (issue.message.startsWith('expected')) return `${issue.message}, got ${describeValue(value)}`;
  return issue.message;
}

export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'a mapping';
  if (typeof value === 'string') {
    const quoted = JSON.stringify(value);
    return quoted.length > 80 ? `${quoted.slice(0, 77)}..."` : quoted;
  }
  return String(value);
}

/** `mounts[1].target`, `env.FOO`, or '' for the whole file. */
export function formatKey(path: Path): string {
  return path.map((seg, i) => (typeof seg === 'number' ? `[${seg}]` : `${i === 0 ? '' : '.'}${String(seg)}`)).join('');
}

/** `~/.toolbox.yaml:12: peer_messaging: expected true or false, got "maybe"`. */
export function formatIssue(issue: ConfigIssue, home?: string): string {
  let source = issue.source;
  if (home && (source === home || source.startsWith(home.endsWith('/') ? home : `${home}/`))) {
    source = `~${source.slice(home.replace(/\/+$/, '').length)}`;
  }
  const where = issue.line !== undefined ? `${source}:${issue.line}` : source;
  return issue.key ? `${where}: ${issue.key}: ${issue.message}` : `${where}: ${issue.message}`;
}

function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[seg];
  }
  return node;
}

function deleteAt(root: unknown, path: Path, key: string): void {
  const parent = valueAt(root, path);
  if (isPlainObject(parent)) delete parent[key];
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withoutUndefined<T extends object>(obj: { [K in keyof T]?: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

function mapValues<A, B>(rec: Record<string, A>, fn: (a: A) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, fn(v)]));
}

function byLine(issues: ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Where `path` is written in `text` (see spanAt): for checks made after parsing. */
export function locate(text: string, path: Path, part: 'key' | 'value'): TextSpan | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, merge: true });
  return spanAt(doc, lineCounter, path, part);
}
