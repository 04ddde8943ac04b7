/**
 * Values several layers of the extension share among themselves, with no program outside it held
 * to them: the oldest engine API spoken, the mark of a protected-path placeholder, the agent
 * launcher's exit mark and the bounds of login-callback forwards. What the extension shares with
 * the shims, the agent hook, the runtime image and the upstream CLI is in shims.ts, agentHook.ts,
 * image.ts and upstream.ts.
 */

/**
 * The oldest Docker Engine API the extension speaks (docs/decisions/0034-engine-api-floor.md):
 * Docker 20.10 and Podman 4.3's compat API both report 1.41. engine/client.ts refuses an older
 * engine at connect; Run Doctor (plan/doctor/) reports the engine's API against it.
 */
export const MIN_API_VERSION = '1.41';

/**
 * A placeholder stands in for a protected path that does not exist yet, so that the container
 * cannot create it (plan/protect.ts makes the list, engine/placeholders.ts the files): an empty
 * directory, or an empty file where git reads a file (a config, `.gitmodules`), made by the user
 * and given this modification time, which is how toolbox tells its own placeholders from the
 * user's files when it removes them again (docs/decisions/0042-protected-paths-read-only.md).
 */
export const PLACEHOLDER = {
  /** 2005-03-18T01:58:31Z: no program or archive sets it by chance, and any change to the entry moves it. */
  mtimeSeconds: 1_111_111_111,
  /**
   * What a `commondir` placeholder in a git directory says: "the common directory is this one".
   * Git follows it to the same directory (an empty one is a fatal error), so host git and the
   * container's git work as without it, and the container cannot write one that points elsewhere
   * (docs/decisions/0059-git-indirections-read-only.md).
   */
  commonDirText: '.\n',
} as const;

/**
 * The mark the agent launcher (plan/worktree.ts AGENT_LAUNCH_SCRIPT) prints when the agent exits,
 * before the shell that follows starts: a private OSC, `ESC ] 7717 ; agent-exit ; <status> ;
 * <agent> BEL`, which xterm.js ignores and ui/agents/agentStream.ts reads (ui/agents/agentState.ts: the agent
 * ended with that status). Private, not OSC 133;D: shell integration ends every command with D.
 */
export const AGENT_EXIT_MARK = { osc: 7717, tag: 'agent-exit' } as const;

/**
 * Login callbacks forwarded from the host's loopback into a container's (issue 29,
 * docs/decisions/0053-login-callbacks-forwarded-per-login.md). A CLI that logs in through the
 * browser (`codex login`, `wrangler login`, …) listens on 127.0.0.1:<port> inside the container and
 * names that port in the authorize URL's redirect; the host listens on 127.0.0.1:<same port> and
 * relays each connection through an exec into the container's own loopback.
 */
export const LOGIN_FORWARD = {
  /** Ports below are never bound (privileged on the host). */
  minPort: 1024,
  maxPort: 65535,
  /** A forward closes this long after it opened (or was asked for again), whatever else happens. */
  lifetimeMs: 10 * 60_000,
  /**
   * Once a connection the container answered has ended, the forward closes after this long with no
   * connection open: the callback and the page it redirects to (codex's /success) are over.
   */
  idleAfterAnswerMs: 20_000,
  /** Connections relayed at once per forward; more are closed at once. */
  maxConcurrent: 8,
  /** Connections relayed in all per forward; then it closes. */
  maxConnections: 64,
  /** Forwards open at once in a window. */
  maxForwards: 4,
  /** /open waits this long for a forward to start (engine, inspect, listen) before it opens the URL anyway. */
  startMs: 10_000,
  /** The relay's connect to the container's 127.0.0.1:<port> must succeed within this (seconds). */
  relayConnectSeconds: 5,
  /** After the host side of a connection ended, the relay waits this long for the container's answer (seconds). */
  relayDrainSeconds: 30,
  /** What the relay's stderr may add to the log, per connection. */
  relayErrorChars: 300,
} as const;
