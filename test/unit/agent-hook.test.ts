/**
 * images/runtime/toolbox-agent-hook, the program Claude Code and Codex run on their hook events in
 * the runtime image (docs/decisions/0050-approvals-over-the-bridge.md), run by python3 on this host
 * against a stand-in bridge: a node:http server on a unix socket in a temp dir laid out like the
 * container's bridge dir (token, port, run/bridge.sock), which TOOLBOX_AGENT_HOOK_BRIDGE_DIR points
 * the hook at. What it sends (/approval, /agent-event, the body's fields and bounds), what it prints
 * for each answer, and how it survives a bridge that goes away and comes back. Also the session
 * holder's half: each held shell carries its own id in TOOLBOX_SESSION_ID.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bearerToken, isAllowedHostHeader } from '../../extension/src/bridge/gate';
import { AGENT_HOOK_LIMITS } from '../../extension/src/contract/agentHook';
import { BRIDGE_FILES, ENV, REQUEST_CONTENT_TYPE, ROUTES } from '../../extension/src/contract/shims';
import { socketTransport, startHeldSession, type HeldSession } from '../../extension/src/engine/sessions';
import { repoRoot } from '../support/image';
import { hasPython } from '../support/python';

const HOOK = join(repoRoot(), 'images', 'runtime', 'toolbox-agent-hook');
const HOLDER = join(repoRoot(), 'images', 'runtime', 'toolbox-session');
const TOKEN = 'f'.repeat(64);
const ALLOW = '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n';

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** One request the stand-in bridge received. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Resolves when the hook's connection closes. */
  closed: Promise<void>;
}

type Handler = (seen: Seen, res: ServerResponse, req: IncomingMessage, n: number) => void;

/** A bridge state dir (token, port, run/) and a stand-in bridge on its socket. */
class StandIn {
  readonly dir = tempDir('tbxt-hook-');
  readonly socket = join(this.dir, BRIDGE_FILES.runDir, BRIDGE_FILES.socket);
  readonly seen: Seen[] = [];
  /** The `at` of each /agent-event body, in arrival order. */
  readonly eventTimes: unknown[] = [];
  private server: Server | undefined;
  private waiters: Array<() => void> = [];

  constructor(private handler: Handler) {
    mkdirSync(join(this.dir, BRIDGE_FILES.runDir));
    writeFileSync(join(this.dir, BRIDGE_FILES.token), `${TOKEN}\n`);
    // Nothing listens on port 1: the TCP fallback (host.docker.internal) fails at once.
    writeFileSync(join(this.dir, BRIDGE_FILES.port), '1\n');
  }

  async listen(handler: Handler = this.handler): Promise<void> {
    this.handler = handler;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        // A timeline report carries the time the agent ran the hook; kept apart, so bodies compare whole.
        if (req.url === ROUTES.agentEvent) {
          this.eventTimes.push(body.at);
          delete body.at;
        }
        const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, closed };
        this.seen.push(seen);
        for (const wake of this.waiters.splice(0)) wake();
        this.handler(seen, res, req, this.seen.length);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.socket, resolve));
    this.server = server;
  }

  /** Stops listening (the socket file goes) and drops every open connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async nextRequest(count: number, timeoutMs = 10_000): Promise<Seen> {
    const end = Date.now() + timeoutMs;
    while (this.seen.length < count) {
      if (Date.now() > end) throw new Error(`the stand-in bridge saw ${this.seen.length} requests, not ${count}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.seen[count - 1];
  }
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
};
const text = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(body);
};

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the hook with `input` on stdin; `env` adds to a minimal environment (nothing of ours inherited). */
function startHook(agent: string, input: unknown, env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Run> } {
  const started = Date.now();
  const child = spawn('python3', [HOOK, agent], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(typeof input === 'string' ? input : JSON.stringify(input));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started })),
  );
  return { child, done };
}

function runHook(agent: string, input: unknown, env: Record<string, string> = {}): Promise<Run> {
  return startHook(agent, input, env).done;
}

const permission = (over: Record<string, unknown> = {}) => ({
  session_id: 'abc-123',
  transcript_path: '/nonexistent/transcript.jsonl',
  cwd: '/workspace/app',
  permission_mode: 'default',
  hook_event_name: 'PermissionRequest',
  tool_name: 'Bash',
  tool_input: { command: 'npm test', description: 'Run the tests' },
  ...over,
});

/** Claude Code's rule suggestions as its PermissionRequest hook input carries them. */
const SUGGESTIONS = [
  { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'npm test:*' }], behavior: 'allow', destination: 'localSettings' },
  'not a rule',
  { type: 'setMode', mode: 'acceptEdits', destination: 'userSettings' },
];

describe('toolbox-agent-hook: PermissionRequest → /approval', { skip: hasPython ? false : 'no python3 on this host' }, () => {
  it('prints allow exactly, after one POST with the headers the bridge gate takes', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => json(res, 200, { decision: 'allow', scope: 'once' }));
    await bridge.listen();
    try {
      const run = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir, [ENV.sessionId]: 's12' });
      assert.equal(run.code, 0);
      assert.equal(run.stdout, ALLOW);
      assert.equal(run.stderr, '');
      assert.equal(bridge.seen.length, 1);
      const [seen] = bridge.seen;
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, ROUTES.approval);
      assert.equal(seen.headers['content-type'], REQUEST_CONTENT_TYPE);
      assert.equal(bearerToken(seen.headers.authorization), TOKEN);
      assert.equal(seen.headers.host, 'localhost');
      assert.ok(isAllowedHostHeader(seen.headers.host, undefined), 'the gate takes the Host header on the unix socket');
      assert.equal(seen.headers.origin, undefined);
      assert.deepEqual(seen.body, {
        agent: 'claude',
        session: 's12',
        agent_session: 'abc-123',
        tool: 'Bash',
        input: { command: 'npm test', description: 'Run the tests' },
        cwd: '/workspace/app',
        session_rule: false,
        retry: 0,
      });
    } finally {
      await bridge.close();
    }
  });

  it('allows for the session with Claude Code rule suggestions, their destination the session', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => json(res, 200, { decision: 'allow', scope: 'session' }));
    await bridge.listen();
    try {
      const run = await runHook('claude', permission({ permission_suggestions: SUGGESTIONS }), {
        TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir,
      });
      assert.equal(run.code, 0);
      assert.deepEqual(JSON.parse(run.stdout), {
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: {
            behavior: 'allow',
            updatedPermissions: [
              { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'npm test:*' }], behavior: 'allow', destination: 'session' },
              { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
            ],
          },
        },
      });
      assert.equal(bridge.seen[0].body.session_rule, true);

      // Codex has no session rules: a plain allow, and it never offers one.
      const codex = await runHook('codex', permission({ permission_suggestions: SUGGESTIONS }), {
        TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir,
      });
      assert.equal(codex.stdout, ALLOW);
      assert.equal(bridge.seen[1].body.agent, 'codex');
      assert.equal(bridge.seen[1].body.session_rule, false);
      // Claude Code without suggestions: nothing to remember, a plain allow.
      const bare = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
      assert.equal(bare.stdout, ALLOW);
    } finally {
      await bridge.close();
    }
  });

  it("denies with the user's reason, or a default one", { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res, _req, n) =>
      json(res, 200, n === 1 ? { decision: 'deny', reason: 'Not on main, please.' } : { decision: 'deny' }),
    );
    await bridge.listen();
    try {
      const env = { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir };
      const withReason = await runHook('claude', permission(), env);
      assert.equal(
        withReason.stdout,
        '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Not on main, please."}}}\n',
      );
      const without = await runHook('codex', permission(), env);
      assert.deepEqual(JSON.parse(without.stdout), {
        hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied in VS Code.' } },
      });
      assert.equal(withReason.code, 0);
      assert.equal(without.code, 0);
    } finally {
      await bridge.close();
    }
  });

  it('prints nothing for ask, or for an answer it does not know', { timeout: 20_000 }, async () => {
    const answers: unknown[] = [{ decision: 'ask', reason: 'No VS Code window takes questions.' }, { decision: 'yes' }, ['allow'], 'allow'];
    const bridge = new StandIn((_seen, res, _req, n) => json(res, 200, answers[n - 1]));
    await bridge.listen();
    try {
      for (const answer of answers) {
        const run = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
        assert.equal(run.code, 0, JSON.stringify(answer));
        assert.equal(run.stdout, '', JSON.stringify(answer));
      }
      assert.equal(bridge.seen.length, answers.length);
    } finally {
      await bridge.close();
    }
  });

  it('exits 0 at once and prints nothing with no bridge, no input or input it does not take', { timeout: 20_000 }, async () => {
    const empty = tempDir('tbxt-hook-none-');
    const bridge = new StandIn((_seen, res) => json(res, 200, { decision: 'allow' }));
    await bridge.listen();
    try {
      const runs = [
        await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: empty }),
        await runHook('claude', '', { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('claude', '{"hook_event_name": "PermissionRequest", ', { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('claude', ['PermissionRequest'], { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('gemini', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('claude', permission({ hook_event_name: 'PreToolUse' }), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('claude', permission({ tool_name: 'x'.repeat(129) }), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
        await runHook('claude', permission({ tool_name: 42 }), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }),
      ];
      for (const [i, run] of runs.entries()) {
        assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: '' }, `run ${i}`);
        assert.ok(run.ms < 5_000, `run ${i} took ${run.ms} ms`);
      }
      assert.equal(bridge.seen.length, 0, 'nothing reached the bridge');
    } finally {
      await bridge.close();
    }
  });

  it('sends a bounded input: scalar values, preferred keys first, no bulk text, long text cut', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => json(res, 200, { decision: 'ask' }));
    await bridge.listen();
    try {
      const long = 'x'.repeat(5000);
      // Characters outside the BMP count two (the bridge counts UTF-16 units), and are never cut in half.
      const astral = `${'y'.repeat(4095)}\u{1F600}`;
      const split = `${'w'.repeat(4094)}\u{1F600}zz`;
      const rest = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i]));
      const input = {
        zeta: 'last',
        description: split,
        content: 'the whole file',
        new_string: 'b',
        old_string: 'a',
        edits: [{ old_string: 'a', new_string: 'b' }],
        new_source: 'cell',
        nested: { a: 1 },
        nothing: null,
        'bad key': 'x',
        url: 'https://example.com',
        file_path: long,
        command: astral,
        flag: true,
        ratio: 0.5,
        ...rest,
      };
      const run = await runHook('claude', permission({ tool_name: 'mcp__files__write', tool_input: input, session_id: 'bad id!' }), {
        TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir,
        [ENV.sessionId]: 'shell-1',
      });
      assert.equal(run.stdout, '');
      const body = bridge.seen[0].body;
      assert.equal(body.truncated, true);
      assert.equal(body.session, undefined, 'an id that is not the holder’s is left out');
      assert.equal(body.agent_session, undefined, 'an agent session id with a space is left out');
      assert.equal(body.tool, 'mcp__files__write');
      const sent = body.input as Record<string, unknown>;
      assert.deepEqual(Object.keys(sent), [
        'command',
        'file_path',
        'url',
        'description',
        'flag',
        'k00',
        'k01',
        'k02',
        'k03',
        'k04',
        'k05',
        'k06',
        'k07',
        'k08',
        'k09',
        'k10',
      ]);
      assert.equal(Object.keys(sent).length, AGENT_HOOK_LIMITS.inputKeys);
      assert.equal(sent.file_path, `${'x'.repeat(AGENT_HOOK_LIMITS.textChars - 1)}…`);
      assert.equal(sent.command, `${'y'.repeat(4095)}…`);
      assert.equal(sent.description, `${'w'.repeat(4094)}…`);
      for (const value of Object.values(sent)) {
        if (typeof value === 'string') assert.ok(value.length <= AGENT_HOOK_LIMITS.textChars, 'within the bridge’s limit, in UTF-16 units');
      }
      assert.equal(sent.flag, true);
      assert.equal(sent.k00, 0);
    } finally {
      await bridge.close();
    }
  });

  it('asks again after the bridge hangs up mid-wait, counting the retries', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res, req, n) => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, { decision: 'allow' });
    });
    await bridge.listen();
    try {
      const run = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
      assert.equal(run.stdout, ALLOW);
      assert.deepEqual(
        bridge.seen.map((s) => s.body.retry),
        [0, 1],
      );
    } finally {
      await bridge.close();
    }
  });

  it('reaches a bridge that went away and came back (a window reload)', { timeout: 30_000 }, async () => {
    const bridge = new StandIn(() => undefined);
    await bridge.listen();
    try {
      const { done } = startHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
      await bridge.nextRequest(1);
      await bridge.close(); // the window reloads: the socket goes, the connection drops
      await new Promise((r) => setTimeout(r, 1_600));
      await bridge.listen((_seen, res) => json(res, 200, { decision: 'allow' }));
      const run = await done;
      assert.equal(run.stdout, ALLOW);
      assert.equal(bridge.seen.length, 2);
      const retry = bridge.seen[1].body.retry as number;
      assert.ok(retry >= 2, `the attempts while nothing listened count too (retry ${retry})`);
    } finally {
      await bridge.close();
    }
  });

  it(
    'leaves the question to the agent at once when no window serves the container (nothing ever listened)',
    { timeout: 20_000 },
    async () => {
      const bridge = new StandIn(() => undefined); // the bridge files are there, nothing listens
      try {
        const run = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
        assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: '' });
        assert.ok(run.ms < 3_000, `no reconnect window for a bridge that was never there (${run.ms} ms)`);
        assert.equal(bridge.seen.length, 0);
      } finally {
        await bridge.close();
      }
    },
  );

  it('gives up, printing nothing, when the bridge stays away past the reconnect window', { timeout: 30_000 }, async () => {
    const bridge = new StandIn(() => undefined);
    await bridge.listen();
    try {
      const { done } = startHook('claude', permission(), {
        TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir,
        TOOLBOX_AGENT_HOOK_RECONNECT_S: '2',
      });
      await bridge.nextRequest(1);
      await new Promise((r) => setTimeout(r, 700)); // the question is held, then the window closes
      const droppedAt = Date.now();
      await bridge.close();
      const run = await done;
      const waited = Date.now() - droppedAt;
      assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: '' });
      assert.ok(waited >= 1_400, `kept trying for the window (${waited} ms)`);
      assert.ok(waited < 9_000, `then gave up (${waited} ms)`);
      assert.equal(bridge.seen.length, 1);
    } finally {
      await bridge.close();
    }
  });

  it('hangs up when the agent stops it (SIGTERM): the bridge sees the connection close', { timeout: 20_000 }, async () => {
    const bridge = new StandIn(() => undefined); // never answers: the user has not decided
    await bridge.listen();
    try {
      const { child, done } = startHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
      const seen = await bridge.nextRequest(1);
      let closed = false;
      void seen.closed.then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(closed, false, 'the hook holds the connection while it waits');
      child.kill('SIGTERM');
      await Promise.race([
        seen.closed,
        new Promise((_, reject) => setTimeout(() => reject(new Error('the connection stayed open after SIGTERM')), 5_000)),
      ]);
      const run = await done;
      assert.equal(run.stdout, '');
      assert.equal(bridge.seen.length, 1, 'no second request');
    } finally {
      await bridge.close();
    }
  });

  it('hangs up when the agent kills the shell it started the hook with (sh -c that does not exec)', { timeout: 20_000 }, async () => {
    const bridge = new StandIn(() => undefined);
    await bridge.listen();
    try {
      // `; exit 0` keeps any sh from exec'ing the hook, as Debian's dash never does for `sh -c`.
      const shell = spawn('sh', ['-c', `python3 '${HOOK}' claude; exit 0`], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      shell.stdin!.end(JSON.stringify(permission()));
      const seen = await bridge.nextRequest(1);
      shell.kill('SIGTERM'); // what the agent does when the user answers in the terminal
      await Promise.race([
        seen.closed,
        new Promise((_, reject) => setTimeout(() => reject(new Error('the orphaned hook kept the question open')), 5_000)),
      ]);
      assert.equal(bridge.seen.length, 1);
    } finally {
      await bridge.close();
    }
  });

  it('says a refusal on stderr in one line, decides nothing and does not ask again', { timeout: 20_000 }, async () => {
    const refusals: Array<[number, string]> = [
      [401, 'unauthorized\nsecond line'],
      [413, 'Request body too large (32768 bytes at most)\n'],
      [429, ''],
    ];
    const bridge = new StandIn((_seen, res, _req, n) => text(res, refusals[n - 1][0], refusals[n - 1][1]));
    await bridge.listen();
    try {
      const runs = [];
      for (let i = 0; i < refusals.length; i++)
        runs.push(await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir }));
      assert.deepEqual(
        runs.map((r) => [r.code, r.stdout, r.stderr]),
        [
          [0, '', 'toolbox-agent-hook: unauthorized\n'],
          [0, '', 'toolbox-agent-hook: Request body too large (32768 bytes at most)\n'],
          [0, '', 'toolbox-agent-hook: HTTP 429\n'],
        ],
      );
      assert.equal(bridge.seen.length, refusals.length, 'one request each');
    } finally {
      await bridge.close();
    }
  });

  it('asks again when a window going away withdraws the held question (503)', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res, _req, n) => {
      if (n === 1) setTimeout(() => text(res, 503, 'The VS Code window that held this question is going away; ask again.\n'), 700);
      else json(res, 200, { decision: 'allow' });
    });
    await bridge.listen();
    try {
      const run = await runHook('claude', permission(), { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir });
      assert.deepEqual({ stdout: run.stdout, stderr: run.stderr }, { stdout: ALLOW, stderr: '' });
      assert.deepEqual(
        bridge.seen.map((s) => s.body.retry),
        [0, 1],
      );
    } finally {
      await bridge.close();
    }
  });

  it('stops asking a bridge that answers 503 at once after the reconnect window, and says why', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => text(res, 503, 'Busy: too many questions at once\n'));
    await bridge.listen();
    try {
      const run = await runHook('claude', permission(), {
        TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir,
        TOOLBOX_AGENT_HOOK_RECONNECT_S: '1.2',
      });
      assert.deepEqual(
        { code: run.code, stdout: run.stdout, stderr: run.stderr },
        { code: 0, stdout: '', stderr: 'toolbox-agent-hook: Busy: too many questions at once\n' },
      );
      assert.ok(bridge.seen.length >= 2 && bridge.seen.length <= 4, `asked ${bridge.seen.length} times in the window`);
      assert.ok(run.ms < 6_000, `then stopped (${run.ms} ms)`);
    } finally {
      await bridge.close();
    }
  });
});

describe('toolbox-agent-hook: timeline events → /agent-event', { skip: hasPython ? false : 'no python3 on this host' }, () => {
  it('sends PostToolUse with the tool and its bounded input, and prints nothing', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => res.writeHead(204).end());
    await bridge.listen();
    try {
      const run = await runHook(
        'claude',
        {
          session_id: 'abc-123',
          hook_event_name: 'PostToolUse',
          tool_name: 'Write',
          tool_input: { file_path: '/workspace/a.txt', content: 'secret file text' },
          tool_response: { success: true },
        },
        { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir, [ENV.sessionId]: 's3' },
      );
      assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: '' });
      // The report is sent by a child of its own session, after the hook has returned, with the time
      // the agent ran the hook.
      const ranAt = Date.now() - run.ms;
      await bridge.nextRequest(1);
      const at = bridge.eventTimes[0] as number;
      assert.ok(Number.isInteger(at) && at >= ranAt - 1_000 && at <= ranAt + run.ms, `at ${at}, ran ${ranAt}`);
      assert.equal(bridge.seen[0].url, ROUTES.agentEvent);
      assert.deepEqual(bridge.seen[0].body, {
        agent: 'claude',
        session: 's3',
        agent_session: 'abc-123',
        event: 'PostToolUse',
        tool: 'Write',
        input: { file_path: '/workspace/a.txt' },
      });
    } finally {
      await bridge.close();
    }
  });

  it('sends Notification, SessionStart and SessionEnd with their words, bounded', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => res.writeHead(204).end());
    await bridge.listen();
    try {
      const env = { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir };
      await runHook(
        'claude',
        { hook_event_name: 'Notification', message: `Claude needs your permission to use Bash${'!'.repeat(5000)}` },
        env,
      );
      await bridge.nextRequest(1);
      await runHook('claude', { hook_event_name: 'SessionStart', source: 'resume' }, env);
      await bridge.nextRequest(2);
      await runHook('claude', { hook_event_name: 'SessionEnd', reason: 'x'.repeat(129) }, env);
      await bridge.nextRequest(3);
      const [note, start, end] = bridge.seen.map((s) => s.body);
      assert.equal(note.event, 'Notification');
      assert.equal((note.message as string).length, AGENT_HOOK_LIMITS.textChars);
      assert.match(note.message as string, /^Claude needs your permission to use Bash!+…$/);
      assert.equal(note.truncated, true);
      assert.deepEqual(start, { agent: 'claude', event: 'SessionStart', reason: 'resume' });
      assert.deepEqual(end, { agent: 'claude', event: 'SessionEnd' }, 'a reason too long to be one is left out');
    } finally {
      await bridge.close();
    }
  });

  it('sends UserPromptSubmit without the prompt', { timeout: 20_000 }, async () => {
    const bridge = new StandIn((_seen, res) => res.writeHead(204).end());
    await bridge.listen();
    try {
      const run = await runHook(
        'claude',
        { hook_event_name: 'UserPromptSubmit', session_id: 'abc', prompt: 'my secret plans' },
        { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir },
      );
      assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: '' });
      await bridge.nextRequest(1);
      assert.deepEqual(bridge.seen[0].body, { agent: 'claude', agent_session: 'abc', event: 'UserPromptSubmit' });
    } finally {
      await bridge.close();
    }
  });

  it("adds up a Claude Code transcript's usage at Stop, each message once", { timeout: 20_000 }, async () => {
    const dir = tempDir('tbxt-hook-transcript-');
    const transcript = join(dir, 'session.jsonl');
    const assistant = (id: string, usage: object, extra: object = {}) =>
      JSON.stringify({ type: 'assistant', message: { id, role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage }, ...extra });
    const first = { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 5 };
    writeFileSync(
      transcript,
      [
        JSON.stringify({ type: 'summary', summary: 'x' }),
        JSON.stringify({ type: 'user', message: { role: 'user', content: 'hello "assistant"' } }),
        assistant('msg_1', first, { costUSD: 0.01 }),
        assistant('msg_1', first, { costUSD: 0.01 }), // the same message, its next content block
        assistant(
          'msg_2',
          { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000, output_tokens: 7 },
          { costUSD: 0.02 },
        ),
        '{"type":"assistant","message":{"id":"msg_3","usage":{"input_tok',
      ].join('\n'),
    );
    const bridge = new StandIn((_seen, res) => res.writeHead(204).end());
    await bridge.listen();
    try {
      const env = { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir };
      await runHook('claude', { hook_event_name: 'Stop', session_id: 'abc', transcript_path: transcript, stop_hook_active: false }, env);
      await bridge.nextRequest(1);
      const usage = bridge.seen[0].body.usage as Record<string, number>;
      assert.deepEqual(
        { ...usage, cost_usd: Math.round(usage.cost_usd * 1000) / 1000 },
        { input_tokens: 30, output_tokens: 12, cache_read_tokens: 3000, cache_write_tokens: 100, cost_usd: 0.03 },
      );
      // No cost in the entries (today's Claude Code): none is sent. A relative path: no usage at all.
      writeFileSync(transcript, assistant('msg_9', { input_tokens: 1, output_tokens: 2 }));
      await runHook('claude', { hook_event_name: 'SessionEnd', reason: 'exit', transcript_path: transcript }, env);
      await bridge.nextRequest(2);
      assert.deepEqual(bridge.seen[1].body.usage, { input_tokens: 1, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 });
      await runHook('claude', { hook_event_name: 'Stop', transcript_path: 'session.jsonl' }, env);
      await bridge.nextRequest(3);
      await runHook('claude', { hook_event_name: 'Stop', transcript_path: dir }, env);
      await bridge.nextRequest(4);
      writeFileSync(transcript, assistant('msg_9', { input_tokens: -1, output_tokens: 2 }));
      await runHook('claude', { hook_event_name: 'Stop', transcript_path: transcript }, env);
      await bridge.nextRequest(5);
      assert.deepEqual(
        bridge.seen.slice(2).map((s) => s.body),
        [
          { agent: 'claude', event: 'Stop' },
          { agent: 'claude', event: 'Stop' },
          { agent: 'claude', event: 'Stop' },
        ],
      );
    } finally {
      await bridge.close();
    }
  });

  it("takes a Codex rollout's last token count at Stop", { timeout: 20_000 }, async () => {
    const dir = tempDir('tbxt-hook-rollout-');
    const rollout = join(dir, 'rollout.jsonl');
    const tokenCount = (info: object | null) =>
      JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type: 'event_msg', payload: { type: 'token_count', info } });
    const total = (input: number, cached: number, output: number) => ({
      total_token_usage: {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: 1,
        total_tokens: input + output,
      },
      last_token_usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 },
    });
    writeFileSync(
      rollout,
      [
        JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type: 'session_meta', payload: { id: 'x', cwd: '/workspace' } }),
        tokenCount(null),
        tokenCount(total(100, 40, 10)),
        tokenCount(total(250, 90, 30)),
        tokenCount(null),
      ].join('\n') + '\n',
    );
    const bridge = new StandIn((_seen, res) => res.writeHead(204).end());
    await bridge.listen();
    try {
      await runHook(
        'codex',
        { hook_event_name: 'Stop', session_id: 'thread-1', transcript_path: rollout },
        { TOOLBOX_AGENT_HOOK_BRIDGE_DIR: bridge.dir },
      );
      await bridge.nextRequest(1);
      assert.deepEqual(bridge.seen[0].body, {
        agent: 'codex',
        agent_session: 'thread-1',
        event: 'Stop',
        // Codex counts the cached input inside input_tokens; sent apart, as Claude Code counts it.
        usage: { input_tokens: 160, output_tokens: 30, cache_read_tokens: 90, cache_write_tokens: 0 },
      });
    } finally {
      await bridge.close();
    }
  });
});

describe('toolbox-session gives each shell its session id', { skip: hasPython ? false : 'no python3 on this host' }, () => {
  it('in TOOLBOX_SESSION_ID, the id the host records, also for a spare and over a spec that sets one', { timeout: 30_000 }, async () => {
    const dir = tempDir('tbxt-holder-');
    const path = join(dir, 'sessions.sock');
    const holder = spawn('python3', [HOLDER, 'serve', '--socket', path], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, [ENV.sessionId]: 's999' },
      stdio: 'ignore',
    });
    const sessions: HeldSession[] = [];
    try {
      const end = Date.now() + 10_000;
      const transport = socketTransport(path);
      const cmd = ['sh', '-c', `printf 'id=%s.\\n' "$${ENV.sessionId}"; exec sleep 30`];
      const spec = { cmd, env: [`${ENV.sessionId}=s998`], cwd: dir, cols: 80, rows: 24, spare: true };
      for (let i = 0; i < 2; i++) {
        for (;;) {
          try {
            sessions.push(await startHeldSession(transport, spec));
            break;
          } catch (err) {
            if (Date.now() > end) throw err;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        if (i === 0) await new Promise((r) => setTimeout(r, 500)); // the spare starts behind the first
      }
      for (const session of sessions) {
        let out = '';
        session.stream.on('data', (c: Buffer) => (out += c.toString('latin1')));
        while (!/id=[^.]*\./.test(out)) {
          if (Date.now() > end) throw new Error(`session ${session.id} printed ${JSON.stringify(out)}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.match(session.id, /^s\d+$/);
        assert.equal(/id=([^.]*)\./.exec(out)?.[1], session.id);
      }
      assert.equal(sessions[0].id, 's1');
      assert.equal(sessions[1].id, 's2', 'the spare, started second, keeps its id when it is handed over');
    } finally {
      for (const s of sessions) await s.kill().catch(() => undefined);
      holder.kill('SIGKILL');
    }
  });
});
