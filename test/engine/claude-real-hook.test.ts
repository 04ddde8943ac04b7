/**
 * The real Claude Code asks the editor through the image's hook (issue 28,
 * docs/decisions/0050-approvals-over-the-bridge.md), without an account: the pinned native binary
 * (scripts/ensure-claude-binary.sh, mounted read-only) runs in print mode (`claude -p`) in a held
 * session of a real container, with ANTHROPIC_BASE_URL pointing at a stand-in Messages API served
 * by this test (test/fixtures/stand-in-messages-api.ts) on the address the container reaches the
 * host by (host.docker.internal). The stand-in asks for one Bash call; a permission rule in the
 * run's own config dir makes Claude Code ask about it (`echo` alone is a read-only command it
 * would run unasked), and in print mode it cannot prompt, so the PermissionRequest hook the image
 * installs (/etc/claude-code/managed-settings.json → toolbox-agent-hook) decides: it asks the
 * bridge, and the test answers as the editor (EditorActions.askApproval). What the editor answers
 * must reach the API as the tool_result: the command's output after allow, the refusal and its
 * reason after deny. The hook's timeline events (/agent-event) are recorded too.
 *
 * Two ways of running print mode. One-shot (`claude -p 'prompt'`, the deny run): when the turn is
 * over Claude Code ends, and it sends SIGTERM to the async hooks still running (one that ignores it
 * never finishes either); the image's hook therefore reports its timeline events from a child of
 * its own session (toolbox-agent-hook `detach`), and the Stop report must still arrive. Held (the
 * allow run): the prompt goes in as stream-json on a stdin that stays open, as an editor or the SDK
 * keeps a session; then stdin is closed and claude exits.
 *
 * A third run drives the interactive terminal UI (`claude 'prompt'` in the held shell's pty, its
 * first-run screens skipped by a pre-seeded .claude.json): when the hook runs beside Claude's own
 * dialog, and what an answer typed in the terminal does to the question the editor holds (see it).
 *
 * The binary comes from the npm registry once (scripts/setup.sh fetches it; this test fetches it
 * on demand). Without it the test fails and says why; TOOLBOX_TEST_NO_CLAUDE=1 skips it (README).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { StartedShell } from '../../extension/src/backend/api';
import type { AgentEvent, ApprovalAnswer, ApprovalRequest } from '../../extension/src/bridge/route';
import { objectNames } from '../../extension/src/contract/objects';
import { ApprovalInbox, ASK_REASONS } from '../../extension/src/ui/approvals/approvalInbox';
import { startStandInMessagesApi, type StandInMessagesApi } from '../fixtures/stand-in-messages-api';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage, repoRoot } from '../support/image';
import { screen } from '../support/screen';

const SKIP =
  process.env.TOOLBOX_TEST_NO_CLAUDE === '1'
    ? 'TOOLBOX_TEST_NO_CLAUDE=1: the real Claude Code binary is not fetched, so its hook is not run'
    : process.env.TOOLBOX_TEST_ENGINE === 'podman'
      ? 'the agent, its hook and the bridge do not depend on the engine: run on Docker only (agent-approvals covers Podman)'
      : false;

const COMMAND = 'echo real-claude-hook';
const DESCRIPTION = 'Say hi';
const FINAL_TEXT = 'Done: the stand-in API got the tool result.';
const PROMPT = 'Say hi with the Bash tool.';
/** Where the binary's folder is mounted (read-only) in the container. */
const CLAUDE_DIR = '/opt/toolbox-test-claude';
/** Bounds: the whole file stays well under two minutes once the binary and the image are cached. */
const QUESTION_MS = 30_000;
const RUN_MS = 45_000;
const TUI_MS = 100_000;

/**
 * The run, as typed in the held shell: a fresh config dir (its settings.json holds only the rule
 * that makes Claude Code ask about the command), the account-free environment, print mode with
 * stream-json output on a file next to this script, and a marker with the exit code. `held`: the
 * prompt is written as stream-json to a stdin kept open until a line is typed in the terminal.
 */
const RUN_SCRIPT = `#!/bin/sh
# Usage: sh claude-run.sh LABEL BASE_URL one-shot|held
label=$1
here=$(cd "$(dirname "$0")" && pwd)
cfg=$(mktemp -d /tmp/claude-config.XXXXXX)
printf '%s\\n' '{"permissions":{"ask":["Bash(${COMMAND})"]}}' >"$cfg/settings.json"
export ANTHROPIC_BASE_URL="$2" ANTHROPIC_API_KEY=sk-ant-test-dummy CLAUDE_CONFIG_DIR="$cfg" \\
  DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
claude="timeout ${RUN_MS / 1000 - 5} ${CLAUDE_DIR}/claude -p --output-format stream-json --verbose"
if [ "$3" = held ]; then
  mkfifo "$cfg/stdin"
  $claude --input-format stream-json <"$cfg/stdin" >"$here/$label.jsonl" 2>"$here/$label.err" &
  pid=$!
  exec 3>"$cfg/stdin"
  printf '%s\\n' '{"type":"user","message":{"role":"user","content":"${PROMPT}"}}' >&3
  echo "CLAUDE $label HOLDING"
  read -r _
  exec 3>&-
  wait $pid
else
  $claude '${PROMPT}' </dev/null >"$here/$label.jsonl" 2>"$here/$label.err"
fi
rc=$?
rm -rf "$cfg"
echo "CLAUDE $label EXIT $rc"
`;

/**
 * The interactive run, as typed in the held shell: the same config dir and environment as
 * RUN_SCRIPT, plus the state Claude Code keeps in CLAUDE_CONFIG_DIR/.claude.json, pre-seeded so
 * that no first-run screen stands before the prompt: onboarding done, a theme, the API key
 * approved (its last 20 characters; the whole of this short one) and this folder trusted.
 */
const TUI_SCRIPT = `#!/bin/sh
# Usage: sh claude-tui.sh BASE_URL PROMPT
cfg=$(mktemp -d /tmp/claude-config.XXXXXX)
printf '%s\n' '{"permissions":{"ask":["Bash(${COMMAND})"]}}' >"$cfg/settings.json"
printf '{"hasCompletedOnboarding":true,"theme":"dark","customApiKeyResponses":{"approved":["%s"],"rejected":[]},"projects":{"%s":{"hasTrustDialogAccepted":true}}}\n' \
  sk-ant-test-dummy "$PWD" >"$cfg/.claude.json"
export ANTHROPIC_BASE_URL="$1" ANTHROPIC_API_KEY=sk-ant-test-dummy CLAUDE_CONFIG_DIR="$cfg" \
  DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
timeout --foreground ${TUI_MS / 1000 - 5} ${CLAUDE_DIR}/claude "$2"
rc=$?
rm -rf "$cfg"
echo "CLAUDE tui EXIT $rc"
`;

/** Claude Code's permission dialog, in the terminal's text with its escape sequences taken out. */
const DIALOG = /Do you want to proceed\?/;
/** The line Claude Code shows when a turn is over and the prompt is idle ("✻ Cooked for 1s · done 9:59 PM"). */
const IDLE = / for \d+s · done \d/;

/* eslint-disable no-control-regex */
/** The terminal's text without its escape sequences (cursor moves become a space). */
function plain(text: string): string {
  return text
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '')
    .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, ' ')
    .replace(/\x1b[()][0-9A-Za-z]|\x1b[=>78DEHM]/g, '')
    .replace(/[^\S\n]+/g, ' ');
}
/* eslint-enable no-control-regex */

/** The end of the plain text, for messages. */
function lastFrame(text: string): string {
  return text.slice(-1200);
}

/** The last permission dialog in the plain text, from "Bash command" to its last line. */
function dialogOf(text: string): string {
  const start = text.lastIndexOf('Bash command');
  const end = text.indexOf('Tab to amend', start);
  return JSON.stringify(start < 0 || end < 0 ? lastFrame(text) : text.slice(start, end + 'Tab to amend'.length).replace(/╌+/g, '╌'));
}

interface Asked {
  request: ApprovalRequest;
  signal: AbortSignal;
  at: number;
  answer(a: ApprovalAnswer): void;
}

type Seen = AgentEvent & { seenAt: number };

interface Run {
  started: number;
  /** Resolves when the script printed its exit marker (claude exited 0), with claude's stream-json. */
  done: Promise<{ ms: number; stream: string }>;
  /** Held mode: ends claude's input, so it exits. */
  release(): void;
}

/** The cached binary's path, fetched once; rejects with the reason it cannot be had. */
function ensureClaudeBinary(): Promise<string> {
  const script = join(repoRoot(), 'scripts', 'ensure-claude-binary.sh');
  return new Promise((resolve, reject) => {
    // A first fetch is ~180 MB from the registry; cached, it takes a fraction of a second.
    execFile('bash', [script], { encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
      const path = stdout.trim();
      if (!err && path && existsSync(path)) return resolve(path);
      const why = (stderr.trim().split('\n').at(-1) || err?.message || 'it printed no path').replace(/\.$/, '');
      reject(
        new Error(
          `The real Claude Code binary could not be had, so its hook cannot be run: ${why}. ` +
            'Run scripts/ensure-claude-binary.sh where the npm registry is reachable, or set TOOLBOX_TEST_NO_CLAUDE=1 to skip this test.',
        ),
      );
    });
  });
}

describe('the real Claude Code asks the editor through the image’s hook, without an account (issue 28)', { skip: SKIP }, () => {
  const names = objectNames(`tbxc${Math.random().toString(16).slice(2, 8)}`);
  let home: string | undefined;
  let backend: TestBackend | undefined;
  let api: StandInMessagesApi | undefined;
  let start: (label: string, mode: 'one-shot' | 'held') => Run;
  let session: { container: string; shell: StartedShell };
  let tty: { seen: ReturnType<typeof screen>; type(text: string): void };
  let url: string;
  const asked: Asked[] = [];
  // The editor's own inbox (no vscode in it): what the agent reports next takes out a question
  // answered in its terminal (ApprovalInbox.leftBehind), as extension.ts wires it.
  const inbox = new ApprovalInbox();
  const events: Seen[] = [];
  let wake: Array<() => void> = [];
  const t0 = Date.now();

  function poke(): void {
    for (const w of wake) w();
    wake = [];
  }

  /** Waits (bounded) until `ready()` holds, woken by each question and event. */
  async function until(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > end) return false;
      await new Promise<void>((r) => {
        wake.push(r);
        setTimeout(r, 250);
      });
    }
    return true;
  }

  async function question(n: number): Promise<Asked> {
    if (!(await until(() => asked.length > n, QUESTION_MS))) {
      const got = api?.requests.map((r) => `${r.path} → ${r.answered}`).join('; ');
      throw new Error(
        `the real claude never asked question ${n} within ${QUESTION_MS / 1000} s (the stand-in API got: ${got || 'nothing'})`,
      );
    }
    return asked[n]!;
  }

  before(
    async () => {
      const claude = await ensureClaudeBinary();
      const image = await ensureTestRuntimeImage();
      home = mkdtempSync(join(tmpdir(), 'tbxc-claude-'));
      writeFileSync(
        join(home, '.toolbox.yaml'),
        [
          `image: ${image}`,
          'peer_messaging: false',
          'mounts:',
          `  - {name: claude-test-binary, source: ${dirname(claude)}, target: ${CLAUDE_DIR}, readonly: true}`,
          '',
        ].join('\n'),
      );
      backend = testBackend(names, home, {
        // The planner binds a mount only when its host source exists: the binary's folder does.
        pathExists: (p) => p === dirname(claude),
        editor: {
          openInEditor: () => undefined,
          openUntitled: () => undefined,
          openExternal: () => undefined,
          askApproval: (request, signal) => {
            const answered = inbox.ask(request, signal, 600_000);
            asked.push({ request, signal, at: Date.now(), answer: (a: ApprovalAnswer) => void inbox.answer(request.id, a) });
            poke();
            return answered;
          },
          agentEvent: (event) => {
            events.push({ ...event, seenAt: Date.now() });
            inbox.leftBehind(event);
            poke();
          },
        },
      });

      const folder = join(home, 'project');
      mkdirSync(folder);
      writeFileSync(join(folder, 'claude-run.sh'), RUN_SCRIPT);
      writeFileSync(join(folder, 'claude-tui.sh'), TUI_SCRIPT);
      const prepared = await backend.prepareShell({ folder });
      const opened = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
      const shell = await opened.start({ cols: 200, rows: 50 });
      const seen = screen({ onDidWrite: (l: (t: string) => void) => shell.stream.on('data', (d: Buffer) => l(d.toString('utf8'))) });
      session = { container: prepared.container, shell };
      tty = { seen, type: (text) => void shell.stream.write(text) };

      // The stand-in listens only on the address host.docker.internal names in this container
      // (the gateway of its network, an address of this host), so its traffic stays between the two.
      const hosts = await execIn(docker().getContainer(prepared.container), ['getent', 'ahostsv4', 'host.docker.internal']);
      const gateway = hosts.stdout.split(/\s+/)[0] ?? '';
      assert.match(gateway, /^\d+\.\d+\.\d+\.\d+$/, `host.docker.internal in the container: ${JSON.stringify(hosts)}`);
      api = await startStandInMessagesApi({ host: gateway, command: COMMAND, description: DESCRIPTION, finalText: FINAL_TEXT });
      const baseUrl = api.baseUrl('host.docker.internal');
      url = baseUrl;

      start = (label, mode) => {
        const started = Date.now();
        shell.stream.write(`sh claude-run.sh ${label} ${baseUrl} ${mode}\r`);
        const done = (async () => {
          const m = await seen.waitFor(new RegExp(`CLAUDE ${label} EXIT (\\d+)`), RUN_MS);
          const stream = readFileSync(join(folder, `${label}.jsonl`), 'utf8');
          const err = readFileSync(join(folder, `${label}.err`), 'utf8');
          assert.equal(m[1], '0', `claude -p exited ${m[1]}: ${err.slice(-1000)}\n${stream.slice(-2000)}`);
          return { ms: Date.now() - started, stream };
        })();
        // Handled here too: a run that fails before the test awaits it is reported there, not as an unhandled rejection.
        done.catch(() => undefined);
        return { started, done, release: () => void shell.stream.write('\r') };
      };
    },
    { timeout: 300_000 },
  );

  after(async () => {
    await api?.close();
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** The question of a run, checked as the editor sees it; fails when claude ends without asking. */
  async function askedBy(run: Run, n: number): Promise<Asked> {
    const q = await Promise.race([question(n), run.done.then(() => assert.fail('claude ended without asking'))]);
    assert.equal(q.request.container, session.container);
    assert.equal(q.request.agent, 'claude');
    assert.equal(q.request.tool, 'Bash');
    assert.deepEqual(q.request.subject, { kind: 'command', text: COMMAND });
    assert.equal(q.request.reason, DESCRIPTION);
    assert.equal(q.request.session, session.shell.record?.sessionId, 'the hook names the held session claude runs in');
    assert.match(q.request.agentSession ?? '', /^[0-9a-f-]{36}$/, 'Claude Code’s own session id');
    // The API saw the same session ask for the tool, and nothing ran yet: the hook holds the question.
    const mine = api!.requests.filter((r) => r.session === q.request.agentSession);
    assert.ok(
      mine.some((r) => r.answered === 'tool-use'),
      'the request that got the tool_use carries the same session id',
    );
    assert.ok(!mine.some((r) => r.toolResults.length > 0), 'no tool_result before the answer');
    return q;
  }

  /** The session's events in the order the agent fired them (their reports may arrive out of order). */
  function timeline(q: Asked): Seen[] {
    return events.filter((e) => e.agentSession === q.request.agentSession).sort((a, b) => a.at - b.at);
  }

  /** What a run did, one line each, for the test's diagnostics. */
  function report(label: string, run: Run, q: Asked, ms: number): string[] {
    const since = (at: number) => `+${at - run.started} ms`;
    return [
      `${label}: claude -p ran ${ms} ms; the editor was asked ${since(q.at)}`,
      ...api!.requests
        .filter((r) => r.session === q.request.agentSession)
        .map(
          (r) =>
            `  API ${since(r.at)} ${r.method} ${r.path} (${r.model ?? '-'}, stream ${r.stream}, ${r.tools.length} tools) → ${r.answered}` +
            r.toolResults.map((x) => ` [tool_result is_error=${x.isError}: ${JSON.stringify(x.text)}]`).join(''),
        ),
      ...timeline(q).map(
        (e) => `  /agent-event ${since(e.seenAt)} ${e.kind} "${e.text}"${e.usage ? ` usage ${JSON.stringify(e.usage)}` : ''}`,
      ),
    ];
  }

  it(
    'allow: the real claude asks about its Bash call, runs it, the API gets its output, the timeline its events',
    { timeout: 90_000 },
    async (t) => {
      const run = start('allow', 'held');
      try {
        const q = await askedBy(run, asked.length);
        q.answer({ decision: 'allow' });
        const result = await api!.waitFor(
          (r) => r.session === q.request.agentSession && r.toolResults.length > 0,
          RUN_MS,
          'the tool_result after allow',
        );
        assert.deepEqual(
          result.toolResults.map((r) => [r.isError, r.text]),
          [[false, 'real-claude-hook']],
        );
        // The turn is over once Stop is in; the hooks of a held session are not cut short.
        await until(() => timeline(q).some((e) => e.kind === 'stop'), 15_000);
        run.release();
        const { ms, stream } = await run.done;
        assert.ok(stream.includes(`"result":"${FINAL_TEXT}"`), 'claude printed the final text');
        for (const line of report('allow (held stdin)', run, q, ms)) t.diagnostic(line);
        // Claude Code does not wait for its PostToolUse hook, and the hook stamps the event when it
        // starts: on a busy machine the command's report can be stamped after the turn's Stop. The
        // order of those two is not asserted; that both came, after the start and the prompt, is.
        const seen = timeline(q)
          .filter((e) => e.kind !== 'session-end')
          .map((e) => [e.kind, e.text]);
        assert.deepEqual(seen.slice(0, 2), [
          ['session-start', 'started (startup)'],
          ['prompt', 'a new prompt'],
        ]);
        assert.deepEqual(
          seen
            .slice(2)
            .map((e) => e.join(': '))
            .sort(),
          [`command: ${COMMAND}`, 'stop: finished its turn'],
        );
        assert.ok(
          timeline(q).every((e) => e.container === session.container && e.session === q.request.session),
          'every event names this container and the held session',
        );
        assert.equal(asked.at(-1), q, 'one question only');
      } finally {
        run.release();
      }
    },
  );

  it(
    'deny with a reason (one-shot `claude -p`): the command does not run, the API gets the refusal and its reason',
    { timeout: 90_000 },
    async (t) => {
      const run = start('deny', 'one-shot');
      const q = await askedBy(run, asked.length);
      const reason = 'not on this branch, says the test';
      q.answer({ decision: 'deny', reason });
      const result = await api!.waitFor(
        (r) => r.session === q.request.agentSession && r.toolResults.length > 0,
        RUN_MS,
        'the tool_result after deny',
      );
      assert.equal(result.toolResults.length, 1);
      const [denied] = result.toolResults;
      assert.ok(denied!.isError, `the tool_result is an error: ${JSON.stringify(denied)}`);
      assert.ok(denied!.text.includes(reason), `the tool_result carries the reason: ${JSON.stringify(denied)}`);
      assert.ok(!denied!.text.includes('real-claude-hook'), 'the command did not run');
      const { ms, stream } = await run.done;
      assert.ok(stream.includes('"permission_denials":[{'), 'claude reports the denial');
      // Claude ends its async hooks as it exits (see the top): the reports, sent from a detached
      // child, still arrive, and never one of a command that did not run.
      await until(() => ['stop', 'session-end'].every((k) => timeline(q).some((e) => e.kind === k)), 10_000);
      for (const line of report('deny (one-shot)', run, q, ms)) t.diagnostic(line);
      assert.deepEqual(
        timeline(q)
          .map((e) => e.kind)
          .sort(),
        ['prompt', 'session-end', 'session-start', 'stop'],
      );
      const others = api!.requests.filter((r) => !asked.some((a) => a.request.agentSession === r.session));
      t.diagnostic(`requests of no asking session: ${others.map((r) => `${r.method} ${r.path} → ${r.answered}`).join('; ') || 'none'}`);
      t.diagnostic(`the whole file: ${Date.now() - t0} ms`);
    },
  );
  /**
   * Claude Code's interactive terminal UI (`claude 'prompt'`, no -p) in the held shell, a real pty
   * (started under `timeout --foreground`: a plain `timeout` puts it in a background process group,
   * where it waits on the terminal and draws nothing). What the real 2.1.332 does:
   *
   * - It runs the PermissionRequest hook beside its own dialog, not before it: when the question
   *   reaches the editor (about 0.5 s after the tool_use), the terminal already shows "Bash command
   *   · Say hi · echo real-claude-hook · … Do you want to proceed? ❯ 1. Yes 2. No · Esc to cancel ·
   *   Tab to amend", and the user can answer either there or in the editor.
   * - Answered in the terminal (Enter on "1. Yes"), the command runs at once (its tool_result
   *   reaches the API about 0.5 s later) but the hook is NOT cancelled: the hook's connection stays
   *   open and the question's AbortSignal does not fire, 10 s later nor while the next turn asks and
   *   is answered (~15 s); the status line even shows "running PermissionRequest hook" for a moment.
   *   Only when claude exits (Ctrl-C twice) does it end the hook (SIGTERM). What takes the question
   *   out of the editor's inbox is what the agent reports next: the PostToolUse of the same command
   *   (ApprovalInbox.leftBehind; a "No" there ends the turn or is followed by a new prompt, which
   *   do the same), and the hook then gets "ask" (decision 0050).
   * - Answered from the editor (allow), the dialog goes away by itself: the terminal shows "Allowed
   *   by PermissionRequest hook", the command runs, the turn ends.
   */
  it(
    'interactive: the hook asks while Claude’s own dialog is on screen; a terminal answer runs the command and takes the question out of the inbox; an editor answer closes the dialog',
    { timeout: TUI_MS + 30_000 },
    async (t) => {
      const from = tty.seen.text.length;
      const started = Date.now();
      const since = (at: number) => `+${at - started} ms`;
      const shown = (start = from) => plain(tty.seen.text.slice(start));
      const exited = tty.seen.waitFor(/CLAUDE tui EXIT (\d+)/, TUI_MS);
      exited.catch(() => undefined);
      tty.type(`sh claude-tui.sh ${url} 'run ${COMMAND}'\r`);
      try {
        const n = asked.length;
        const q1 = await Promise.race([
          question(n).catch((e: Error) =>
            assert.fail(
              `${e.message}; the terminal shows ${JSON.stringify(lastFrame(shown()))}, raw ${JSON.stringify(tty.seen.text.slice(-1500))}`,
            ),
          ),
          exited.then(() => assert.fail(`claude ended without asking; the terminal shows ${JSON.stringify(lastFrame(shown()))}`)),
        ]);
        const agentSession = q1.request.agentSession;
        assert.equal(q1.request.agent, 'claude');
        assert.equal(q1.request.tool, 'Bash');
        assert.deepEqual(q1.request.subject, { kind: 'command', text: COMMAND });
        assert.equal(q1.request.session, session.shell.record?.sessionId, 'the hook names the held session claude runs in');
        const mine = () => api!.requests.filter((r) => r.session === agentSession);
        const toolUse = mine().find((r) => r.answered === 'tool-use');
        assert.ok(toolUse, 'the request that got the tool_use carries the same session id');
        t.diagnostic(`tool_use sent ${since(toolUse.at)}; question 1 in the editor ${since(q1.at)}`);

        // (a) Claude's own dialog is on screen while the question waits in the editor.
        const dialogWithQuestion = DIALOG.test(shown());
        assert.ok(
          dialogWithQuestion || (await until(() => DIALOG.test(shown()), 5_000)),
          `Claude’s dialog shows with the question; the terminal shows ${JSON.stringify(lastFrame(shown()))}`,
        );
        t.diagnostic(
          `dialog ${dialogWithQuestion ? 'already on screen when the question arrived' : `on screen ${since(Date.now())}`}: ${dialogOf(shown())}`,
        );
        assert.ok(!q1.signal.aborted, 'the question still waits while the dialog is shown');
        assert.ok(!mine().some((r) => r.toolResults.length > 0), 'nothing ran before an answer');

        // (b) Answered in the terminal (Enter on "1. Yes") while the question waits: the command
        // runs, and the hook is left running (the question is not withdrawn).
        const pressed = Date.now();
        tty.type('\r');
        const ran = await api!.waitFor(
          (r) => r.session === agentSession && r.toolResults.length > 0,
          RUN_MS,
          'the tool_result after Yes in the terminal',
        );
        assert.deepEqual(
          ran.toolResults.map((r) => [r.isError, r.text]),
          [[false, 'real-claude-hook']],
        );
        t.diagnostic(`Yes typed ${since(pressed)}; the tool_result at the API ${since(ran.at)}`);
        // Claude does not cancel its hook (the signal never fires here), but its PostToolUse report of
        // the same command takes the question out of the inbox, and the hook gets "ask".
        assert.ok(
          await until(() => inbox.get(q1.request.id) === undefined, 10_000),
          'the question answered in the terminal leaves the inbox',
        );
        const leftAfter = Date.now() - pressed;
        assert.equal(inbox.howLeft(q1.request.id), ASK_REASONS.terminal);
        assert.equal(q1.signal.aborted, false, 'the real claude leaves its PermissionRequest hook running after the terminal answer');
        assert.equal(asked.length, n + 1, 'one question so far');
        t.diagnostic(`the question left the inbox ${leftAfter} ms after the terminal answer`);

        // (c) A second prompt in the same session, answered from the editor.
        const second = tty.seen.text.length;
        tty.type('run it again');
        await new Promise((r) => setTimeout(r, 500)); // typed text and Enter apart, or the UI takes them as a paste
        tty.type('\r');
        const q2 = await question(n + 1);
        assert.equal(q2.request.agentSession, agentSession, 'the same Claude Code session asks again');
        assert.ok(await until(() => DIALOG.test(shown(second)), 5_000), 'the dialog shows again');
        t.diagnostic(`question 2 ${since(q2.at)}: ${dialogOf(shown(second))}`);
        const allowedAt = Date.now();
        q2.answer({ decision: 'allow' });
        // The first request after the answer that carries a tool_result. Not "a second tool_result
        // in the history": Claude Code may clear an older tool output from what it sends.
        const ran2 = await api!.waitFor(
          (r) => r.session === agentSession && r.at >= allowedAt && r.toolResults.length > 0,
          RUN_MS,
          'the tool_result after allow from the editor',
        );
        assert.deepEqual(
          ran2.toolResults.slice(-1).map((r) => [r.isError, r.text]),
          [[false, 'real-claude-hook']],
        );
        t.diagnostic(`allowed from the editor ${since(Date.now())}; the tool_result at the API ${since(ran2.at)}`);
        assert.ok(
          await until(
            () => /Allowed by PermissionRequest hook[\s\S]*Done: the stand-in API got the tool result\./.test(shown(second)),
            10_000,
          ),
          `the terminal shows the hook's answer and the turn's end: ${JSON.stringify(lastFrame(shown(second)))}`,
        );
        const after = shown(second).split('Allowed by PermissionRequest hook').at(-1)!;
        assert.ok(!DIALOG.test(after), 'the dialog is gone once the editor answered');
        t.diagnostic(`the terminal after allow: ${JSON.stringify(after.slice(-400))}`);

        // Claude exits: only now does it end the first hook, and the question is withdrawn. Ctrl-C
        // twice at an idle prompt ("… for 1s · done 10:02 PM"; before that the Stop hook may still
        // run, and the first Ctrl-C only interrupts the turn).
        const sinceAllowed = () => shown(second).split('Allowed by PermissionRequest hook').at(-1)!;
        assert.ok(await until(() => IDLE.test(sinceAllowed()), 10_000), `the turn ends: ${JSON.stringify(sinceAllowed().slice(-400))}`);
        for (let i = 0; i < 3; i++) {
          tty.type('\x03');
          await new Promise((r) => setTimeout(r, 500));
          tty.type('\x03');
          const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3_000))]);
          if (gone) break;
          t.diagnostic(`Ctrl-C twice left claude running: ${JSON.stringify(shown(second).slice(-300))}`);
        }
        const m = await exited;
        assert.equal(m[1], '0', 'claude exits 0 after Ctrl-C twice');
        t.diagnostic(`claude exited ${since(Date.now())}; the inbox holds ${inbox.size} questions`);
        assert.equal(inbox.size, 0, 'nothing left waiting in the editor');
        for (const r of mine())
          t.diagnostic(`  API ${since(r.at)} ${r.method} ${r.path} → ${r.answered} [${r.toolResults.length} tool results]`);
      } finally {
        tty.type('\x03\x03');
      }
    },
  );
});
