/**
 * Defers loading the engine, config and bridge code (zod, yaml, dockerode: ~0.3 s to evaluate)
 * until the first command or visible view needs it, so activation stays cheap. One proxy: any
 * method called on it loads the backend and calls the same method there; a new backend method
 * needs nothing here.
 */
import type { ObjectNames } from '../contract/types';
import type { LoadedBackend } from '../backend/api';

/**
 * A stand-in for the object `load` makes, made only when a method is first called. `eager`
 * answers without loading (values known up front, and calls that mean nothing before a load).
 */
export function lazyProxy<T extends object>(load: () => T, eager: Partial<T>): T {
  let loaded: T | undefined;
  const real = (): T => (loaded ??= load());
  return new Proxy(eager as T, {
    get(target, prop) {
      if (prop in target) return target[prop as keyof T];
      // A promise-like check (await, Promise.resolve) must not load the backend.
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      return (...args: unknown[]) => (real()[prop as keyof T] as (...a: unknown[]) => unknown)(...args);
    },
  });
}

/**
 * The window's backend: loaded on first use. Until then, `names` is known, and forgetting the
 * connection or disposing has nothing to do. Listening to the egress log does not load it (the
 * composition root listens at activation): the listeners are handed over when it loads, and until
 * then no container has a log.
 */
export function lazyBackend(names: ObjectNames, load: () => LoadedBackend): LoadedBackend {
  let loaded: LoadedBackend | undefined;
  const egressListeners = new Set<(container: string) => void>();
  return lazyProxy(
    () => {
      loaded = load();
      loaded.onDidChangeEgress((container) => {
        for (const listener of [...egressListeners]) listener(container);
      });
      return loaded;
    },
    {
      names,
      resetConnection: () => loaded?.resetConnection(),
      dispose: () => loaded?.dispose(),
      onDidChangeEgress: (listener) => {
        egressListeners.add(listener);
        return { dispose: () => void egressListeners.delete(listener) };
      },
      egressLog: (container) => loaded?.egressLog(container) ?? [],
    },
  );
}
