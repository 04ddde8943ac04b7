/**
 * Stopping containers: one by name, a worktree's under either of its names, and Stop Every
 * Container (the anchor last).
 */
import type * as vscode from 'vscode';
import type { ObjectNames } from '../contract/types';
import type { EngineContext } from '../engine/context';
import { removeLeftBehind, type DockerChildren } from '../engine/dockerEndpoint/children';
import { listOwnedContainers, stopAll, stopContainer } from '../engine/lifecycle';
import { workspaceContainerName } from '../plan/naming';
import type { ContainerService } from './api';
import type { EngineConnector } from './connection';
import type { RuntimeImages } from './images';

/** The names a worktree's container has: the path-scoped workspace name, peer on and off. */
export function worktreeContainerNames(path: string, names: ObjectNames): string[] {
  return [workspaceContainerName(path, { peer: true }, names), workspaceContainerName(path, { peer: false }, names)];
}

export class Containers implements ContainerService {
  constructor(
    private readonly connector: EngineConnector,
    private readonly images: RuntimeImages,
    private readonly log: Pick<vscode.LogOutputChannel, 'warn'>,
  ) {}

  async stopContainer(name: string): Promise<void> {
    await stopContainer(await this.connector.engine(), name);
  }

  /** Stops a container; `now`: killed at once, for one that holds nothing of the user's yet (made by a create just now). */
  async drop(name: string, now: boolean): Promise<void> {
    await stopContainer(await this.connector.engine(), name, now ? { graceSeconds: 0 } : {});
  }

  /** Stops the worktree's container under either name the CLI or the extension gives it (peer on or off). */
  async stopWorktreeContainers(path: string): Promise<void> {
    let engine: EngineContext;
    try {
      engine = await this.connector.engine();
    } catch (err) {
      this.log.warn(`Could not reach Docker to stop the container of ${path}: ${(err as Error).message}`);
      return;
    }
    for (const name of worktreeContainerNames(path, engine.names)) {
      await stopContainer(engine, name).catch((err: Error) => this.log.warn(`Could not stop ${name}: ${err.message}`));
    }
  }

  async stopAllTargets(): Promise<string[]> {
    const ctx = await this.connector.engine();
    const names = (await listOwnedContainers(ctx)).map((c) => c.name);
    return [...names.filter((n) => n !== ctx.names.anchor).sort(), ...names.filter((n) => n === ctx.names.anchor)];
  }

  async stopAll(only?: readonly string[]): Promise<string[]> {
    return stopAll(await this.connector.engine(), { only: only && new Set(only) });
  }

  async removeLeftBehind(owner: string): Promise<DockerChildren> {
    return removeLeftBehind(await this.connector.engine(), owner);
  }

  rebuildRuntimeImage(...args: Parameters<RuntimeImages['rebuildRuntimeImage']>) {
    return this.images.rebuildRuntimeImage(...args);
  }
}
