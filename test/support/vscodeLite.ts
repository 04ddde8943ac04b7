/**
 * A small, real stand-in for the `vscode` module so the UI model (RefreshManager, the engine
 * backend) runs in a plain Node benchmark or engine test: a working EventEmitter, default settings, a silent
 * log channel. Installed before anything requires 'vscode'.
 */
import Module from 'node:module';

class EventEmitter<T> {
  private listeners = new Set<(e: T) => void>();
  readonly event = (listener: (e: T) => void) => {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

const silent = () => undefined;
const channel = {
  trace: silent,
  debug: silent,
  info: silent,
  warn: silent,
  error: silent,
  append: silent,
  appendLine: silent,
  show: silent,
  dispose: silent,
};

export const vscodeLite = {
  EventEmitter,
  Disposable: class {
    constructor(private readonly fn: () => void) {}
    dispose(): void {
      this.fn();
    }
  },
  Uri: { file: (path: string) => ({ fsPath: path, path, scheme: 'file' }), parse: (s: string) => ({ toString: () => s }) },
  /** VS Code's values. */
  InputBoxValidationSeverity: { Info: 1, Warning: 2, Error: 3 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  workspace: {
    isTrusted: true,
    workspaceFolders: [],
    getConfiguration: () => ({ get: <T>(_k: string, d?: T) => d, inspect: () => undefined }),
  },
  /** The extensions this window runs (backend/settings.ts hostTools): none. */
  extensions: { all: [] as Array<{ id: string; packageJSON: unknown }> },
  window: { createOutputChannel: () => channel },
  env: { openExternal: async () => true },
  commands: { executeCommand: async () => undefined },
};

export const silentLog = channel;

let installed = false;
export function installVscodeLite(): void {
  if (installed) return;
  installed = true;
  const m = Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown };
  const load = m._load;
  m._load = function (req: string, ...rest: unknown[]) {
    return req === 'vscode' ? vscodeLite : load.call(this, req, ...rest);
  };
}
