/**
 * What every engine operation needs: the client, the namespace's object names, a log sink.
 */
import type Docker from 'dockerode';
import type { ObjectNames } from '../contract/types';

export interface EngineContext {
  docker: Docker;
  names: ObjectNames;
  /** Progress and diagnostics for the Toolbox log; optional in tests. */
  log?(line: string): void;
}
