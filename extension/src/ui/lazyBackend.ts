/**
 * Defers loading the engine, config and bridge code (zod, yaml, dockerode: ~0.3 s to evaluate)
 * until the first command or visible view needs it, so activation stays cheap.
 */
import type * as vscode from 'vscode';
import type { ObjectNames } from '../contract/types';
import type { SessionProgress, SessionRecord, ShellRequest, ToolboxBackend } from '../backend/api';
import type { HolderAddress } from '../engine/sessions';
import type { HostReach } from '../plan/posture';

export interface LoadedBackend extends ToolboxBackend, vscode.Disposable {
  resetConnection(): void;
}

export class LazyBackend implements ToolboxBackend, vscode.Disposable {
  private loaded: LoadedBackend | undefined;

  constructor(
    readonly names: ObjectNames,
    private readonly load: () => LoadedBackend,
  ) {}

  private get real(): LoadedBackend {
    return (this.loaded ??= this.load());
  }

  prepareShell(request: ShellRequest) {
    return this.real.prepareShell(request);
  }
  reattachShell(record: SessionRecord) {
    return this.real.reattachShell(record);
  }
  endShell(record: SessionRecord) {
    return this.real.endShell(record);
  }
  shellEnded(container: { id: string; name: string; holder?: HolderAddress }) {
    return this.real.shellEnded(container);
  }
  namedShells(folder: string) {
    return this.real.namedShells(folder);
  }
  prepareNamedShellCreate(folder: string, name: string, path: string) {
    return this.real.prepareNamedShellCreate(folder, name, path);
  }
  peerWanted(folder: string) {
    return this.real.peerWanted(folder);
  }
  peerSetting(folder: string) {
    return this.real.peerSetting(folder);
  }
  seccompSetting(folder: string) {
    return this.real.seccompSetting(folder);
  }
  writeProjectPeerMessaging(folder: string, on: boolean) {
    return this.real.writeProjectPeerMessaging(folder, on);
  }
  pinUserPeerMessaging(on: boolean) {
    return this.real.pinUserPeerMessaging(on);
  }
  resolvedConfigText(folder: string) {
    return this.real.resolvedConfigText(folder);
  }
  configProblems(file: string, text: string) {
    return this.real.configProblems(file, text);
  }
  engineChoices() {
    return this.real.engineChoices();
  }
  snapshot() {
    return this.real.snapshot();
  }
  proximo() {
    return this.real.proximo();
  }
  stopContainer(name: string) {
    return this.real.stopContainer(name);
  }
  createAgentWorktree(...args: Parameters<ToolboxBackend['createAgentWorktree']>) {
    return this.real.createAgentWorktree(...args);
  }
  agentWorktrees(...args: Parameters<ToolboxBackend['agentWorktrees']>) {
    return this.real.agentWorktrees(...args);
  }
  agentWorktreeRisk(...args: Parameters<ToolboxBackend['agentWorktreeRisk']>) {
    return this.real.agentWorktreeRisk(...args);
  }
  removeAgentWorktree(...args: Parameters<ToolboxBackend['removeAgentWorktree']>) {
    return this.real.removeAgentWorktree(...args);
  }
  syncAgentWorktree(...args: Parameters<ToolboxBackend['syncAgentWorktree']>) {
    return this.real.syncAgentWorktree(...args);
  }
  agentWorktreeChanges(...args: Parameters<ToolboxBackend['agentWorktreeChanges']>) {
    return this.real.agentWorktreeChanges(...args);
  }
  agentWorktreeFileAt(...args: Parameters<ToolboxBackend['agentWorktreeFileAt']>) {
    return this.real.agentWorktreeFileAt(...args);
  }
  pruneAgentWorktrees(...args: Parameters<ToolboxBackend['pruneAgentWorktrees']>) {
    return this.real.pruneAgentWorktrees(...args);
  }
  stopAllTargets() {
    return this.real.stopAllTargets();
  }
  stopAll(only?: readonly string[]) {
    return this.real.stopAll(only);
  }
  prepareTurnOff(folder: string, reach: HostReach) {
    return this.real.prepareTurnOff(folder, reach);
  }
  rebuildRuntimeImage(options: { noCache: boolean }, progress: SessionProgress, signal: AbortSignal) {
    return this.real.rebuildRuntimeImage(options, progress, signal);
  }
  watchEvents(onEvent: () => void, onError: (err: Error) => void) {
    return this.real.watchEvents(onEvent, onError);
  }
  /** The endpoint setting changed: the next call connects anew. */
  resetConnection(): void {
    this.loaded?.resetConnection();
  }
  dispose(): void {
    this.loaded?.dispose();
  }
}
