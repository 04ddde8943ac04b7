/**
 * Holds the shims (shims/*) and the runtime entrypoint to extension/src/contract/ (shims.ts, with
 * upstream.ts's container paths, agentHook.ts, image.ts's holder protocol and egress.ts): every
 * route, JSON field, container path, bridge file name, env name, curl --max-time, exit code and
 * request Content-Type they use is extracted from their text with regexes and compared with the
 * contract, in both directions. The checker is a pure function over file texts so the last tests can prove it
 * fails on a mutated copy.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { credentialRoute } from '../../extension/src/bridge/credential';
import { openRoute } from '../../extension/src/bridge/open';
import { AGENT_HOOK_LIMITS, APPROVAL_DECISIONS, HOOK_AGENTS, HOOK_EVENTS } from '../../extension/src/contract/agentHook';
import {
  BODY_LIMITS,
  BRIDGE_FILES,
  CREDENTIAL_LIMITS_MS,
  EDITORS,
  ENV,
  FIELDS,
  OPEN_LIMITS_MS,
  PROXIMO_HOST_ONLY,
  REQUEST_CONTENT_TYPE,
  ROUTES,
  RUN_LIMITS_MS,
  SERVER_TIMEOUTS_MS,
  SHIM_EXIT,
  SHIM_MAX_TIME_S,
  SHIMS,
} from '../../extension/src/contract/shims';
import { CONCURRENCY_LIMITS } from '../../extension/src/bridge/server';
import { CONTAINER, HOST_DOCKER_INTERNAL } from '../../extension/src/contract/upstream';
import { EGRESS } from '../../extension/src/contract/egress';
import { SESSION_PROTOCOL } from '../../extension/src/contract/image';

type RouteKey = keyof typeof ROUTES;
const LIB = 'bridge-lib.sh';

/** The request body each route carries (upstream's bridge contract). */
const REQUEST_FIELDS: Partial<Record<RouteKey, readonly string[]>> = {
  open: [FIELDS.url],
  edit: [FIELDS.editor, FIELDS.path],
  proximo: [FIELDS.command, FIELDS.args, FIELDS.home, FIELDS.codexHome],
  credential: [FIELDS.op, FIELDS.input],
  sound: [FIELDS.name, FIELDS.data],
  propose: [FIELDS.path, FIELDS.content],
};
/** Routes the agent hook calls (images/runtime/toolbox-agent-hook, checked below): no shim does. */
const AGENT_HOOK_ROUTES: readonly RouteKey[] = ['approval', 'agentEvent'];
/** Routes no shim calls: healthz is for probes; the agent hook's. */
const ROUTES_WITHOUT_SHIM: readonly RouteKey[] = ['healthz', ...AGENT_HOOK_ROUTES];
/** Environment names a script may read without the contract owning them. */
const STANDARD_ENV = new Set(['HOME', 'PATH', 'TMPDIR', 'USER']);

function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'shims')) || !existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no repository root (with shims/ and package.json) above ${__dirname}`);
    dir = up;
  }
  return dir;
}

function readShims(): Record<string, string> {
  const dir = join(repoRoot(), 'shims');
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

function readEntrypoint(): string | undefined {
  const p = join(repoRoot(), 'images', 'runtime', 'entrypoint.sh');
  return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
}

/** The python3 -c '…' snippets of a shell script (the shims keep python free of single quotes). */
function pythonSnippets(text: string): string[] {
  return [...text.matchAll(/python3 -c '([^']*)'/g)].map((m) => m[1]);
}

/** Shell code only: python snippets blanked and whole-line comments dropped. */
function shellCode(text: string): string {
  return text
    .replace(/python3 -c '[^']*'/g, "python3 -c ''")
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n');
}

function all(re: RegExp, text: string, group = 1): string[] {
  return [...text.matchAll(re)].map((m) => m[group]);
}

/** Absolute paths in a script that lie under a root the contract owns. */
function ownedPaths(text: string): string[] {
  const roots = [CONTAINER.home, '/etc/ssl', '/usr/local/lib/toolbox', CONTAINER.shimDir, CONTAINER.workspace];
  return all(/(?<![\w$}.])(\/[\w.-]+(?:\/[\w.-]+)*)/g, text).filter((p) => roots.some((r) => p === r || p.startsWith(`${r}/`)));
}

function knownContainerPaths(): Set<string> {
  const known = new Set<string>(Object.values(CONTAINER));
  for (const dir of [CONTAINER.bridgeDir, CONTAINER.bridgeLegacyDir]) {
    known.add(`${dir}/${BRIDGE_FILES.token}`);
    known.add(`${dir}/${BRIDGE_FILES.port}`);
    known.add(`${dir}/${BRIDGE_FILES.runDir}`);
    known.add(`${dir}/${BRIDGE_FILES.runDir}/${BRIDGE_FILES.socket}`);
  }
  for (const shim of SHIMS) if (shim !== LIB) known.add(`${CONTAINER.shimDir}/${shim}`);
  for (const editor of EDITORS) known.add(`${CONTAINER.shimDir}/${editor}`);
  // The egress forwarder the entrypoint starts (test/unit/egress-forwarder.test.ts holds the rest).
  known.add(EGRESS.forwarder);
  return known;
}

/** Env names a script reads that neither it nor the library it sources (`lib`) assigns. */
function externalEnv(text: string, lib = ''): string[] {
  const code = shellCode(text);
  const assigned = new Set(all(/(?:^|[\s;(])([A-Z_][A-Z0-9_]*)=/gm, `${code}\n${shellCode(lib)}`));
  const read = [
    ...all(/\$\{?([A-Z][A-Z0-9_]*)(?![a-z])/g, code),
    ...pythonSnippets(text).flatMap((py) => all(/os\.environ(?:\.get\(|\[)\s*"([A-Z_][A-Z0-9_]*)"/g, py)),
  ];
  return [...new Set(read)].filter((n) => !assigned.has(n) && !STANDARD_ENV.has(n));
}

/** Keys a python snippet writes into (dict literals, item assignment) or reads from a dict. */
function pythonKeys(py: string): { built: string[]; read: string[] } {
  const withoutEnv = py.replace(/os\.environ(?:\.get\(|\[)\s*"[^"]*"/g, '');
  const built = [...all(/"([A-Za-z_]+)"\s*:/g, withoutEnv), ...all(/\[\s*"([A-Za-z_]+)"\s*\]\s*=(?!=)/g, withoutEnv)];
  const read = [...all(/\.get\(\s*"([A-Za-z_]+)"/g, withoutEnv), ...all(/\[\s*"([A-Za-z_]+)"\s*\](?!\s*=[^=])/g, withoutEnv)];
  return { built, read };
}

/**
 * Every way the given files disagree with the contract, as sentences; empty when they agree.
 * `files` maps a shim's file name to its text; `entrypoint` is images/runtime/entrypoint.sh.
 */
export function contractMismatches(files: Record<string, string>, entrypoint?: string): string[] {
  const out: string[] = [];
  const routeKeyOf = new Map(Object.entries(ROUTES).map(([k, v]) => [v as string, k as RouteKey]));
  const fieldValues = new Set<string>(Object.values(FIELDS));
  const envValues = new Set<string>(Object.values(ENV));
  const known = knownContainerPaths();
  const usedRoutes = new Set<RouteKey>();
  const usedFields = new Set<string>();
  const usedEnv = new Set<string>();

  for (const shim of SHIMS) if (!(shim in files)) out.push(`shim ${shim} listed in SHIMS is missing from shims/`);
  for (const name of Object.keys(files)) {
    if (!(SHIMS as readonly string[]).includes(name)) out.push(`shims/${name} is not listed in SHIMS`);
  }

  const lib = files[LIB] ?? '';
  // The library: state dirs, bridge host, exit code table.
  const libAssign = (name: string) => lib.match(new RegExp(`^${name}=(.*)$`, 'm'))?.[1];
  if (libAssign('BRIDGE_DIR') !== CONTAINER.bridgeDir) {
    out.push(`${LIB}: BRIDGE_DIR is ${libAssign('BRIDGE_DIR')}, contract says ${CONTAINER.bridgeDir}`);
  }
  if (libAssign('BRIDGE_LEGACY_DIR') !== CONTAINER.bridgeLegacyDir) {
    out.push(`${LIB}: BRIDGE_LEGACY_DIR is ${libAssign('BRIDGE_LEGACY_DIR')}, contract says ${CONTAINER.bridgeLegacyDir}`);
  }
  if (libAssign('BRIDGE_HOST') !== HOST_DOCKER_INTERNAL) {
    out.push(`${LIB}: BRIDGE_HOST is ${libAssign('BRIDGE_HOST')}, contract says ${HOST_DOCKER_INTERNAL}`);
  }
  const exitVars = new Map<string, number>();
  for (const m of lib.matchAll(/^SHIM_EXIT_([A-Z_]+)=(\d+)$/gm)) exitVars.set(m[1], Number(m[2]));
  for (const [key, code] of Object.entries(SHIM_EXIT)) {
    const v = exitVars.get(key.toUpperCase());
    if (v !== code) out.push(`${LIB}: SHIM_EXIT_${key.toUpperCase()} is ${v}, contract says ${code}`);
  }
  for (const name of exitVars.keys()) {
    if (!Object.keys(SHIM_EXIT).some((k) => k.toUpperCase() === name)) {
      out.push(`${LIB}: SHIM_EXIT_${name} has no SHIM_EXIT entry`);
    }
  }
  // Bridge file names: every "$…DIR/<a>/<b>" suffix is made of BRIDGE_FILES names.
  const fileNames = new Set<string>(Object.values(BRIDGE_FILES));
  for (const suffix of all(/\$\{?[A-Z_]*DIR\}?((?:\/[\w.-]+)+)/g, shellCode(lib))) {
    for (const seg of suffix.split('/').filter(Boolean)) {
      if (!fileNames.has(seg)) out.push(`${LIB}: bridge file name "${seg}" (in ${suffix}) is not in BRIDGE_FILES`);
    }
  }
  const socketSuffix = `/${BRIDGE_FILES.runDir}/${BRIDGE_FILES.socket}`;
  if (!lib.includes(`$BRIDGE_STATE_DIR${socketSuffix}`)) out.push(`${LIB}: the socket is not read at <state dir>${socketSuffix}`);
  for (const f of [BRIDGE_FILES.token, BRIDGE_FILES.port]) {
    if (!lib.includes(`$BRIDGE_STATE_DIR/${f}`)) out.push(`${LIB}: the ${f} file is not read from the state dir`);
  }

  for (const [name, text] of Object.entries(files)) {
    const code = shellCode(text);
    if (name !== LIB && !text.includes(`\n. ${CONTAINER.bridgeLib}\n`)) {
      out.push(`${name}: does not source ${CONTAINER.bridgeLib}`);
    }
    // Routes and per-route curl --max-time.
    const posts = [...code.matchAll(/\bbridge_post\b(.*)/g)].filter((m) => !/^\s*\(\)/.test(m[1]));
    const routesHere: RouteKey[] = [];
    for (const m of posts) {
      const call = m[1].match(/^\s+(\/[\w-]+)\s+"\$\w+"\s+(\d+)\s*$/);
      if (!call) {
        out.push(`${name}: bridge_post${m[1]} does not pass a literal route, a body variable and a literal max time`);
        continue;
      }
      const key = routeKeyOf.get(call[1]);
      if (!key) {
        out.push(`${name}: route ${call[1]} is not in ROUTES`);
        continue;
      }
      usedRoutes.add(key);
      routesHere.push(key);
      const max = (SHIM_MAX_TIME_S as Record<string, number>)[key];
      if (Number(call[2]) !== max) out.push(`${name}: --max-time for ${call[1]} is ${call[2]}, SHIM_MAX_TIME_S.${key} is ${max}`);
    }
    // JSON fields: request keys per route, response keys read.
    for (const py of pythonSnippets(text)) {
      const { built, read } = pythonKeys(py);
      for (const k of [...built, ...read]) {
        usedFields.add(k);
        if (!fieldValues.has(k)) out.push(`${name}: JSON key "${k}" is not in FIELDS`);
      }
      if (py.includes('json.dumps')) {
        for (const route of routesHere) {
          const want = [...(REQUEST_FIELDS[route] ?? [])].sort();
          const got = [...new Set(built)].sort();
          if (want.join() !== got.join()) {
            out.push(`${name}: request to ${ROUTES[route]} builds {${got.join(', ')}}, contract says {${want.join(', ')}}`);
          }
        }
      }
    }
    if (/printf[^\n]*\{\s*\\?"/.test(code)) out.push(`${name}: builds JSON with printf; use python3 json.dumps`);
    // Container paths.
    for (const p of ownedPaths(text)) if (!known.has(p)) out.push(`${name}: path ${p} is not a contract path`);
    // Environment names.
    for (const env of externalEnv(text, lib)) {
      usedEnv.add(env);
      if (!envValues.has(env)) out.push(`${name}: reads environment variable ${env}, which is not in ENV`);
    }
    // Exit codes: 0, a SHIM_EXIT_* variable, or the last command's status (host passthrough).
    for (const m of code.matchAll(/\bexit\b([^\n;|&)]*)/g)) {
      const arg = m[1].replace(/#.*/, '').trim();
      const named = arg.match(/^"?\$\{?SHIM_EXIT_([A-Z_]+)\}?"?$/);
      if (arg === '' || arg === '0' || arg === '"$?"' || arg === '$?') continue;
      if (named && exitVars.has(named[1])) continue;
      if (name === LIB && arg === '"$1"') continue; // bridge_fail CODE …
      out.push(`${name}: "exit ${arg}" is neither 0 nor a SHIM_EXIT_* code`);
    }
    for (const m of code.matchAll(/\bbridge_fail\s+(\S+)/g)) {
      const named = m[1].match(/^"\$SHIM_EXIT_([A-Z_]+)"$/);
      if (!named || !exitVars.has(named[1])) out.push(`${name}: bridge_fail ${m[1]} does not use a SHIM_EXIT_* code`);
    }
  }

  const proximo = files.proximo ?? '';
  const hostOnly = proximo.match(/^PROXIMO_HOST_ONLY='([^']*)'$/m)?.[1];
  if (hostOnly?.split(/\s+/).join(' ') !== PROXIMO_HOST_ONLY.join(' ')) {
    out.push(`proximo: PROXIMO_HOST_ONLY is '${hostOnly}', contract says '${PROXIMO_HOST_ONLY.join(' ')}'`);
  }
  if (!proximo.includes(`[ ! -f ${CONTAINER.proximoCa} ]`)) out.push(`proximo: does not gate on ${CONTAINER.proximoCa}`);
  // The bridge refuses a POST without this media type (415) and any request with an Origin.
  const types = all(/-H '[Cc]ontent-[Tt]ype: ([^']*)'/g, shellCode(lib));
  if (types.length !== 1 || types[0] !== REQUEST_CONTENT_TYPE) {
    out.push(`${LIB}: curl sends Content-Type ${JSON.stringify(types)}, the bridge requires "${REQUEST_CONTENT_TYPE}"`);
  }
  for (const [name, text] of Object.entries(files)) if (/\bOrigin:/i.test(shellCode(text))) out.push(`${name}: sends an Origin header`);
  if (!(SHIMS as readonly string[]).includes(EDITORS[0])) out.push(`the ${EDITORS[0]} shim is not in SHIMS`);

  // The reverse direction: everything the contract defines for the shims is used by one.
  for (const key of Object.keys(ROUTES) as RouteKey[]) {
    if (!ROUTES_WITHOUT_SHIM.includes(key) && !usedRoutes.has(key)) out.push(`no shim calls route ${ROUTES[key]}`);
  }
  for (const f of fieldValues) if (!usedFields.has(f)) out.push(`no shim uses JSON field "${f}"`);
  for (const env of [ENV.hostWorkspace, ENV.hostAgentHome, ENV.hostCodexHome, ENV.gitCredentialBridge]) {
    if (!usedEnv.has(env)) out.push(`no shim reads ${env}`);
  }
  for (const key of Object.keys(SHIM_EXIT)) {
    const uses = Object.values(files).some((t) => t.includes(`$SHIM_EXIT_${key.toUpperCase()}`));
    if (key !== 'ok' && !uses) out.push(`no shim exits with SHIM_EXIT_${key.toUpperCase()}`);
  }

  if (entrypoint !== undefined) {
    for (const p of ownedPaths(entrypoint)) if (!known.has(p)) out.push(`entrypoint.sh: path ${p} is not a contract path`);
    for (const env of externalEnv(entrypoint)) {
      if (!envValues.has(env)) out.push(`entrypoint.sh: reads environment variable ${env}, which is not in ENV`);
    }
    for (const dir of [CONTAINER.bridgeDir, CONTAINER.bridgeLegacyDir]) {
      if (!entrypoint.includes(dir)) out.push(`entrypoint.sh: does not look for the bridge token in ${dir}`);
    }
  }
  return out;
}

describe('shim contract', () => {
  const files = readShims();
  const entrypoint = readEntrypoint();

  it('finds every shim listed in SHIMS and nothing else in shims/', () => {
    assert.deepEqual(Object.keys(files).sort(), [...SHIMS].sort());
  });

  it('holds every route, field, path, file name, env name, max time and exit code in the shims to contract.ts', () => {
    assert.deepEqual(contractMismatches(files, entrypoint), []);
  });

  it('sees the literals it checks (the extraction is not vacuous)', () => {
    const posts = Object.values(files).flatMap((t) => all(/bridge_post (\/\w+) "\$\w+" (\d+)/g, shellCode(t), 0));
    assert.equal(posts.length, 6);
    assert.deepEqual(pythonKeys(pythonSnippets(files.paplay).join('\n')).built.sort(), ['data', 'name']);
    assert.deepEqual(pythonKeys(pythonSnippets(files.code).join('\n')).built.sort(), ['editor', 'path']);
    assert.ok(externalEnv(files.code, files[LIB]).includes(ENV.hostWorkspace));
    assert.ok(ownedPaths(files[LIB]).includes(CONTAINER.bridgeDir));
  });

  describe('reports a shim that drifts from the contract', () => {
    const mutations: Array<{ what: string; file: string; from: string | RegExp; to: string; expect: RegExp }> = [
      {
        what: 'a renamed route',
        file: 'code',
        from: 'bridge_post /edit',
        to: 'bridge_post /editor',
        expect: /route \/editor is not in ROUTES/,
      },
      {
        what: 'a wrong max time',
        file: 'proximo',
        from: 'bridge_post /proximo "$body" 135',
        to: 'bridge_post /proximo "$body" 120',
        expect: /--max-time for \/proximo is 120/,
      },
      { what: 'a renamed JSON field', file: 'xdg-open', from: '{"url":', to: '{"link":', expect: /JSON key "link" is not in FIELDS/ },
      {
        what: 'a missing request field',
        file: 'git-credential-toolbox',
        from: ', "input": data',
        to: '',
        expect: /builds \{op\}, contract says \{input, op\}/,
      },
      {
        what: 'a changed exit code',
        file: LIB,
        from: 'SHIM_EXIT_REFUSED=77',
        to: 'SHIM_EXIT_REFUSED=1',
        expect: /SHIM_EXIT_REFUSED is 1, contract says 77/,
      },
      {
        what: 'a literal exit code',
        file: 'code',
        from: 'bridge_fail "$SHIM_EXIT_REFUSED" \'refusing an empty path\'',
        to: 'exit 2',
        expect: /"exit 2" is neither 0 nor a SHIM_EXIT_\* code/,
      },
      {
        what: 'a moved state dir',
        file: LIB,
        from: 'BRIDGE_DIR=/home/toolbox/.toolbox/bridge',
        to: 'BRIDGE_DIR=/home/toolbox/.toolbox/daemon',
        expect: /BRIDGE_DIR is \/home\/toolbox\/.toolbox\/daemon/,
      },
      {
        what: 'a renamed bridge file',
        file: LIB,
        from: /\/run\/bridge\.sock/g,
        to: '/run/daemon.sock',
        expect: /"daemon.sock" .* is not in BRIDGE_FILES/,
      },
      {
        what: 'a renamed env var',
        file: 'code',
        from: /TOOLBOX_HOST_WORKSPACE/g,
        to: 'TOOLBOX_WORKSPACE',
        expect: /reads environment variable TOOLBOX_WORKSPACE, which is not in ENV/,
      },
      {
        what: 'a wrong CA path',
        file: 'proximo',
        from: /\/etc\/ssl\/proximo-ca\.pem/g,
        to: '/etc/ssl/proximo.pem',
        expect: /path \/etc\/ssl\/proximo.pem is not a contract path/,
      },
      {
        what: 'a shorter host-only list',
        file: 'proximo',
        from: "PROXIMO_HOST_ONLY='install uninstall trust config'",
        to: "PROXIMO_HOST_ONLY='install'",
        expect: /PROXIMO_HOST_ONLY is 'install'/,
      },
      {
        what: 'a dropped Content-Type header',
        file: LIB,
        from: " -H 'Content-Type: application/json'",
        to: '',
        expect: /curl sends Content-Type \[\], the bridge requires "application\/json"/,
      },
      {
        what: 'a form Content-Type',
        file: LIB,
        from: "-H 'Content-Type: application/json'",
        to: "-H 'Content-Type: application/x-www-form-urlencoded'",
        expect: /curl sends Content-Type \["application\/x-www-form-urlencoded"\]/,
      },
      {
        what: 'JSON composed with printf',
        file: 'xdg-open',
        from: 'bridge_post /open "$body" 195',
        to: 'body=$(printf \'{"url":"%s"}\' "$url")\nbridge_post /open "$body" 195',
        expect: /builds JSON with printf/,
      },
    ];
    for (const m of mutations) {
      it(`catches ${m.what} in ${m.file}`, () => {
        const original = files[m.file];
        const mutated = typeof m.from === 'string' ? original.replace(m.from, m.to) : original.replace(m.from, m.to);
        assert.notEqual(mutated, original, `the mutation of ${m.file} did not apply`);
        const found = contractMismatches({ ...files, [m.file]: mutated }, entrypoint);
        assert.ok(
          found.some((f) => m.expect.test(f)),
          `expected a mismatch matching ${m.expect}, got:\n${found.join('\n')}`,
        );
      });
    }

    it('catches a route the contract has but no shim calls', () => {
      const withoutCredential = { ...files, 'git-credential-toolbox': files['git-credential-toolbox'].replace(/bridge_post .*\n/, '\n') };
      assert.ok(contractMismatches(withoutCredential).includes('no shim calls route /credential'));
    });

    it('catches a shim listed in SHIMS that is missing from shims/', () => {
      const { proximo: _dropped, ...rest } = files;
      void _dropped;
      assert.ok(contractMismatches(rest).includes('shim proximo listed in SHIMS is missing from shims/'));
    });
  });
});

/** What the session holder's text says of the wire protocol, against SESSION_PROTOCOL. */
function holderMismatches(text: string): string[] {
  const out: string[] = [];
  const magic = /^MAGIC = b"([^"]*)"$/m.exec(text)?.[1]?.replace(/\\n/g, '\n');
  if (magic !== SESSION_PROTOCOL.magic) out.push(`holder MAGIC is ${JSON.stringify(magic)}`);
  const maxFrame = /^MAX_FRAME = 1 << (\d+)$/m.exec(text)?.[1];
  if (maxFrame === undefined || 1 << Number(maxFrame) !== SESSION_PROTOCOL.maxFrame) out.push(`holder MAX_FRAME is 1 << ${maxFrame}`);
  for (const [name, letter] of Object.entries(SESSION_PROTOCOL.frames)) {
    if (!text.includes(`b"${letter}"`)) out.push(`holder never uses the ${name} frame (b"${letter}")`);
  }
  return out;
}

describe('session holder contract', () => {
  const text = readFileSync(join(repoRoot(), 'images', 'runtime', 'toolbox-session'), 'utf8');

  it('speaks the protocol in contract.ts: greeting, frame limit, frame types', () => {
    assert.deepEqual(holderMismatches(text), []);
  });

  it('catches a changed greeting, frame limit or frame type', () => {
    assert.match(holderMismatches(text.replaceAll('TBXSESSION1', 'TBXSESSION2')).join(), /MAGIC/);
    assert.match(holderMismatches(text.replace('MAX_FRAME = 1 << 20', 'MAX_FRAME = 1 << 24')).join(), /MAX_FRAME/);
    assert.match(holderMismatches(text.replaceAll('b"Q"', 'b"q"')).join(), /pong/);
  });
});

describe('contract: /credential time limits (issue 11: the shim must not give up before the bridge answers)', () => {
  it('budgets the consent prompt and host git inside the route limit, and the shim outlasts the route', () => {
    assert.deepEqual({ consent: CREDENTIAL_LIMITS_MS.consent, git: CREDENTIAL_LIMITS_MS.git }, { consent: 30_000, git: 20_000 });
    assert.equal(RUN_LIMITS_MS.credential, CREDENTIAL_LIMITS_MS.consent + CREDENTIAL_LIMITS_MS.git);
    assert.equal(credentialRoute.runLimitMs, RUN_LIMITS_MS.credential);
    // The server closes a response at runLimitMs + write timeout; the shim's curl must still be waiting.
    assert.ok(
      SHIM_MAX_TIME_S.credential * 1000 > RUN_LIMITS_MS.credential + SERVER_TIMEOUTS_MS.write,
      `shim --max-time ${SHIM_MAX_TIME_S.credential} s <= route ${RUN_LIMITS_MS.credential} ms + write ${SERVER_TIMEOUTS_MS.write} ms`,
    );
  });
});

describe("contract: /open waits for the user's answer in VS Code (issue 13, item 2)", () => {
  it('gives the user minutes, not seconds, and the shim outlasts the route', () => {
    assert.equal(RUN_LIMITS_MS.open, OPEN_LIMITS_MS.confirm);
    assert.ok(OPEN_LIMITS_MS.confirm >= 60_000, `${OPEN_LIMITS_MS.confirm} ms is too short to read a dialog and decide`);
    assert.equal(openRoute.runLimitMs, RUN_LIMITS_MS.open);
    assert.ok(
      SHIM_MAX_TIME_S.open * 1000 > RUN_LIMITS_MS.open + SERVER_TIMEOUTS_MS.write,
      `shim --max-time ${SHIM_MAX_TIME_S.open} s <= route ${RUN_LIMITS_MS.open} ms + write ${SERVER_TIMEOUTS_MS.write} ms`,
    );
  });

  it('runs one /open per workspace at a time, so a container cannot stack up dialogs', () => {
    assert.equal(CONCURRENCY_LIMITS.open, 1);
  });
});

/**
 * Where the runtime image installs the agent hook and the agents' settings that run it
 * (images/runtime/Dockerfile; docs/decisions/0050-approvals-over-the-bridge.md).
 */
const AGENT_HOOK_INSTALL = {
  program: CONTAINER.agentHook,
  claudeSettings: CONTAINER.claudeManagedSettings,
  codexHooks: CONTAINER.codexHooks,
  codexConfig: CONTAINER.codexConfig,
} as const;
/** The events Codex has of HOOK_EVENTS (no Notification, no SessionEnd). */
const CODEX_EVENTS: readonly string[] = HOOK_EVENTS.codex;
/** How long an agent lets the PermissionRequest hook run: the longest question and a minute. */
const APPROVAL_HOOK_TIMEOUT_S = AGENT_HOOK_LIMITS.maxTimeoutS + 60;
/** The timeline hooks' timeout in the agents' settings. */
const TIMELINE_HOOK_TIMEOUT_S = 10;
/** Environment names the hook reads for its tests only (documented in its header). */
const AGENT_HOOK_TEST_ENV = new Set(['TOOLBOX_AGENT_HOOK_BRIDGE_DIR', 'TOOLBOX_AGENT_HOOK_RECONNECT_S']);

interface AgentHookFiles {
  hook: string;
  claude: string;
  codex: string;
  dockerfile: string;
}

/**
 * A module-level constant of the hook: a string, a tuple of strings, or a sum of products of
 * integers and other such constants (`64 * 1024`, `MAX_TIMEOUT_S + 15`).
 */
function pythonConstant(text: string, name: string): string | number | string[] | undefined {
  const raw = new RegExp(`^${name} = (.+?)(?:\\s+#.*)?$`, 'm').exec(text)?.[1];
  if (raw === undefined) return undefined;
  if (/^"[^"]*"$/.test(raw)) return JSON.parse(raw) as string;
  if (/^\(\s*"/.test(raw)) return all(/"([^"]*)"/g, raw);
  if (!/^[\w\s*+]+$/.test(raw)) return raw;
  const factor = (f: string): number => {
    const value = /^\d+$/.test(f) ? Number(f) : pythonConstant(text, f);
    return typeof value === 'number' ? value : NaN;
  };
  return raw.split('+').reduce((sum, term) => sum + term.split('*').reduce((n, f) => n * factor(f.trim()), 1), 0);
}

/** What the hook and the agents' settings say, against the contract; empty when they agree. */
export function agentHookMismatches(files: AgentHookFiles): string[] {
  const out: string[] = [];
  const { hook } = files;
  if (BODY_LIMITS.approval !== BODY_LIMITS.agentEvent) out.push('BODY_LIMITS.approval and .agentEvent differ; the hook has one BODY_LIMIT');
  const expected: Record<string, string | number | readonly string[]> = {
    BRIDGE_DIR: CONTAINER.bridgeDir,
    BRIDGE_LEGACY_DIR: CONTAINER.bridgeLegacyDir,
    TOKEN_FILE: BRIDGE_FILES.token,
    PORT_FILE: BRIDGE_FILES.port,
    RUN_DIR: BRIDGE_FILES.runDir,
    SOCKET_FILE: BRIDGE_FILES.socket,
    BRIDGE_HOST: HOST_DOCKER_INTERNAL,
    CONTENT_TYPE: REQUEST_CONTENT_TYPE,
    ROUTE_APPROVAL: ROUTES.approval,
    ROUTE_AGENT_EVENT: ROUTES.agentEvent,
    SESSION_ENV: ENV.sessionId,
    AGENTS: HOOK_AGENTS,
    APPROVAL_EVENT: HOOK_EVENTS.approval,
    TIMELINE_EVENTS: HOOK_EVENTS.timeline,
    DECISIONS: APPROVAL_DECISIONS,
    TEXT_CHARS: AGENT_HOOK_LIMITS.textChars,
    INPUT_KEYS: AGENT_HOOK_LIMITS.inputKeys,
    MAX_TIMEOUT_S: AGENT_HOOK_LIMITS.maxTimeoutS,
    RECONNECT_S: AGENT_HOOK_LIMITS.reconnectS,
    TRANSCRIPT_BYTES: AGENT_HOOK_LIMITS.transcriptBytes,
    APPROVAL_MAX_TIME_S: SHIM_MAX_TIME_S.approval,
    AGENT_EVENT_MAX_TIME_S: SHIM_MAX_TIME_S.agentEvent,
    BODY_LIMIT: BODY_LIMITS.approval,
  };
  for (const [name, want] of Object.entries(expected)) {
    const got = pythonConstant(hook, name);
    if (JSON.stringify(got) !== JSON.stringify(want))
      out.push(`toolbox-agent-hook: ${name} is ${JSON.stringify(got)}, contract says ${JSON.stringify(want)}`);
    // Defined once and used: no second spelling of the same literal elsewhere in the program.
    const uses = hook.match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0;
    if (uses < 2) out.push(`toolbox-agent-hook: ${name} is never used`);
    if (typeof want === 'string' && hook.split(JSON.stringify(want)).length - 1 !== 1) {
      out.push(`toolbox-agent-hook: the literal ${JSON.stringify(want)} appears outside ${name}`);
    }
  }
  for (const [route, constant] of [
    ['approval', 'ROUTE_APPROVAL'],
    ['agentEvent', 'ROUTE_AGENT_EVENT'],
  ] as const) {
    if (!new RegExp(`\\bpost\\(bridge, ${constant},`).test(hook)) out.push(`toolbox-agent-hook: never posts to ${ROUTES[route]}`);
  }
  // Paths under the roots the contract owns, and environment names.
  const known = knownContainerPaths();
  known.add(AGENT_HOOK_INSTALL.program);
  for (const p of ownedPaths(hook)) if (!known.has(p)) out.push(`toolbox-agent-hook: path ${p} is not a contract path`);
  const envValues = new Set<string>(Object.values(ENV));
  for (const ref of all(/os\.environ\.get\(\s*([A-Za-z_"][\w"]*)/g, hook)) {
    const name = ref.startsWith('"') ? ref.slice(1, -1) : pythonConstant(hook, ref);
    if (typeof name !== 'string' || (!envValues.has(name) && !AGENT_HOOK_TEST_ENV.has(name))) {
      out.push(`toolbox-agent-hook: reads environment variable ${String(name)}, which is not in ENV`);
    }
  }

  // The agents' settings: which events run the hook, how, for how long.
  const settings = [
    {
      file: 'claude-managed-settings.json',
      text: files.claude,
      agent: 'claude',
      events: [HOOK_EVENTS.approval, ...HOOK_EVENTS.timeline],
      async: true,
    },
    { file: 'codex-hooks.json', text: files.codex, agent: 'codex', events: CODEX_EVENTS, async: false },
  ];
  for (const s of settings) {
    let parsed: { hooks?: Record<string, Array<{ matcher?: unknown; hooks?: Array<Record<string, unknown>> }>> };
    try {
      parsed = JSON.parse(s.text) as typeof parsed;
    } catch (err) {
      out.push(`${s.file}: does not parse: ${(err as Error).message}`);
      continue;
    }
    if (Object.keys(parsed).join() !== 'hooks') out.push(`${s.file}: holds ${Object.keys(parsed).join(', ')}, not only hooks`);
    const events = Object.keys(parsed.hooks ?? {});
    if ([...events].sort().join() !== [...s.events].sort().join())
      out.push(`${s.file}: subscribes ${events.join(', ')}, contract says ${s.events.join(', ')}`);
    for (const event of events) {
      if (event !== HOOK_EVENTS.approval && !(HOOK_EVENTS.timeline as readonly string[]).includes(event))
        out.push(`${s.file}: ${event} is not in HOOK_EVENTS`);
      const handlers = (parsed.hooks?.[event] ?? []).flatMap((g) => g.hooks ?? []);
      if (handlers.length !== 1) out.push(`${s.file}: ${event} has ${handlers.length} handlers, not one`);
      for (const h of handlers) {
        const want = `${AGENT_HOOK_INSTALL.program} ${s.agent}`;
        if (h.type !== 'command' || h.command !== want) out.push(`${s.file}: ${event} runs ${JSON.stringify(h.command)}, not ${want}`);
        const approval = event === HOOK_EVENTS.approval;
        const timeout = approval ? APPROVAL_HOOK_TIMEOUT_S : TIMELINE_HOOK_TIMEOUT_S;
        if (h.timeout !== timeout) out.push(`${s.file}: ${event} has timeout ${String(h.timeout)}, not ${timeout}`);
        // Claude Code runs the timeline in the background; Codex skips a handler marked async.
        const async = !(HOOK_EVENTS.sync as readonly string[]).includes(event) && s.async;
        if ((h.async === true) !== async) out.push(`${s.file}: ${event} is ${h.async === true ? '' : 'not '}async`);
      }
    }
  }
  // The agent gives up on the hook after its timeout: the hook's own cap must come first.
  if (!(SHIM_MAX_TIME_S.approval < APPROVAL_HOOK_TIMEOUT_S && SHIM_MAX_TIME_S.approval >= AGENT_HOOK_LIMITS.maxTimeoutS)) {
    out.push(
      `SHIM_MAX_TIME_S.approval ${SHIM_MAX_TIME_S.approval} is not within [maxTimeoutS, the agents' hook timeout ${APPROVAL_HOOK_TIMEOUT_S})`,
    );
  }

  // The Dockerfile puts them where the settings and the agents look.
  const installs: Array<[string, string]> = [
    ['images/runtime/toolbox-agent-hook', AGENT_HOOK_INSTALL.program],
    ['images/runtime/claude-managed-settings.json', AGENT_HOOK_INSTALL.claudeSettings],
    ['images/runtime/codex-hooks.json', AGENT_HOOK_INSTALL.codexHooks],
  ];
  for (const [from, to] of installs) {
    if (!files.dockerfile.split('\n').includes(`COPY ${from} ${to}`)) out.push(`Dockerfile: does not COPY ${from} to ${to}`);
  }
  const chmods = files.dockerfile.replace(/\\\n/g, ' ');
  if (!new RegExp(`chmod 0755 [^&]*${AGENT_HOOK_INSTALL.program}(?=\\s)`).test(chmods))
    out.push(`Dockerfile: ${AGENT_HOOK_INSTALL.program} is not made 0755`);
  for (const f of [AGENT_HOOK_INSTALL.claudeSettings, AGENT_HOOK_INSTALL.codexHooks, AGENT_HOOK_INSTALL.codexConfig]) {
    if (!new RegExp(`chmod 0644 [^&]*${f}(?=\\s)`).test(chmods)) out.push(`Dockerfile: ${f} is not made 0644`);
  }
  return out;
}

describe('agent hook contract (images/runtime/toolbox-agent-hook and the agents’ settings)', () => {
  const runtime = join(repoRoot(), 'images', 'runtime');
  const files: AgentHookFiles = {
    hook: readFileSync(join(runtime, 'toolbox-agent-hook'), 'utf8'),
    claude: readFileSync(join(runtime, 'claude-managed-settings.json'), 'utf8'),
    codex: readFileSync(join(runtime, 'codex-hooks.json'), 'utf8'),
    dockerfile: readFileSync(join(runtime, 'Dockerfile'), 'utf8'),
  };

  it('holds routes, bridge files, env name, limits, agents, events and install paths to contract.ts', () => {
    assert.deepEqual(agentHookMismatches(files), []);
  });

  it('sees the literals it checks (the extraction is not vacuous)', () => {
    assert.equal(pythonConstant(files.hook, 'TEXT_CHARS'), 4096);
    assert.equal(pythonConstant(files.hook, 'INPUT_KEYS'), 16);
    assert.equal(pythonConstant(files.hook, 'RECONNECT_S'), 30);
    assert.equal(pythonConstant(files.hook, 'MAX_TIMEOUT_S'), 3600);
    assert.deepEqual(pythonConstant(files.hook, 'AGENTS'), ['claude', 'codex']);
    assert.equal(pythonConstant(files.hook, 'ROUTE_APPROVAL'), '/approval');
    assert.ok(ownedPaths(files.hook).includes(CONTAINER.bridgeDir));
  });

  const mutations: Array<{ what: string; file: keyof AgentHookFiles; from: string | RegExp; to: string; expect: RegExp }> = [
    {
      what: 'a renamed route',
      file: 'hook',
      from: '"/agent-event"',
      to: '"/agent-events"',
      expect: /ROUTE_AGENT_EVENT is "\/agent-events"/,
    },
    {
      what: 'an inline route',
      file: 'hook',
      from: 'post(bridge, ROUTE_APPROVAL,',
      to: 'post(bridge, "/approval",',
      expect: /appears outside ROUTE_APPROVAL|never posts to \/approval/,
    },
    { what: 'a renamed socket', file: 'hook', from: '"bridge.sock"', to: '"hook.sock"', expect: /SOCKET_FILE is "hook.sock"/ },
    {
      what: 'a renamed env var',
      file: 'hook',
      from: '"TOOLBOX_SESSION_ID"',
      to: '"TOOLBOX_SESSION"',
      expect: /SESSION_ENV is "TOOLBOX_SESSION"/,
    },
    {
      what: 'an unknown env var',
      file: 'hook',
      from: 'os.environ.get(SESSION_ENV)',
      to: 'os.environ.get("TOOLBOX_SESSION")',
      expect: /reads environment variable TOOLBOX_SESSION,/,
    },
    { what: 'a longer text limit', file: 'hook', from: 'TEXT_CHARS = 4096', to: 'TEXT_CHARS = 8192', expect: /TEXT_CHARS is 8192/ },
    { what: 'more input keys', file: 'hook', from: 'INPUT_KEYS = 16', to: 'INPUT_KEYS = 32', expect: /INPUT_KEYS is 32/ },
    { what: 'a longer reconnect window', file: 'hook', from: 'RECONNECT_S = 30', to: 'RECONNECT_S = 60', expect: /RECONNECT_S is 60/ },
    { what: 'a shorter wait', file: 'hook', from: 'MAX_TIMEOUT_S = 3600', to: 'MAX_TIMEOUT_S = 300', expect: /MAX_TIMEOUT_S is 300/ },
    {
      what: 'a third agent',
      file: 'hook',
      from: 'AGENTS = ("claude", "codex")',
      to: 'AGENTS = ("claude", "codex", "gemini")',
      expect: /AGENTS is/,
    },
    {
      what: 'a moved state dir',
      file: 'hook',
      from: '/home/toolbox/.toolbox/bridge"',
      to: '/home/toolbox/.toolbox/daemon"',
      expect: /BRIDGE_DIR is/,
    },
    {
      what: 'an event Claude Code does not get',
      file: 'claude',
      from: '"Notification"',
      to: '"SubagentStop"',
      expect: /claude-managed-settings.json: subscribes/,
    },
    { what: 'a Codex event it lacks', file: 'codex', from: '"SessionStart"', to: '"SessionEnd"', expect: /codex-hooks.json: subscribes/ },
    {
      what: 'another agent name in the command',
      file: 'codex',
      from: 'toolbox-agent-hook codex',
      to: 'toolbox-agent-hook claude',
      expect: /codex-hooks.json: PermissionRequest runs/,
    },
    {
      what: 'a short approval timeout',
      file: 'claude',
      from: '"timeout": 3660',
      to: '"timeout": 600',
      expect: /PermissionRequest has timeout 600/,
    },
    {
      what: 'a blocking timeline hook',
      file: 'claude',
      from: '"async": true',
      to: '"async": false',
      expect: /claude-managed-settings.json: \w+ is not async/,
    },
    {
      what: 'an async hook Codex would skip',
      file: 'codex',
      from: '"timeout": 10\n',
      to: '"timeout": 10, "async": true\n',
      expect: /codex-hooks.json: \w+ is async/,
    },
    {
      what: 'settings beyond hooks',
      file: 'claude',
      from: '{\n  "hooks"',
      to: '{\n  "permissions": {},\n  "hooks"',
      expect: /holds permissions, hooks/,
    },
    {
      what: 'a moved program',
      file: 'dockerfile',
      from: 'COPY images/runtime/toolbox-agent-hook /usr/local/lib/toolbox/toolbox-agent-hook',
      to: 'COPY images/runtime/toolbox-agent-hook /usr/local/bin/toolbox-agent-hook',
      expect: /does not COPY images\/runtime\/toolbox-agent-hook/,
    },
    {
      what: 'a moved settings file',
      file: 'dockerfile',
      from: '/etc/claude-code/managed-settings.json\n',
      to: '/etc/claude/managed-settings.json\n',
      expect: /does not COPY images\/runtime\/claude-managed-settings.json/,
    },
  ];
  for (const m of mutations) {
    it(`catches ${m.what} (${m.file})`, () => {
      const mutated = files[m.file].replace(m.from, m.to);
      assert.notEqual(mutated, files[m.file], `the mutation of ${m.file} did not apply`);
      const found = agentHookMismatches({ ...files, [m.file]: mutated });
      assert.ok(
        found.some((f) => m.expect.test(f)),
        `expected a mismatch matching ${m.expect}, got:\n${found.join('\n')}`,
      );
    });
  }
});
