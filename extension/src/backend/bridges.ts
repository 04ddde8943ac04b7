/**
 * The bridge registration of each container this window planned: what its shims may open and
 * write (from the plan's mounts, and those of a container that already runs), proximo, the agent
 * homes, and the repository whose remotes answer git credentials.
 */
import { join } from 'node:path';
import type * as vscode from 'vscode';
import { BRIDGE_TCP_ONLY_DIR } from '../contract/shims';
import { HOST } from '../contract/upstream';
import { ensurePrivateDir } from '../bridge/state';
import type { BridgeMount } from '../contract/types';
import type { WorkspaceRegistration } from '../bridge/hub';
import { agentHomes, editRoots } from '../plan/mounts';
import type { PlannedMount } from '../plan/types';
import type { EngineConnector } from './connection';

export interface BridgeRegistryDeps {
  home: () => string;
  connector: EngineConnector;
  log: Pick<vscode.LogOutputChannel, 'warn'>;
  /** Serves the bridge for one container (BridgeHub.ensureWorkspace); none: shells open without it. */
  bridgeFor?: (registration: WorkspaceRegistration) => Promise<BridgeMount>;
  /** toolbox.transport.bridge (User settings): `tcp` keeps the bridge's socket out of the container. */
  transport?: () => 'auto' | 'tcp';
}

/**
 * The run dir the container gets when the bridge is forced to TCP: a directory inside the bridge's
 * run dir, so the container sees no `bridge.sock` and its shims take TCP through
 * host.docker.internal, the path they take where a host socket cannot cross into the container
 * (Docker Desktop's file sharing). The session holder's socket lives there as before
 * (docs/decisions/0058-forced-fallback-transports.md).
 */
export function tcpOnlyRunDir(runDir: string): string {
  const dir = join(runDir, BRIDGE_TCP_ONLY_DIR);
  ensurePrivateDir(dir, process.getuid?.() ?? -1);
  return dir;
}

/** The host sources of a list of mounts that the container can write. */
export function writableSources(mounts: readonly PlannedMount[]): string[] {
  return mounts.filter((m) => m.type === 'bind' && !m.readonly).map((m) => m.source);
}

/** A registration is the container's name on its engine (hub.ts servedKey). */
function registryKey(key: string, engine: string | undefined): string {
  return engine === undefined ? key : `${key}\n${engine}`;
}

export class BridgeRegistry {
  /** By container name and engine. */
  private readonly registrations = new Map<string, WorkspaceRegistration>();

  constructor(private readonly deps: BridgeRegistryDeps) {}

  /** The bridge for one container; a bridge that cannot start costs the shell its shims, not the shell. */
  async serve(
    key: string,
    /** The engine that runs the container (its endpoint): part of the run dir's name. */
    engine: string,
    folder: string,
    proximoEnabled: boolean,
    mounts: PlannedMount[],
    gitRepository?: string,
  ): Promise<BridgeMount | undefined> {
    if (!this.deps.bridgeFor) return undefined;
    const root = join(this.deps.home(), HOST.mountsRoot);
    const homes = agentHomes(mounts);
    try {
      const registration: WorkspaceRegistration = {
        key,
        engine,
        workspaceFolder: folder,
        ...(gitRepository !== undefined ? { gitRepository } : {}),
        mountsRoots: editRoots(mounts),
        // Known before the bridge answers: the plan's read-write mounts, and those of a container
        // that already runs (created by an older plan, or by the CLI), which may have more.
        writableRoots: [...new Set([...writableSources(mounts), ...(await this.existingWritableBinds(key))])],
        proximoEnabled,
        defaultAgentHome: homes.agentHome ?? root,
        defaultCodexHome: homes.codexHome ?? join(root, '.codex'),
      };
      const b = await this.deps.bridgeFor(registration);
      this.registrations.set(registryKey(key, engine), registration);
      return { stateDir: b.stateDir, runDir: this.deps.transport?.() === 'tcp' ? tcpOnlyRunDir(b.runDir) : b.runDir };
    } catch (err) {
      this.deps.log.warn(
        `The bridge for ${key} could not start (${(err as Error).message}); the shell opens without it, so code, xdg-open and git credentials inside it will not reach this window.`,
      );
      return undefined;
    }
  }

  /** The registration this window serves for the container, as it is now. */
  registration(key: string, engine: string): WorkspaceRegistration | undefined {
    const r = this.registrations.get(registryKey(key, engine));
    return r && { ...r, mountsRoots: [...r.mountsRoots], ...(r.writableRoots ? { writableRoots: [...r.writableRoots] } : {}) };
  }

  /**
   * Serves the bridge again for a container a reloaded window reattaches to, from the
   * registration its session record kept (never from anything the container can write). No
   * engine call: the holder's socket may be all that answers. A failure costs the shims, not the shell.
   */
  async restore(registration: WorkspaceRegistration): Promise<void> {
    const id = registryKey(registration.key, registration.engine);
    if (!this.deps.bridgeFor || this.registrations.has(id)) return;
    this.registrations.set(id, registration);
    try {
      await this.deps.bridgeFor(registration);
    } catch (err) {
      this.registrations.delete(id);
      this.deps.log.warn(
        `The bridge for ${registration.key} could not start again (${(err as Error).message}); code, xdg-open and git credentials in its shells will not reach this window.`,
      );
    }
  }

  /**
   * Adds host paths the container can write to its bridge registration (idempotent: the hub
   * updates the settings of a served workspace). Paths only accumulate: a reattached container
   * keeps the read-write mounts it was created with even when the plan no longer has them.
   * /credential never runs git config from what the container can write.
   */
  async addWritableRoots(key: string, engine: string, paths: string[]): Promise<void> {
    const registration = this.registrations.get(registryKey(key, engine));
    if (!registration || !this.deps.bridgeFor) return;
    registration.writableRoots = [...new Set([...(registration.writableRoots ?? []), ...paths])];
    await this.deps.bridgeFor(registration).catch(() => undefined);
  }

  /** The host sources of the read-write binds of the container with this name, if it exists. */
  private async existingWritableBinds(name: string): Promise<string[]> {
    try {
      const { docker } = await this.deps.connector.engine();
      const info = await docker.getContainer(name).inspect();
      return (info.Mounts ?? []).filter((m) => m.Type === 'bind' && m.RW).map((m) => m.Source);
    } catch {
      return []; // no such container yet (or no engine: then no container runs either)
    }
  }
}
