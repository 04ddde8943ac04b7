/**
 * Host tools that run files of the folder (issue 38, item 5; docs/decisions/0060): VS Code
 * extensions on this host that load config files, plugins, interpreters and build scripts from
 * the workspace folder, which its container can write (the folder is bind-mounted read-write).
 * The protected paths (plan/protect.ts) keep the files VS Code and git themselves run read-only;
 * they cannot cover every file an extension runs. So the Workspaces view (under "Can reach on
 * this host") and the Doctor name the installed extensions Toolbox knows, and what VS Code's
 * Restricted Mode (Workspace Trust) does with them: the user's choice, not a fault.
 *
 * Pure: the enabled extensions and the trust state come in (backend/settings.ts hostTools).
 */

/** What an extension declares it does in Restricted Mode (`capabilities.untrustedWorkspaces.supported`). */
export type RestrictedModeSupport = 'off' | 'limited' | 'full';

/** An extension VS Code runs in this window (vscode.extensions.all lists the enabled ones). */
export interface InstalledExtension {
  /** `publisher.name`, as VS Code spells it. */
  id: string;
  restricted: RestrictedModeSupport;
}

export interface HostToolsFacts {
  /** vscode.workspace.isTrusted: false is Restricted Mode. */
  trusted: boolean;
  /** security.workspace.trust.enabled: when false every folder is trusted and Restricted Mode cannot be chosen. */
  trustEnabled: boolean;
  extensions: readonly InstalledExtension[];
}

/** `own`: on its own, as the folder opens or as files are opened, edited or saved; `ask`: only when the user runs something, or after VS Code asks. */
export type HostToolWhen = 'own' | 'ask';

export interface HostTool {
  /** The extension's id, lower case. */
  id: string;
  /** Its name in the Marketplace. */
  name: string;
  /** What of the folder it runs, and when: the words after "<name> runs". */
  runs: string;
  when: HostToolWhen;
}

/**
 * The extensions Toolbox knows to run files of the folder on this host, the only list of them.
 * Built-in ones (`vscode.*`) come with VS Code. VS Code's own tasks are not an extension: they
 * come from .vscode/tasks.json, which is read-only in the container (TASKS_NOTE).
 */
export const HOST_TOOLS: readonly HostTool[] = [
  {
    id: 'dbaeumer.vscode-eslint',
    name: 'ESLint',
    runs: "the folder's ESLint (node_modules) with its eslint.config.* or .eslintrc.js and their plugins, as you open and edit files",
    when: 'own',
  },
  {
    id: 'esbenp.prettier-vscode',
    name: 'Prettier',
    runs: "the folder's Prettier (node_modules) with its prettier.config.* or .prettierrc.js and their plugins, when it formats a file",
    when: 'own',
  },
  {
    id: 'stylelint.vscode-stylelint',
    name: 'Stylelint',
    runs: "the folder's Stylelint with its stylelint.config.* and their plugins, as you open and edit files",
    when: 'own',
  },
  {
    id: 'bradlc.vscode-tailwindcss',
    name: 'Tailwind CSS IntelliSense',
    runs: "the folder's Tailwind CSS with its tailwind.config.* and their plugins, as the folder opens",
    when: 'own',
  },
  {
    id: 'svelte.svelte-vscode',
    name: 'Svelte',
    runs: 'the svelte.config.* of the folder and the preprocessors it names, as you open .svelte files',
    when: 'own',
  },
  {
    id: 'ms-python.python',
    name: 'Python',
    runs: "the folder's interpreters (.venv/bin/python and other environments in it) to read their details as the folder opens, and its code when you run or test it",
    when: 'own',
  },
  {
    id: 'ms-python.vscode-pylance',
    name: 'Pylance',
    runs: 'the interpreter the Python extension picked (such as .venv/bin/python) to find its import paths, as the folder opens',
    when: 'own',
  },
  {
    id: 'ms-python.debugpy',
    name: 'Python Debugger',
    runs: "the folder's interpreter and code when you start debugging",
    when: 'ask',
  },
  {
    id: 'ms-toolsai.jupyter',
    name: 'Jupyter',
    runs: "a kernel from the folder's environment (such as .venv) when you run a notebook cell",
    when: 'ask',
  },
  {
    id: 'rust-lang.rust-analyzer',
    name: 'rust-analyzer',
    runs: 'cargo on the folder (with its .cargo/config.toml and rust-toolchain.toml), which builds and runs its build.rs scripts and proc macros, as the folder opens',
    when: 'own',
  },
  {
    id: 'golang.go',
    name: 'Go',
    runs: "the folder's tests and go:generate lines when you run them (gopls and go list only read its packages as it opens)",
    when: 'ask',
  },
  {
    id: 'vscjava.vscode-gradle',
    name: 'Gradle for Java',
    runs: "the folder's Gradle wrapper (gradlew, the Gradle its gradle-wrapper.properties names) and build scripts (settings.gradle, build.gradle), as the folder opens",
    when: 'own',
  },
  {
    id: 'redhat.java',
    name: 'Language Support for Java',
    runs: 'Gradle and Maven on the folder to import its projects as it opens: its build.gradle and settings.gradle, and the Maven plugins and extensions its pom.xml and .mvn/ name',
    when: 'own',
  },
  {
    id: 'vscjava.vscode-maven',
    name: 'Maven for Java',
    runs: "the folder's Maven wrapper (mvnw, .mvn/) and the plugins its pom.xml names, when you run a goal",
    when: 'ask',
  },
  {
    id: 'orta.vscode-jest',
    name: 'Jest',
    runs: "the folder's Jest with its jest.config.* and its tests, as the folder opens (its default watch mode)",
    when: 'own',
  },
  {
    id: 'firsttris.vscode-jest-runner',
    name: 'Jest Runner',
    runs: "the folder's Jest and the tests you pick, when you click Run or Debug",
    when: 'ask',
  },
  {
    id: 'vitest.explorer',
    name: 'Vitest',
    runs: "the folder's Vitest with its vitest.config.* or vite.config.* and their plugins, to find its tests as the folder opens",
    when: 'own',
  },
  {
    id: 'ms-playwright.playwright',
    name: 'Playwright Test',
    runs: "the folder's Playwright with its playwright.config.*, to list its tests as the folder opens",
    when: 'own',
  },
  {
    id: 'ms-vscode.makefile-tools',
    name: 'Makefile Tools',
    runs: "make --dry-run on the folder's Makefile to configure it as the folder opens (a dry run still runs its $(shell …) calls)",
    when: 'own',
  },
  {
    id: 'ms-vscode.cmake-tools',
    name: 'CMake Tools',
    runs: "cmake on the folder's CMakeLists.txt and CMakePresets.json (execute_process runs any program) when it configures, which it does or offers as the folder opens",
    when: 'own',
  },
  {
    id: 'ms-dotnettools.csharp',
    name: 'C#',
    runs: "MSBuild on the folder's projects (*.csproj, Directory.Build.props and .targets) to load them, which runs the targets they add, as the folder opens",
    when: 'own',
  },
  {
    id: 'shopify.ruby-lsp',
    name: 'Ruby LSP',
    runs: "Bundler on the folder's Gemfile (Ruby code) and its .ruby-version, to set up its bundle as the folder opens",
    when: 'own',
  },
  {
    id: 'vscode.npm',
    name: 'npm (built in)',
    runs: "the folder's package.json scripts, only when you run one (the NPM Scripts view, a script's Run)",
    when: 'ask',
  },
  {
    id: 'vscode.typescript-language-features',
    name: 'TypeScript (built in)',
    runs: "the folder's TypeScript (node_modules/typescript) only once you pick Use Workspace Version, which VS Code asks about first",
    when: 'ask',
  },
];

/** VS Code's own tasks, which no extension list shows. */
export const TASKS_NOTE = "VS Code's own tasks come from .vscode/tasks.json, which is read-only in the container.";

/** What Restricted Mode costs, as the row and the Doctor say it. */
export const RESTRICTED_MODE_COST =
  "Restricted Mode also turns off tasks, debugging, VS Code's git and every other extension that needs a trusted folder, and Toolbox then ignores the project's .toolbox.yaml; trust the folder again when you want them back.";

/** VS Code's command that opens the Workspace Trust editor, where Restricted Mode is chosen. */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';
/** Its name in the command palette. */
export const MANAGE_TRUST_LABEL = 'Workspaces: Manage Workspace Trust';
/** The setting that turns Workspace Trust (and so Restricted Mode) on and off. */
export const TRUST_ENABLED_SETTING = 'security.workspace.trust.enabled';

/**
 * What an extension's manifest declares for Restricted Mode, as VS Code reads it: `supported`
 * true, `'limited'` or false; without it, an extension with code is off and one without (a theme,
 * a grammar) runs.
 */
export function restrictedModeSupport(manifest: unknown): RestrictedModeSupport {
  const m = record(manifest);
  const supported = record(record(m.capabilities).untrustedWorkspaces).supported;
  if (supported === true) return 'full';
  if (supported === 'limited') return 'limited';
  if (supported === false) return 'off';
  return m.main === undefined && m.browser === undefined ? 'full' : 'off';
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export interface FoundHostTool extends HostTool {
  restricted: RestrictedModeSupport;
}

/** `trusted`: the window is trusted; `restricted`: Restricted Mode; `trust-off`: Workspace Trust is turned off, so every folder is trusted. */
export type TrustState = 'trusted' | 'restricted' | 'trust-off';

/** What the posture row and the Doctor say: the trust state and the known extensions running in this window. */
export interface HostToolsPosture {
  state: TrustState;
  /** Those that run the folder's files on their own, in HOST_TOOLS order. */
  own: FoundHostTool[];
  /** Those that run them only when the user asks. */
  ask: FoundHostTool[];
}

export function hostToolsPosture(facts: HostToolsFacts): HostToolsPosture {
  const running = new Map(facts.extensions.map((e) => [e.id.toLowerCase(), e.restricted]));
  const found = HOST_TOOLS.flatMap((t): FoundHostTool[] => {
    const restricted = running.get(t.id);
    return restricted === undefined ? [] : [{ ...t, restricted }];
  });
  const state: TrustState = !facts.trustEnabled ? 'trust-off' : facts.trusted ? 'trusted' : 'restricted';
  return { state, own: found.filter((t) => t.when === 'own'), ask: found.filter((t) => t.when === 'ask') };
}

/**
 * The ones that run the folder's files on their own now: all of them in a trusted window; in
 * Restricted Mode only those that declare full support (VS Code does not start the ones that
 * declare none, and asks the limited ones to leave the folder's code alone).
 */
export function runningOnTheirOwn(p: HostToolsPosture): FoundHostTool[] {
  return p.state === 'restricted' ? p.own.filter((t) => t.restricted === 'full') : p.own;
}

const RESTRICTED_WORDS: Record<RestrictedModeSupport, string> = {
  off: 'off in Restricted Mode',
  limited: 'limited in Restricted Mode, as it declares',
  full: 'it declares it runs fully in Restricted Mode too',
};

/** "ESLint runs the folder's ESLint … — off in Restricted Mode". */
export function hostToolSentence(t: FoundHostTool): string {
  return `${t.name} runs ${t.runs} — ${RESTRICTED_WORDS[t.restricted]}`;
}

/** "off in Restricted Mode", for a row's description. */
export function restrictedWords(t: FoundHostTool): string {
  return RESTRICTED_WORDS[t.restricted];
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The posture row's description: short. */
export function hostToolsSummary(p: HostToolsPosture): string {
  const running = runningOnTheirOwn(p);
  if (p.state === 'restricted') {
    return running.length === 0
      ? "Restricted Mode: none runs this folder's files"
      : `Restricted Mode: ${count(running.length, 'still runs them', 'still run them')}`;
  }
  if (running.length === 0) return "none known runs this folder's files on its own";
  const n = count(running.length, "runs this folder's files", "run this folder's files");
  return p.state === 'trust-off' ? `${n} · Workspace Trust off` : `${n} · trusted`;
}

/**
 * The whole story, for the row's tooltip and the Doctor's detail: what runs the folder's files
 * on this host now, what runs them only when asked, and what the list leaves out.
 */
export function hostToolsDetail(p: HostToolsPosture): string {
  const running = runningOnTheirOwn(p);
  const parts: string[] = [];
  if (p.state === 'restricted') {
    const limited = p.own.filter((t) => t.restricted === 'limited');
    parts.push(
      "This window is in Restricted Mode: VS Code does not start the extensions that need a trusted folder, and those that declare limited support leave the folder's code alone." +
        (limited.length > 0 ? ` Limited now: ${limited.map((t) => t.name).join(', ')}.` : ''),
    );
    if (running.length > 0) {
      parts.push(`Still running the folder's files on this host: ${running.map(hostToolSentence).join('; ')}.`);
    }
  } else {
    const trust =
      p.state === 'trust-off'
        ? `Workspace Trust is off (${TRUST_ENABLED_SETTING}): every folder is trusted`
        : 'This window trusts the folder';
    parts.push(
      running.length === 0
        ? `${trust}, and no installed extension Toolbox knows runs its files on its own.`
        : `${trust}, so ${count(running.length, 'installed extension runs', 'installed extensions run')} files of the folder on this host, files an agent in the container can write: ${running.map(hostToolSentence).join('; ')}.`,
    );
  }
  if (p.ask.length > 0 && p.state !== 'restricted') {
    parts.push(`Only when you ask: ${p.ask.map(hostToolSentence).join('; ')}.`);
  }
  parts.push(TASKS_NOTE, 'Extensions Toolbox does not know may run its files too.');
  return parts.join(' ');
}

/** What the user may do about it, or undefined when there is nothing to choose. */
export function hostToolsChoice(p: HostToolsPosture): string | undefined {
  if (runningOnTheirOwn(p).length === 0) return undefined;
  switch (p.state) {
    case 'trusted':
      return (
        `Your choice: while an agent works in the folder, you can open it in Restricted Mode (${MANAGE_TRUST_LABEL}, then Don't Trust). ` +
        RESTRICTED_MODE_COST
      );
    case 'trust-off':
      return `Your choice: turn ${TRUST_ENABLED_SETTING} on in your User settings to be able to open the folder in Restricted Mode while an agent works. ${RESTRICTED_MODE_COST}`;
    case 'restricted':
      return 'Those extensions declare that they run fully in Restricted Mode: disable them for this workspace (Extensions view, Disable (Workspace)) while an agent works.';
  }
}

/** The action the row and the Doctor offer: the Workspace Trust editor, or the setting that turns it on. */
export type HostToolsOffer = 'workspace-trust' | 'trust-setting';

export function hostToolsOffer(p: HostToolsPosture): HostToolsOffer | undefined {
  if (runningOnTheirOwn(p).length === 0 || p.state === 'restricted') return undefined;
  return p.state === 'trust-off' ? 'trust-setting' : 'workspace-trust';
}
