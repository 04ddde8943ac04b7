/**
 * What the UI needs from the layers below, as one interface. The composition root builds the
 * real one (engineBackend.ts); commands, views and terminals only see this, so they stay thin.
 */
import type * as vscode from 'vscode';
import type { ResolvedConfig } from '../config/model';
import type { ObjectNames } from '../contract/types';
import type { SessionPlan } from '../plan/types';
import type { AgentSessionSummary, AnchorSummary, ContainerSummary, ProximoSummary, SocketVolumeSummary } from '../ui/model';
import type { ShellStarter } from '../ui/terminal';

export interface ShellRequest {
  /** Absolute host path of the workspace folder. */
  folder: string;
  /** Per-run override of peer messaging (`--peer` / `--peer=false`); undefined: the setting. */
  peer?: boolean;
  /** A named shell (`toolbox shell --name`). */
  namedShell?: string;
}

export interface FolderPlan {
  resolved: ResolvedConfig;
  /** The config issues as sentences (errors stop the open, warnings go to the log). */
  problems: Array<{ error: boolean; text: string }>;
  plan: SessionPlan;
  warnings: string[];
  /** Build args of the extension's own runtime image when the plan runs it; else a custom image. */
  ownImageBuildArgs?: Record<string, string>;
}

export interface OpenedSession {
  id: string;
  name: string;
  /** connect, start or create. */
  action: string;
  peerActive: boolean;
  warnings: string[];
}

export interface SessionProgress {
  /** A short step for the notification ("Building the runtime image"). */
  step(message: string): void;
  /** Raw log text (image build output) for the output channel. */
  log(text: string): void;
}

export interface Snapshot {
  containers: ContainerSummary[];
  anchor: AnchorSummary;
  volume: SocketVolumeSummary;
  /** Containers sharing the anchor's PID namespace. */
  members: string[];
  sessions: AgentSessionSummary[];
}

export interface ToolboxBackend {
  readonly names: ObjectNames;
  /** Reads the folder's config and plans its shell; no Docker. */
  planShell(request: ShellRequest): Promise<FolderPlan>;
  /** Whether the folder's settings want peer messaging now. */
  peerWanted(folder: string): Promise<boolean>;
  /** Ensures image, anchor and volume, then connects, starts or creates the container. */
  openSession(prepared: FolderPlan, progress: SessionProgress, signal: AbortSignal): Promise<OpenedSession>;
  /** Starts TTY execs in one container. */
  shellStarter(containerId: string): Promise<ShellStarter>;
  snapshot(): Promise<Snapshot>;
  proximo(): Promise<ProximoSummary>;
  stopContainer(name: string): Promise<void>;
  /** Every toolbox container, the anchor last. Returns the names stopped. */
  stopAll(): Promise<string[]>;
  /** Calls back on every Docker event about our objects until disposed. */
  watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable>;
}
