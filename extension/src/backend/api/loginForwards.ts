/** Login callback forwards as the UI sees them (backend/loginForwards.ts, issue 29). */

/** One open forward: the host's 127.0.0.1:<port> relayed into the container's own loopback. */
export interface LoginForwardInfo {
  port: number;
  /** The container the callback reaches (its name: text from the engine, shown plain). */
  container: string;
  /** How it was asked for: a URL the container opened, or the user's command. */
  origin: 'url' | 'command';
  openedAt: number;
  /** When it closes at the latest (ms since the epoch). */
  closesAt: number;
}

/** What happened to a forward, for the UI's notifications and status bar. */
export type LoginForwardEvent =
  | { kind: 'opened'; forward: LoginForwardInfo }
  | {
      kind: 'closed';
      forward: LoginForwardInfo;
      /** answered: the container answered and the connections ended; the others in their words. */
      end: 'answered' | 'timed-out' | 'stopped' | 'connections' | 'failed';
    }
  /** A URL the container opened named a callback the host could not listen for: said to the user. */
  | { kind: 'failed'; port: number; container: string; message: string };
