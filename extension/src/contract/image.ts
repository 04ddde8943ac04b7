/**
 * Facts of the runtime image this extension builds from images/runtime and shims/: where it is
 * kept and published, its labels and build context, the session holder's wire protocol
 * (images/runtime/toolbox-session, held to it by test/unit/contract.test.ts), and the agents it
 * installs.
 */

/**
 * The session holder's wire protocol (images/runtime/toolbox-session, engine/sessions.ts). The
 * holder greets first; a client writes nothing until it has read the greeting, so a socket that
 * is not a holder never receives a byte from us.
 */
export const SESSION_PROTOCOL = {
  magic: 'TBXSESSION1\n',
  /** The largest frame payload either side accepts. */
  maxFrame: 1 << 20,
  /** The holder's socket, in the bridge run dir (host-reachable) or the fallback dir. */
  socket: 'sessions.sock',
  frames: {
    hello: 'H',
    data: 'D',
    resize: 'R',
    ping: 'P',
    info: 'I',
    exit: 'X',
    error: 'E',
    pong: 'Q',
  },
} as const;

/** Repository of the runtime image this extension builds; the tag is a hash of its build context. */
export const RUNTIME_IMAGE_REPO = 'toolbox-vscode/runtime';
/** Where tests (and the extension under a test name prefix) put the images they build. */
export const RUNTIME_IMAGE_TEST_REPO = 'toolbox-vscode-test/runtime';
/**
 * Where the GitHub workflow publishes the runtime image (.github/workflows/runtime-image.yml):
 * `<registry>/<path>:<tag>`, the tag being the same content hash the extension computes
 * (`runtimeContextHash`; scripts/runtime-image-tag.mjs prints it). A `registry_mirror` replaces
 * the registry part, as upstream's does for its own image.
 */
export const RUNTIME_IMAGE_PUBLISHED = { registry: 'ghcr.io', path: 'toolbox-dev/toolbox-vscode-runtime' } as const;
/** Labels on the runtime image. */
export const RUNTIME_IMAGE_LABELS = {
  /** Set by the Dockerfile: the image is a toolbox runtime image. */
  runtime: 'dev.toolbox.runtime',
  /** The build context hash the image was built from (its tag's hash); a pulled image must carry the one it was pulled for. */
  contextHash: 'dev.toolbox.runtime.context',
  /**
   * Set by the Dockerfile ("1"): the entrypoint starts the session holder when ENV.sessionSocket
   * is set, so the host waits for it on the socket instead of starting it by an exec.
   */
  holderAtStart: 'dev.toolbox.runtime.session-holder',
} as const;
/** Paths of the runtime image's build context and Dockerfile, relative to the extension root. */
export const RUNTIME_IMAGE_CONTEXT = {
  dirs: ['images/runtime', 'shims'],
  dockerfile: 'images/runtime/Dockerfile',
} as const;

/**
 * The agents Toolbox can start in a terminal (Start Claude Code, Start Codex): the command the
 * runtime image installs, and the name a person knows it by.
 */
export const AGENTS = {
  claude: { command: 'claude', name: 'Claude Code' },
  codex: { command: 'codex', name: 'Codex' },
} as const;
