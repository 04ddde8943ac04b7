/**
 * Child process of the startup benchmark: installs a stand-in `vscode` module (every property a
 * callable, constructible stand-in), then times `require` of the bundle and `activate()`, and
 * separately the first-use load of the backend bundle. Prints one JSON line, then must exit by
 * itself (bench/exitGuard.ts fails the benchmark when it does not).
 */
import Module from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { armExitGuard } from './exitGuard';

function standIn(): unknown {
  const fn = function () {
    return standIn();
  };
  const assigned = new Map<PropertyKey, unknown>();
  return new Proxy(fn, {
    get: (_t, prop) => {
      if (assigned.has(prop)) return assigned.get(prop);
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => '';
      if (prop === 'then') return undefined;
      // The views start hidden (activation by command), the workspace trusted.
      if (prop === 'visible') return false;
      if (prop === 'isTrusted') return true;
      return standIn();
    },
    set: (_t, prop, value) => {
      assigned.set(prop, value);
      return true;
    },
    apply: () => standIn(),
    construct: () => standIn() as object,
  });
}

// Top-level names are copied as own properties by esbuild's ESM interop, so they are listed
// from @types/vscode: every exported namespace, class, enum and const.
const dts = readFileSync(require.resolve('@types/vscode/index.d.ts'), 'utf8');
const vscodeStub: Record<string, unknown> = {};
for (const m of dts.matchAll(/^\s*export (?:namespace|class|enum|const|function) (\w+)/gm)) vscodeStub[m[1]!] = standIn();
const load = (Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown })._load;
(Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown })._load = function (req: string, ...rest: unknown[]) {
  return req === 'vscode' ? vscodeStub : load.call(this, req, ...rest);
};

const dist = process.argv[2]!;
const t0 = performance.now();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the measured bundle is loaded at run time
const ext = require(join(dist, 'extension.js')) as { activate(ctx: unknown): unknown };
const t1 = performance.now();
const context = { subscriptions: [] as unknown[], extensionPath: join(dist, '..'), globalState: standIn(), workspaceState: standIn() };
ext.activate(context);
const t2 = performance.now();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
require(join(dist, 'backend.js'));
const t3 = performance.now();
console.log(JSON.stringify({ require: t1 - t0, activate: t2 - t1, backend: t3 - t2 }));
// Nothing activate() started may keep this process alive: the benchmark waits for it to exit.
armExitGuard('bench/startupChild (require and activate() of dist/extension.js, then dist/backend.js loaded)');
