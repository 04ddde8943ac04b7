/**
 * The engine connection of a window: made on first use (never at activation), one at a time,
 * retried after a failure, forgotten when toolbox.dockerHost changes. It also knows whether the
 * engine runs on another machine, and offers Select Engine's candidates and the event feed.
 */
import { hostname } from 'node:os';
import type * as vscode from 'vscode';
import { ToolboxError } from '../contract/errors';
import type { ObjectNames } from '../contract/types';
import { connectEngine, describeConnection, describeSource, probeEngines, type EngineConnection } from '../engine/client';
import type { EngineContext } from '../engine/context';
import { concernsOurObjects, watchEngineEvents } from '../engine/events';
import { engineLocality, remoteFolderError, type EngineLocality } from '../engine/remote';
import type { EngineChoice } from './api';
import type { BackendSettings } from './settings';

export interface ConnectionDeps {
  names: ObjectNames;
  home: () => string;
  settings: BackendSettings;
  log: Pick<vscode.LogOutputChannel, 'info'>;
}

export class EngineConnector {
  private connection: Promise<EngineConnection> | undefined;
  /** Whether the connected engine is on another machine (asked once per connection). */
  private locality: Promise<EngineLocality> | undefined;

  constructor(private readonly deps: ConnectionDeps) {}

  /** The engine for a call; a failure to connect says what to fix and offers the setting. */
  async engine(): Promise<EngineContext> {
    const { docker } = await this.connected();
    return { docker, names: this.deps.names };
  }

  /** The connection itself (endpoint, version), connecting when needed. */
  connected(): Promise<EngineConnection> {
    if (!this.connection) {
      const connection = connectEngine({ setting: this.deps.settings.dockerHost(), env: process.env, home: this.deps.home() }).catch(
        (err: Error) => {
          // Every connection failure names toolbox.dockerHost as a fix (engine/client.ts).
          throw new ToolboxError('engine-unreachable', err.message, ['open-docker-host-setting'], { cause: err });
        },
      );
      this.connection = connection;
      this.locality = undefined;
      connection.then(
        (c) => this.deps.log.info(`Connected to ${describeConnection(c)}, API ${c.apiVersion}.`),
        () => {
          if (this.connection === connection) this.connection = undefined;
        },
      );
    }
    return this.connection;
  }

  /** The connection in use, if one was made and succeeded; never connects. */
  async current(): Promise<EngineConnection | undefined> {
    return this.connection?.catch(() => undefined);
  }

  async engineChoices(): Promise<EngineChoice[]> {
    const current = await this.current();
    const probes = await probeEngines({ setting: this.deps.settings.dockerHost(), env: process.env, home: this.deps.home() });
    return probes.map((p) => ({
      endpoint: p.endpoint.endpoint,
      source: describeSource(p.endpoint.source),
      ...(p.version ? { version: `${p.product ?? 'Docker'} ${p.version} (API ${p.apiVersion ?? '?'})` } : {}),
      ...(p.problem ? { problem: p.problem } : {}),
      current: current?.endpoint.endpoint === p.endpoint.endpoint,
    }));
  }

  /**
   * Whether the engine is on another machine: for ssh:// and tcp:// endpoints, its GET /info
   * Name against os.hostname() (engine/remote.ts). Asked once per connection.
   */
  async locate(): Promise<EngineLocality> {
    const connection = await this.connected();
    if (!this.locality) {
      const endpoint = connection.endpoint;
      this.locality = (
        endpoint.options.socketPath !== undefined
          ? Promise.resolve(undefined)
          : connection.docker.info().then((i: { Name?: unknown }) => (typeof i.Name === 'string' ? i.Name : undefined))
      ).then((name) => {
        const locality = engineLocality(endpoint, name, hostname());
        if (locality.remote) this.deps.log.info(`The engine at ${endpoint.endpoint} runs on ${locality.engineHost}, not on this machine.`);
        return locality;
      });
      this.locality.catch(() => (this.locality = undefined));
    }
    return this.locality;
  }

  /** Whether the engine is on another machine, local when that cannot be told (no engine). */
  async locateOrLocal(): Promise<EngineLocality> {
    return this.locate().catch((): EngineLocality => ({ remote: false }));
  }

  /**
   * Refuses, before anything is made, an open of a folder on this machine while the engine runs
   * on another (docs/decisions/0035-remote-engine-refuses-local-folders.md).
   */
  async refuseIfRemote(folder: string, locality?: EngineLocality): Promise<void> {
    const where = locality ?? (await this.locate());
    if (!where.remote) return;
    const { endpoint } = await this.connected();
    throw remoteFolderError(folder, endpoint.endpoint, where);
  }

  /** The Workspaces view's description of the engine in use; undefined before a connection. */
  async describe(locality: EngineLocality): Promise<string | undefined> {
    const connection = await this.current();
    if (!connection) return undefined;
    // The machine first for a remote engine: the view's description is cut at its width.
    return locality.remote
      ? `Docker ${connection.version} on the machine ${locality.engineHost}, at ${connection.endpoint.endpoint} (${describeSource(connection.endpoint.source)})`
      : describeConnection(connection);
  }

  async watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable> {
    await this.engine();
    const names = this.deps.names;
    const watch = watchEngineEvents({
      // A reconnect (after the feed dropped) asks for the engine in use now, not the first one.
      connect: async () => (await this.engine()).docker,
      onEvent: (e) => {
        if (concernsOurObjects(e, names)) onEvent();
      },
      onStateChange: (state, err) => {
        if (err) onError(err);
        if (state === 'connected') onEvent();
      },
    });
    return { dispose: () => watch.dispose() };
  }

  /** Forget the connection; `whenIdle`: close it once shells running over it are done. */
  close(options?: { whenIdle?: boolean }): void {
    const old = this.connection;
    this.connection = undefined;
    this.locality = undefined;
    old?.then((c) => c.close(options)).catch(() => undefined);
  }
}
