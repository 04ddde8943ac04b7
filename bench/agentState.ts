/**
 * Issue 17: the session state's cost and speed, against the real engine (a held session in a
 * toolbox container, as in bench/sessions.ts):
 * - latency: a program in the container emits OSC 9 → the terminal (ToolboxShellPty) recognises
 *   it → the Workspaces tree model is rendered with the session as "needs you", the status bar's
 *   text and the nudge's decision and text are computed (what extension.ts and ui/agents/agentNudge.ts
 *   do on the change). The program (python3, in the runtime image) stamps the OSC with its
 *   CLOCK_MONOTONIC time, which the host (process.hrtime) shares with the container;
 * - throughput: 256 MiB of agent-like output (the recorded fixtures and text) through the
 *   terminal with and without the recogniser, interleaved in the same run: end to end through a
 *   held session, and through the terminal alone from memory (the CPU the recogniser adds,
 *   without the transport's noise).
 */
import { PassThrough } from 'node:stream';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StartedShell, ContainerSummary } from '../extension/src/backend/api';
import { openContainer } from '../extension/src/engine/open';
import { holderAddress, reachHolder, startHeldSession, type HeldSession } from '../extension/src/engine/sessions';
import { needsYouStatus, nudgeText, shouldNudge } from '../extension/src/ui/agents/agentState';
import { removeNamespaceObjects } from '../test/support/docker';
import { installVscodeLite, silentLog } from '../test/support/vscodeLite';
import { AGENT_FIXTURES } from '../test/fixtures/agentOutput';
import { fmtMs, interleave, spreadOf, stats, type ResultRow } from './harness';
import { heldSessionRig } from './sessions';

installVscodeLite();

const { ToolboxShellPty } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../extension/src/ui/shells/toolboxShellPty') as typeof import('../extension/src/ui/shells/toolboxShellPty');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { workspacesNodes } = require('../extension/src/ui/views/treeNodes') as typeof import('../extension/src/ui/views/treeNodes');

type Pty = InstanceType<typeof ToolboxShellPty>;
const MiB = 2 ** 20;

/**
 * One MiB of what agents print: CSI-coloured lines (Ink writes several sequences per line), with
 * one recorded fixture (titles, notifications, prompt marks: about 6 signals) every `every` lines.
 * Every 2900 lines (about 256 KiB) is about 25 signals per MiB, generous for a real agent (a title
 * frame ten times a second while it prints); every 40 lines (about 2000 signals per MiB) is the
 * worst case, for the record.
 */
function agentLikeMiB(every: number): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  for (let i = 0; n < MiB; i++) {
    const b =
      i % every === 0
        ? AGENT_FIXTURES[(i / every) % AGENT_FIXTURES.length]!.bytes
        : Buffer.from(`\x1b[38;2;215;119;87m●\x1b[39m line ${i}: reading src/parser.ts, 42 matches — ünïcödé ✓ \x1b[2mdim\x1b[0m\r\n`);
    parts.push(b);
    n += b.length;
  }
  return Buffer.concat(parts).subarray(0, MiB);
}

/** A terminal on a started shell; resolves once it is running. */
async function terminalOn(shell: StartedShell, observe: boolean): Promise<Pty> {
  const pty = new ToolboxShellPty({ container: 'bench', start: async () => shell, observe, log: silentLog as never });
  const started = new Promise<void>((resolve) => pty.onDidStart(() => resolve()));
  pty.open({ columns: 120, rows: 40 });
  await started;
  return pty;
}

/** Twenty containers with two held shells each, as the tree would show them. */
function snapshotWith(name: string, sessionId: string) {
  const containers: ContainerSummary[] = Array.from({ length: 20 }, (_, i) => ({
    id: `id${i}`,
    name: i === 0 ? name : `toolbox-other-${i}`,
    state: 'running',
    kind: 'workspace' as const,
    mountsSocketVolume: false,
    pidMode: '',
    peer: false,
    workspace: `/src/w${i}`,
    shells: [
      { id: i === 0 ? sessionId : `s${i}a`, pid: 10, command: 'claude', started: Date.now(), attached: 1 },
      { id: `s${i}b`, pid: 11, command: 'zsh -l', started: Date.now(), attached: 0 },
    ],
  }));
  return {
    wantPeer: new Map<string, boolean>(),
    findings: [],
    loading: false,
    takenAt: Date.now(),
    snapshot: {
      containers,
      anchor: { name: 'a', state: 'missing' as const },
      volume: { name: 'v', exists: false },
      members: [],
      sessions: [],
    },
  };
}

export async function benchAgentState(): Promise<ResultRow[]> {
  const { d, names, home, ws, runDir, ctx, plan } = await heldSessionRig('a');
  const sessions: HeldSession[] = [];
  const chunk = agentLikeMiB(2900);
  const dense = agentLikeMiB(40);
  writeFileSync(join(ws, 'agent-output.bin'), chunk);
  chmodSync(ws, 0o755); // the container's user reads it

  try {
    const opened = await openContainer(ctx, plan, { ensureImage: async () => undefined });
    const transport = await reachHolder(d, opened.id, holderAddress(runDir, plan.create.User));
    const cwd = plan.create.WorkingDir ?? '/';

    // Latency: each Enter makes the stamper print an OSC 9 carrying its clock.
    const stamper = await startHeldSession(transport, {
      // Python's monotonic_ns and Node's hrtime read the same CLOCK_MONOTONIC (one kernel).
      cmd: ['python3', '-c', 'import os, sys, time\nfor _ in sys.stdin:\n    os.write(1, b"\\x1b]9;t=%d\\x07" % time.monotonic_ns())'],
      env: ['TERM=xterm-256color'],
      cwd,
      cols: 120,
      rows: 40,
    });
    sessions.push(stamper);
    const pty = await terminalOn(stamper, true);
    const state = snapshotWith('toolbox-bench', 'sess-1');
    const lat: number[] = [];
    let done: (() => void) | undefined;
    pty.onDidChangeAgent((status) => {
      if (status.state !== 'needsYou') return;
      // What extension.ts and ui/agents/agentNudge.ts do on a change: the tree model, the status bar, the nudge.
      const agents = [{ key: 1, container: 'toolbox-bench', title: 'Toolbox: bench', sessionId: 'sess-1', status }];
      const nodes = workspacesNodes(state, ['/src/w0'], '', agents);
      const row = nodes[0]?.children?.[0];
      const bar = needsYouStatus(agents);
      const nudge = shouldNudge('always', { windowFocused: true, activeTerminal: false }) ? nudgeText('toolbox-bench', status) : '';
      const t1 = process.hrtime.bigint();
      if (!row?.description?.startsWith('needs you') || !bar || !nudge) throw new Error('the change did not reach the tree model');
      const stamp = BigInt(/t=(\d+)/.exec(status.message ?? '')?.[1] ?? '0');
      lat.push(Number(t1 - stamp) / 1e6);
      done?.();
    });
    for (let i = 0; i < 120; i++) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no OSC 9 came back: ${pty.transcript.slice(-300)}`)), 10_000);
        done = () => {
          clearTimeout(timer);
          resolve();
        };
        pty.handleInput('\r'); // also the user's reply: needs you → working
      });
    }
    pty.close();
    const l = stats(lat.slice(20));

    // Throughput end to end: 256 MiB from a held session through the terminal.
    const bytes = 256 * MiB;
    const flood = {
      cmd: ['sh', '-c', 'i=0; while [ $i -lt 256 ]; do cat /workspace/agent-output.bin; i=$((i+1)); done'],
      env: [],
      cwd,
      cols: 120,
      rows: 40,
    };
    const through = (observe: boolean) => async () => {
      const s = await startHeldSession(transport, flood);
      const p = await terminalOn(s, observe);
      let n = 0;
      p.onDidWrite((t) => (n += t.length));
      await s.exitCode;
      p.close();
      if (n < bytes / 2) throw new Error(`only ${n} characters arrived: ${p.transcript.slice(-200)}`);
    };
    const e2e = await interleave({ with: through(true), without: through(false) }, { rounds: 6, warmup: 1 });

    // Throughput in memory: the same bytes into the terminal from a stream, no transport.
    const inMemory =
      (observe: boolean, block = chunk) =>
      async () => {
        const stream = new PassThrough();
        const shell = { stream, exitCode: new Promise<number>(() => undefined), resize: async () => undefined, dispose: () => undefined };
        const p = await terminalOn(shell as unknown as StartedShell, observe);
        let n = 0;
        p.onDidWrite((t) => (n += t.length));
        const pieces = Array.from({ length: 16 }, (_, k) => block.subarray(k * 65536, (k + 1) * 65536));
        for (let i = 0; i < 256; i++) for (const piece of pieces) stream.emit('data', piece);
        p.close();
        if (n === 0) throw new Error('nothing was written');
      };
    const mem = await interleave({ with: inMemory(true), without: inMemory(false) }, { rounds: 10, warmup: 2 });
    const memDense = await interleave({ with: inMemory(true, dense), without: inMemory(false, dense) }, { rounds: 10, warmup: 2 });

    const cost = (r: Record<string, { median: number }>) => r.with!.median / r.without!.median - 1;
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
    const mibs = (s: { median: number }) => (256 / (s.median / 1000)).toFixed(0);
    return [
      {
        benchmark: 'Agent state: signal → tree',
        measure: 'OSC 9 printed in the container (held session) → tree model, status bar and nudge updated',
        value: `p50 ${fmtMs(l.median)}, p99 ${fmtMs(l.p99)}`,
        spread: spreadOf(l),
        goal: '≤ 100 ms p50',
        met: l.median <= 100,
      },
      {
        benchmark: 'Agent state: throughput cost',
        measure: '256 MiB of agent-like output (about 25 signals per MiB), held session → terminal, with vs without the recogniser',
        value: `${pct(cost(e2e))} (${mibs(e2e.with!)} vs ${mibs(e2e.without!)} MiB/s)`,
        spread: `with ${spreadOf(e2e.with!)}; without ${spreadOf(e2e.without!)}`,
        goal: '≤ 3 %',
        met: cost(e2e) <= 0.03,
      },
      {
        benchmark: 'Agent state: throughput cost',
        measure: 'the same 256 MiB into the terminal from memory (no transport), with vs without the recogniser',
        value: `${pct(cost(mem))} (${mibs(mem.with!)} vs ${mibs(mem.without!)} MiB/s)`,
        spread: `with ${spreadOf(mem.with!)}; without ${spreadOf(mem.without!)}`,
        goal: '≤ 3 %',
        met: cost(mem) <= 0.03,
      },
      {
        benchmark: 'Agent state: throughput cost',
        measure: 'the same from memory, signal-dense (a fixture every 40 lines, about 2000 signals per MiB)',
        value: `${pct(cost(memDense))} (${mibs(memDense.with!)} vs ${mibs(memDense.without!)} MiB/s)`,
        spread: `with ${spreadOf(memDense.with!)}; without ${spreadOf(memDense.without!)}`,
        goal: 'reported',
        met: undefined,
      },
    ];
  } finally {
    await Promise.all(sessions.map((s) => s.kill().catch(() => undefined)));
    await removeNamespaceObjects(d, names);
    rmSync(home, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
}
