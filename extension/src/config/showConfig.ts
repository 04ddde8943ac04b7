/**
 * The text of Show Resolved Configuration (issue 15, item 14): every key with the value the next
 * shell would use and, as a trailing comment, the layer that set it, in the shape and order of
 * upstream's `toolbox config show --origin` (cmd/config.go writeResolvedConfigWithOrigin;
 * configedit/provenance.go attributes maps and mounts per entry). YAML, so it reads like the
 * files it comes from. Pure.
 */
import * as path from 'node:path';
import type { KeyOrigin, MountOverride, ResolvedConfig } from './model';
import { formatIssue } from './parse';
import type { SettingScope } from './settingScope';

export interface ShowContext {
  /** The workspace folder the configuration is for. */
  folder: string;
  home?: string;
  /** Where a setting that decides was set (VS Code's scopes). */
  settingScopes?: Record<string, SettingScope>;
}

/** At most this many lines of a project's widening are listed. */
const WIDENING_LINES_MAX = 100;

/** Upstream's fallbacks for keys the extension leaves unset (config/keys.go Effective). */
const AGENT_DEFAULT = 'claude';
const MOUNTS_ROOT_DEFAULT = '~/.toolbox';

export function renderResolvedConfig(resolved: ResolvedConfig, context: ShowContext): string {
  const { config, origins, widening } = resolved;
  const out: string[] = [];
  // Keys whose project value was left out for want of the user's approval (plan/projectReach.ts).
  const refused = new Set(widening && !widening.approved ? widening.items.map((i) => i.key) : []);
  const note = (key: string) =>
    `  # ${originLabel(origins[key] ?? { from: 'default' }, context)}${refused.has(key) ? '; the project asks for more: not applied' : ''}`;
  const line = (key: string, value: string) => out.push(`${key}: ${value}${note(key)}`);
  const tri = (v: boolean | undefined) => (v === undefined ? 'auto' : String(v));

  out.push(
    `# Toolbox configuration for ${shortPath(context.folder, context)}, as the next shell would use it.`,
    '# Each value ends with where it comes from. Highest first: VS Code settings,',
    '# TOOLBOX_* variables, the project .toolbox.yaml, ~/.toolbox.yaml, the defaults.',
    '# Read-only: edit a file or a setting; this view updates when you save.',
    '# The toolbox CLI shows the same with: toolbox config show --origin',
    `# Files read: ${resolved.files.length ? resolved.files.map((f) => shortPath(f, context)).join(', ') : 'none'}`,
  );
  for (const issue of resolved.issues) {
    const kind = issue.severity === 'error' ? 'Not applied' : 'Warning';
    const source = path.isAbsolute(issue.source) ? shortPath(issue.source, context) : issue.source;
    out.push(`# ${kind}: ${oneLine(formatIssue({ ...issue, source }))}`);
  }
  if (widening) {
    out.push(
      widening.approved
        ? '# Applied as you approved for this folder, beyond your own config:'
        : '# Not applied: the project asks for more than your own config gives (approve it when the next shell asks):',
    );
    for (const item of widening.items.slice(0, WIDENING_LINES_MAX)) {
      const from = item.origin ? ` (${originLabel(item.origin, context)})` : '';
      out.push(`#   ${oneLine(item.adds)}${from}`);
    }
    if (widening.items.length > WIDENING_LINES_MAX) out.push(`#   … and ${widening.items.length - WIDENING_LINES_MAX} more`);
  }
  out.push('');

  line('shell', scalar(config.shell));
  line('agent', scalar(config.agent ?? AGENT_DEFAULT));
  line('image', scalar(config.image ?? ''));
  line('registry_mirror', scalar(config.registryMirror ?? ''));
  line('pull', scalar(config.pull));
  line('mounts_root', scalar(config.mountsRoot ?? MOUNTS_ROOT_DEFAULT));
  line('bridge', tri(config.bridge));
  line('proximo', tri(config.proximo));
  line('managed_statusline', tri(config.managedStatusline));
  line('image_reclaim', tri(config.imageReclaim));
  line('peer_messaging', String(config.peerMessaging));

  const map = (key: string, entries: Record<string, string>) => {
    const names = Object.keys(entries).sort();
    if (names.length === 0) return line(key, '{}');
    out.push(`${key}:`);
    for (const name of names) out.push(`  ${scalar(name)}: ${scalar(entries[name]!)}${note(`${key}.${name}`)}`);
  };
  const list = (key: string, items: readonly string[] | undefined, indent = '') => {
    const label = `${indent}${key.split('.').pop()}`;
    if (!items || items.length === 0) return out.push(`${label}: []${note(key)}`);
    out.push(`${label}:${note(key)}`);
    for (const item of items) out.push(`${indent}  - ${scalar(item)}`);
  };

  map('env', config.env);
  out.push('worktree:');
  list('worktree.seed', config.worktreeSeed, '  ');
  list('inherit_host_auth', config.inheritHostAuth);

  const shells = Object.keys(config.shells).sort();
  if (shells.length === 0) line('shells', '{}');
  else {
    out.push('shells:');
    for (const name of shells) {
      const shell = config.shells[name]!;
      out.push(`  ${scalar(name)}:${note(`shells.${name}`)}`);
      if (shell.path !== undefined) out.push(`    path: ${scalar(shell.path)}`);
      const env = Object.keys(shell.env).sort();
      if (env.length > 0) {
        out.push('    env:');
        for (const k of env) out.push(`      ${scalar(k)}: ${scalar(shell.env[k]!)}`);
      }
    }
  }

  if (config.mounts.length === 0) line('mounts', '[]');
  else {
    out.push(`mounts:${note('mounts')}`);
    config.mounts.forEach((m, i) => out.push(...mountLines(m, note(`mounts[${i}]`))));
  }
  return `${out.join('\n')}\n`;
}

function mountLines(m: MountOverride, comment: string): string[] {
  const lines: string[] = [];
  const item = (text: string) => lines.push(`${lines.length === 0 ? '  - ' : '    '}${text}${lines.length === 0 ? comment : ''}`);
  if (m.name !== undefined) item(`name: ${scalar(m.name)}`);
  if (m.source !== undefined) item(`source: ${scalar(m.source)}`);
  if (m.target !== undefined) item(`target: ${scalar(m.target)}`);
  if (m.readonly !== undefined) item(`readonly: ${m.readonly}`);
  if (m.createIfMissing !== undefined) item(`create_if_missing: ${m.createIfMissing}`);
  if (m.symlinkFrom !== undefined) item(`symlink_from: ${scalar(m.symlinkFrom)}`);
  if (m.disabled !== undefined) item(`disabled: ${m.disabled}`);
  if (lines.length === 0) item('{}');
  return lines;
}

/** `default`, `~/.toolbox.yaml:12`, `.toolbox.yaml:3`, `env TOOLBOX_PULL`, `setting toolbox.peerMessaging (folder)`. */
export function originLabel(origin: KeyOrigin, context: ShowContext): string {
  switch (origin.from) {
    case 'default':
      return 'default';
    case 'user-file':
    case 'project-file': {
      const file = shortPath(origin.file, context);
      return origin.line === undefined ? file : `${file}:${origin.line}`;
    }
    case 'env':
      return `env ${origin.variable}`;
    case 'setting': {
      const scope = context.settingScopes?.[origin.setting];
      return scope === undefined ? `setting ${origin.setting}` : `setting ${origin.setting} (${scope})`;
    }
  }
}

/** Inside the folder: relative to it; inside home: `~/…`; else absolute. */
function shortPath(file: string, context: ShowContext): string {
  const folder = path.resolve(context.folder);
  const resolved = path.resolve(file);
  if (resolved !== folder && resolved.startsWith(`${folder}${path.sep}`)) return path.relative(folder, resolved);
  const home = context.home && path.resolve(context.home);
  if (home && home !== path.sep && (resolved === home || resolved.startsWith(`${home}${path.sep}`))) {
    return `~${resolved.slice(home.length)}`;
  }
  return resolved;
}

/**
 * A YAML scalar on one line: plain when it reads back as the same string, else double-quoted
 * (JSON's escapes are YAML's), so a value with `#`, `: ` or a newline cannot break the view.
 */
export function scalar(value: string): string {
  const plain =
    /^[A-Za-z0-9_./~+-][A-Za-z0-9_./~@+=:,-]*$/.test(value) &&
    !/:$/.test(value) &&
    !/^(true|false|yes|no|on|off|null|~|[-+]?[0-9][0-9_.eE+-]*|0x[0-9a-fA-F]+|\.inf|\.nan)$/i.test(value);
  return plain ? value : JSON.stringify(value);
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
