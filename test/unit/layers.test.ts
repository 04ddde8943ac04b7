/**
 * The source reads one way down (docs/architecture.md): contract → config → plan → host → proximo
 * → engine / bridge → backend → ui → extension.ts. Every import in extension/src is checked
 * against that order, type-only imports included: a type reaching up is still a dependency a
 * reader has to follow. Within a layer no two files import each other, directly or round a circle.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve(__dirname, '../../../extension/src');

/** What each layer may import, besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  contract: [],
  config: ['contract'],
  plan: ['contract', 'config'],
  // Programs and connections on the host (child processes, host git, ssh): no vscode, no Docker.
  // plan, for the worktree layout host/worktree.ts carries out (plan/worktree.ts).
  host: ['contract', 'plan'],
  proximo: ['contract', 'config', 'host'],
  engine: ['contract', 'config', 'plan', 'host'],
  bridge: ['contract', 'config', 'plan', 'host', 'proximo'],
  backend: ['contract', 'config', 'plan', 'host', 'proximo', 'engine', 'bridge'],
  // The backend's roles and their data types (backend/api.ts, backend/api/): never engine/, bridge/
  // or proximo/ themselves. host/, for what activation asks the host before the backend loads.
  ui: ['contract', 'config', 'plan', 'host', 'backend'],
  // The composition root (extension.ts) wires everything.
  root: ['contract', 'config', 'plan', 'host', 'proximo', 'engine', 'bridge', 'backend', 'ui'],
};

function layerOf(file: string): string {
  const rel = relative(SRC, file).split(sep);
  return rel.length === 1 ? 'root' : (rel[0] as string);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Relative module specifiers of every import, export-from, import() and require() in the text. */
export function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s+'(\.[^']*)'/g,
    /\bimport\(\s*'(\.[^']*)'\s*\)/g,
    /\brequire\(\s*'(\.[^']*)'\s*\)/g,
    /^import\s+'(\.[^']*)'/gm,
  ];
  for (const p of patterns) for (const m of text.matchAll(p)) found.push(m[1] as string);
  return found;
}

/** `file → target` for every import that goes against the layer order. */
export function violations(file: string, text: string): string[] {
  const from = layerOf(file);
  const allowed = ALLOWED[from];
  if (!allowed) return [`${relative(SRC, file)}: unknown layer "${from}" (add it to ALLOWED and to docs/architecture.md)`];
  return relativeImports(text).flatMap((spec) => {
    const to = layerOf(resolve(dirname(file), spec));
    return to === from || allowed.includes(to) ? [] : [`${relative(SRC, file)} (${from}) imports ${spec} (${to})`];
  });
}

/** The source file a relative specifier of `file` names (`x` is `x.ts`, or `x/index.ts` for a folder). */
function resolveImport(file: string, spec: string): string {
  const base = resolve(dirname(file), spec);
  return existsSync(`${base}.ts`) ? `${base}.ts` : join(base, 'index.ts');
}

/**
 * The import circles among `graph`'s files (file → the files it imports), each as its files in a
 * path that closes on its first; one per strongly connected component of more than one file, or
 * of one file that imports itself (Tarjan's algorithm).
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.reverse());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** Every source file and the source files it imports. */
function importGraph(): Map<string, string[]> {
  return new Map(sourceFiles(SRC).map((f) => [f, relativeImports(readFileSync(f, 'utf8')).map((spec) => resolveImport(f, spec))]));
}

describe('layering of extension/src', () => {
  it('has no import against the direction contract → config → plan → host → proximo → engine/bridge → backend → ui', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.length > 40, `found only ${files.length} source files under ${SRC}`);
    assert.deepEqual(
      files.flatMap((f) => violations(f, readFileSync(f, 'utf8'))),
      [],
    );
  });

  it('has no import circle between files, type-only imports included', () => {
    assert.deepEqual(
      importCycles(importGraph()).map((c) => c.map((f) => relative(SRC, f)).join(' → ')),
      [],
    );
  });

  it('fails on a circle deliberately added: plan/types.ts importing a type back from plan/protect.ts', () => {
    const graph = importGraph();
    assert.deepEqual(importCycles(graph), []);
    const types = join(SRC, 'plan', 'types.ts');
    const text = `import type { ProtectionPlan } from './protect';\n${readFileSync(types, 'utf8')}`;
    graph.set(
      types,
      relativeImports(text).map((spec) => resolveImport(types, spec)),
    );
    const cycles = importCycles(graph).map((c) => c.map((f) => relative(SRC, f)).sort());
    assert.deepEqual(cycles, [[join('plan', 'protect.ts'), join('plan', 'types.ts')]]);
    // A file that imports itself is a circle too; a folder's import is its index.ts.
    assert.deepEqual(importCycles(new Map([['a.ts', ['a.ts']]])), [['a.ts']]);
    assert.equal(resolveImport(join(SRC, 'ui', 'x.ts'), '../plan/doctor'), join(SRC, 'plan', 'doctor', 'index.ts'));
  });

  it('catches an upward import, a type-only one, and one through require()', () => {
    const planFile = join(SRC, 'plan', 'x.ts');
    assert.deepEqual(violations(planFile, "import { a } from '../engine/open';"), ['plan/x.ts (plan) imports ../engine/open (engine)']);
    assert.equal(violations(join(SRC, 'contract', 'x.ts'), "import type { B } from '../config/model';").length, 1);
    assert.equal(violations(join(SRC, 'engine', 'x.ts'), "const u = require('../ui/shells/toolboxShellPty');").length, 1);
    assert.deepEqual(violations(join(SRC, 'ui', 'x.ts'), "import { c } from '../backend/api';\nimport { d } from './model';"), []);
    // The UI takes the bridge's and the engine's types through backend/api (backend/api/editor.ts).
    assert.equal(violations(join(SRC, 'ui', 'x.ts'), "import type { ApprovalRequest } from '../bridge/route';").length, 1);
    assert.equal(violations(join(SRC, 'ui', 'views', 'x.ts'), "import type { A } from '../../engine/open';").length, 1);
  });

  it('spawns host programs only in host/process.ts', () => {
    const spawning = sourceFiles(SRC).filter((f) => /['"](node:)?child_process['"]/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(
      spawning.map((f) => relative(SRC, f)),
      [join('host', 'process.ts')],
    );
  });

  it('keeps host/ below the layers that run host programs', () => {
    assert.equal(violations(join(SRC, 'host', 'x.ts'), "import { e } from '../engine/client';").length, 1);
    assert.equal(violations(join(SRC, 'host', 'x.ts'), "import type { F } from '../config/model';").length, 1);
    for (const layer of ['proximo', 'engine', 'bridge', 'backend', 'ui']) {
      assert.deepEqual(violations(join(SRC, layer, 'x.ts'), "import { g } from '../host/process';"), [], layer);
    }
  });
});
