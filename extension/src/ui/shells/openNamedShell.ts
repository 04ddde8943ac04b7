import { promises as fsp } from 'node:fs';
import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { namedShellName } from '../../plan/naming';
import { configuredShell, isNamedShellRefusal } from '../../plan/namedShell';
import { pickFolder } from '../folders';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';

const CREATE = 'Create Named Shell…';

/**
 * `toolbox shell <name>`: a container of its own working in the shell's configured path
 * (`shells.<name>.path`), as the CLI resolves it (plan/namedShell.ts). Without an argument it
 * offers the configured shells and "Create a new named shell…", which writes the entry into
 * ~/.toolbox.yaml as `toolbox shell <name> --create` would, after showing it. A second argument
 * (a name) skips the picker, for keybindings and automation; a name that is not configured is
 * refused with the CLI's text, and Create offers to configure it.
 */
export const openNamedShell: ToolboxCommand = {
  id: 'toolbox.openNamedShell',
  run: async (s, arg, presetName) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    let name: string | undefined;
    if (typeof presetName === 'string') {
      namedShellName(presetName, { peer: false }, s.backend.names); // throws the planner's message for a name it refuses
      name = presetName;
    } else {
      name = await pickNamedShell(s, folder);
    }
    if (name === undefined) return undefined;
    return openNamed(s, folder, name);
  },
};

async function openNamed(s: CommandServices, folder: string, name: string): Promise<unknown> {
  try {
    const shell = await s.shells.openTerminal({ folder, namedShell: name });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  } catch (err) {
    if (!isNamedShellRefusal(err)) throw err;
    s.log.error(`toolbox.openNamedShell: ${err.message}`);
    if (err.problem === 'missing-path') {
      // What the CLI's `toolbox shell <name> --create` does for a configured path that is missing.
      const make = 'Create Folder and Open';
      const answer = await vscode.window.showErrorMessage(
        plainText(`The folder of the named shell "${name}" does not exist. Create it and open the shell?`, 'message'),
        { modal: true, detail: plainText(err.message, 'detail') },
        make,
      );
      if (answer !== make) return undefined;
      await fsp.mkdir(err.path, { recursive: true, mode: 0o755 });
      s.log.info(`Created ${err.path} for the named shell "${name}".`);
      return openNamed(s, folder, name);
    }
    if (err.problem !== 'not-configured') {
      void vscode.window.showErrorMessage(plainText(`The named shell "${name}" cannot open.`, 'message'), {
        modal: true,
        detail: plainText(err.message, 'detail'),
      });
      return undefined;
    }
    // Upstream's refusal, word for word, then the way to configure it from here.
    const answer = await vscode.window.showErrorMessage(
      plainText(
        `The named shell "${name}" is not configured. Create it here (it is added to ~/.toolbox.yaml), or add it by hand as shown.`,
        'message',
      ),
      { modal: true, detail: plainText(err.message, 'detail') },
      CREATE,
    );
    if (answer !== CREATE) return undefined;
    const created = await createNamedShell(s, folder, name);
    return created === undefined ? undefined : openNamed(s, folder, created);
  }
}

type PickItem = vscode.QuickPickItem & { shell?: string; create?: true };

/** The configured shells (name, path), then "Create a new named shell…". */
async function pickNamedShell(s: CommandServices, folder: string): Promise<string | undefined> {
  const shells = await s.backend.namedShells(folder);
  const items: PickItem[] = shells.map((sh) => ({
    label: plainText(sh.key, 'iconLabel'),
    description: sh.path === '' ? 'no path configured' : plainText(sh.path, 'iconLabel'),
    shell: sh.key,
  }));
  if (items.length > 0) items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: '$(add) Create a new named shell…', description: 'adds it to ~/.toolbox.yaml', create: true });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Open Toolbox Shell by Name',
    placeHolder:
      shells.length === 0
        ? 'No named shells are configured yet: create one (toolbox shell <name> in the CLI opens the same container)'
        : 'A named shell has its own container, working in its configured folder',
  });
  if (!picked) return undefined;
  if (picked.create) return createNamedShell(s, folder);
  return picked.shell;
}

/**
 * Asks for a name and a folder (the current one by default), shows the ~/.toolbox.yaml entry it
 * will write, then writes it. Returns the shell's key, or undefined when the user stopped.
 */
async function createNamedShell(s: CommandServices, folder: string, presetName?: string): Promise<string | undefined> {
  const existing = await s.backend.namedShells(folder);
  const shells = Object.fromEntries(existing.map((e) => [e.key, { path: e.path, env: {} }]));
  const name =
    presetName ??
    (await vscode.window.showInputBox({
      title: 'Create a Named Shell (1/2): name',
      prompt: 'A name for the shell; it gets its own container (toolbox shell <name> in the CLI).',
      placeHolder: 'infra',
      validateInput: (value) => {
        try {
          const container = namedShellName(value, { peer: false }, s.backend.names);
          const taken = configuredShell(shells, value);
          if (taken) return `"${taken.key}" is already configured (${taken.path || 'no path'}). Pick it from the list instead.`;
          return { message: `Container ${container}`, severity: vscode.InputBoxValidationSeverity.Info };
        } catch (err) {
          return (err as Error).message;
        }
      },
    }));
  if (name === undefined) return undefined;
  const path = await vscode.window.showInputBox({
    title: plainText(`Create a Named Shell (2/2): the folder "${name}" works in`, 'iconLabel'),
    prompt: 'The full path of the folder the shell opens in; it is created if it does not exist.',
    value: folder,
    validateInput: (value) => (value.trim().startsWith('/') ? undefined : 'Give the full path, starting with /.'),
  });
  if (path === undefined) return undefined;
  const plan = await s.backend.prepareNamedShellCreate(folder, name, path);
  const where = plan.creates ? `Toolbox will create ${plan.file} with:` : `Toolbox will add this to ${plan.file}:`;
  // A dialog collapses leading spaces: keep the YAML's indentation with no-break spaces.
  const block = plan.block.replace(/^ +/gm, (lead) => '\u00a0'.repeat(lead.length));
  const folderNote = plan.createsFolder ? `\n\nThe folder ${plan.path} does not exist yet; it is created too.` : '';
  const write = 'Create';
  const answer = await vscode.window.showInformationMessage(
    plainText(`Create the named shell "${plan.key}"?`, 'message'),
    {
      modal: true,
      detail: plainText(`${where}\n\n${block}${folderNote}\n\nThe toolbox CLI reads the same entry (toolbox shell ${plan.key}).`, 'detail'),
    },
    write,
  );
  if (answer !== write) return undefined;
  await plan.apply();
  s.log.info(`Named shell "${plan.key}" configured in ${plan.file}: path ${plan.path}.`);
  return plan.key;
}
