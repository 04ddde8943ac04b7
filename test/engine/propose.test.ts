/**
 * Proposals on the real engine (issue 25 item 4, docs/decisions/0044-proposals-for-protected-paths.md):
 * the agent in a real container runs `toolbox-propose` for a protected file it cannot write; the
 * host file stays as it was until the (injected) user applies it, and then the container sees the
 * new text through its still read-only bind. From the same container, a proposal for a path that
 * is not protected, one with `..`, and one through a symbolic link the container planted (with
 * the protection off, so that it can) are refused, and nothing outside the folder changes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { StartedShell } from '../../extension/src/backend/api';
import type { Proposal, ProposalAnswer } from '../../extension/src/bridge/route';
import { objectNames } from '../../extension/src/contract/objects';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { ensureTestRuntimeImage } from '../support/image';
import { screen } from '../support/screen';
import { standInSettings } from '../support/settings';

function output(shell: StartedShell) {
  return screen({ onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))) });
}

describe('toolbox-propose from a real container (issue 25, item 4)', () => {
  const names = objectNames(`tbxp${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  const backends: TestBackend[] = [];
  const proposals: Proposal[] = [];
  const approver = (p: Proposal): ProposalAnswer => {
    proposals.push(p);
    return { accepted: true };
  };
  let step = 0;

  before(async () => {
    const image = await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxp-propose-'));
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
  });

  after(async () => {
    for (const b of backends) b.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  async function shellIn(folder: string, protectedPaths: boolean) {
    const b = testBackend(names, home, {
      editor: { openInEditor: () => undefined, openUntitled: () => undefined, openExternal: () => undefined, propose: approver },
      settings: standInSettings({ protectedPaths: () => protectedPaths }),
    });
    backends.push(b);
    const prepared = await b.prepareShell({ folder });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell = await session.start({ cols: 200, rows: 50 });
    const screenOf = output(shell);
    /** Runs `command` in the shell; its exit code and what it printed since the last run. */
    const run = async (command: string): Promise<{ code: number; text: string }> => {
      step += 1;
      const from = screenOf.text.length;
      shell.stream.write(`${command}; echo "step${step} exit $?"\r`);
      const [, code] = await screenOf.waitFor(new RegExp(`step${step} exit (\\d+)`));
      return { code: Number(code), text: screenOf.text.slice(from) };
    };
    return { shell, run };
  }

  it('a proposal leaves the host file as it was until Apply, and the container then reads the new text', async () => {
    const folder = join(home, 'project');
    mkdirSync(join(folder, '.vscode'), { recursive: true });
    writeFileSync(join(folder, '.vscode', 'settings.json'), '{"old": true}\n');
    writeFileSync(join(folder, 'README.md'), 'hello\n');
    const { shell, run } = await shellIn(folder, true);
    const file = join(folder, '.vscode', 'settings.json');

    const direct = await run(`echo '{"x": 1}' > .vscode/settings.json`);
    assert.notEqual(direct.code, 0, 'the container cannot write the protected file itself');

    const proposed = await run(`printf '{"new": true}\\n' | toolbox-propose .vscode/settings.json`);
    assert.equal(proposed.code, 0, proposed.text);
    assert.match(proposed.text, /proposed \.vscode\/settings\.json/);
    assert.equal(proposals.length, 1);
    assert.equal(proposals[0].path, '.vscode/settings.json');
    assert.equal(proposals[0].content, '{"new": true}\n');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(readFileSync(file, 'utf8'), '{"old": true}\n', 'nothing is written without the click');

    const inode = statSync(file).ino;
    assert.equal(await proposals[0].apply(), 'updated');
    assert.equal(readFileSync(file, 'utf8'), '{"new": true}\n');
    assert.equal(statSync(file).ino, inode);
    const seen = await run('cat .vscode/settings.json');
    assert.match(seen.text, /\{"new": true\}/);
    const still = await run(`echo '{"x": 1}' > .vscode/settings.json`);
    assert.notEqual(still.code, 0, 'the bind is still read-only after Apply');

    // A new file in a protected folder, from a file argument, by its /workspace path.
    const fromFile = await run(`printf 'echo hi\\n' > /tmp/envrc && toolbox-propose /workspace/.envrc /tmp/envrc`);
    assert.equal(fromFile.code, 0, fromFile.text);
    assert.equal(proposals.at(-1)!.path, '.envrc');

    // Attacks: a path that is not protected, a traversal through the shim and straight to the
    // route, a file that is not text.
    const count = proposals.length;
    const plain = await run(`echo x | toolbox-propose README.md`);
    assert.equal(plain.code, 77, plain.text);
    assert.match(plain.text, /not a protected path/);
    const up = await run(`echo x | toolbox-propose ../outside.txt`);
    assert.equal(up.code, 77, up.text);
    // The route's bucket holds 3 and refills one every 5 s (bridge/hub.ts RATE_LIMITS.propose).
    const raw = await run(
      `sleep 5; sh -c '. /usr/local/lib/toolbox/bridge-lib.sh; bridge_ready; bridge_post /propose "{\\"path\\": \\".vscode/../../outside.txt\\", \\"content\\": \\"x\\"}" 10; echo "raw status $BRIDGE_STATUS"'`,
    );
    assert.match(raw.text, /raw status 400/);
    const binary = await run(`sleep 5; printf 'a\\0b' | toolbox-propose .vscode/settings.json`);
    assert.equal(binary.code, 77, binary.text);
    assert.match(binary.text, /not text/);
    assert.equal(proposals.length, count, 'no refused proposal reached the editor');
    const burst = await run(`for i in 1 2 3 4 5; do echo x | toolbox-propose README.md; done 2>&1 | grep -c 'HTTP 429'`);
    assert.match(burst.text, /[1-5]\r?\nstep\d+ exit 0/, 'a burst of proposals is rate-limited');
    shell.dispose();
  });

  it('a symbolic link the container plants (protection off) is refused by the host', async () => {
    const folder = join(home, 'plain');
    const outside = join(home, 'outside');
    mkdirSync(folder);
    mkdirSync(outside);
    writeFileSync(join(outside, 'settings.json'), 'host secret\n');
    const { shell, run } = await shellIn(folder, false);
    const planted = await run(`ln -s ${outside} .vscode && ls .vscode`);
    assert.equal(planted.code, 0, planted.text);
    const count = proposals.length;
    const through = await run(`echo evil | toolbox-propose .vscode/settings.json`);
    assert.equal(through.code, 77, through.text);
    assert.match(through.text, /symbolic link/);
    const fileLink = await run(`ln -s ${outside}/settings.json .mcp.json && echo evil | toolbox-propose .mcp.json`);
    assert.equal(fileLink.code, 77, fileLink.text);
    assert.equal(proposals.length, count);
    assert.equal(readFileSync(join(outside, 'settings.json'), 'utf8'), 'host secret\n');
    shell.dispose();
  });
});
