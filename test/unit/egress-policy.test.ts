/**
 * The egress policy (issue 30, extension/src/plan/egress.ts): rules as people write them, hosts
 * as containers name them, address classes, the verdict, the resolved check against rebinding,
 * the built-in and git-remote rules, and the refusal's sentence. Hostile input throughout: the
 * strings come from a container or a file it can write.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILTIN_EGRESS_RULES,
  checkResolved,
  classifyAddress,
  decideDestination,
  deniedMessage,
  formatEgressRule,
  matchRule,
  normalizeDestinationHost,
  parseEgressRule,
  remoteRules,
  type EgressRule,
} from '../../extension/src/plan/egress';

const rule = (text: string): EgressRule => {
  const r = parseEgressRule(text, 'user');
  if ('error' in r) throw new Error(`${text}: ${r.error}`);
  return r;
};
const refused = (text: string): string => {
  const r = parseEgressRule(text, 'user');
  assert.ok('error' in r, `${JSON.stringify(text.slice(0, 80))} should be refused, got ${JSON.stringify(r)}`);
  return r.error;
};

// The proxy's entry (plan) and the backend's are one shape: each assigns to the other.

describe('parseEgressRule', () => {
  it('accepts names, ports, wildcards and IP literals, normalised', () => {
    assert.deepEqual(rule('API.Example.COM.'), { host: 'api.example.com', source: 'user' });
    assert.deepEqual(rule('example.com:8443'), { host: 'example.com', port: 8443, source: 'user' });
    assert.deepEqual(rule('*.Example.com:443'), { host: '*.example.com', port: 443, source: 'user' });
    assert.deepEqual(rule('10.0.0.5'), { host: '10.0.0.5', source: 'user' });
    assert.deepEqual(rule('10.0.0.5:22'), { host: '10.0.0.5', port: 22, source: 'user' });
    assert.deepEqual(rule('[FD00:0:0::1]:443'), { host: 'fd00::1', port: 443, source: 'user' });
    assert.deepEqual(rule('[fd00::1]'), { host: 'fd00::1', source: 'user' });
    assert.deepEqual(rule('fd00::1'), { host: 'fd00::1', source: 'user' });
    assert.deepEqual(rule('2001:db8:0:0:1:0:0:1'), { host: '2001:db8::1:0:0:1', source: 'user' });
    assert.deepEqual(rule('[::ffff:10.1.2.3]:80'), { host: '10.1.2.3', port: 80, source: 'user' });
    assert.deepEqual(rule('localhost'), { host: 'localhost', source: 'user' });
    assert.equal(rule('xn--bcher-kva.example').host, 'xn--bcher-kva.example');
    assert.equal((parseEgressRule('a.b', 'folder') as EgressRule).source, 'folder');
  });

  it('refuses what is not a host, each with a sentence saying what form is expected', () => {
    for (const bad of [
      '',
      ' example.com',
      'exa mple.com',
      'example.com\n',
      'bücher.example',
      'a..b',
      '.example.com',
      '-a.example.com',
      'a-.example.com',
      `${'a'.repeat(64)}.com`,
      'example.com:0',
      'example.com:65536',
      'example.com:',
      'example.com:08',
      'example.com:http',
      '*',
      '*.',
      'a.*.com',
      '**.example.com',
      '*example.com',
      'example.*',
      'fd00::1:443:zz',
      '[fd00::1',
      '[fd00::1]x',
      '[example.com]',
      '[10.0.0.1]:80',
      'fe80::1%eth0',
      'user@example.com',
      'http://example.com',
      'example.com/path',
    ]) {
      const error = refused(bad);
      assert.match(error, /^[A-Z].*\.$/, `a sentence for ${JSON.stringify(bad)}: ${error}`);
    }
  });

  it('refuses IPv4 in any form but the canonical dotted quad', () => {
    for (const bad of ['127.1', '2130706433', '0x7f.0.0.1', '0177.0.0.1', '010.0.0.1', '1.2.3.256', '1.2.3.4.5', '1.2.3', 'example.0x10']) {
      assert.match(refused(bad), /canonical form/, bad);
    }
    assert.match(refused('*.10.0.0.1'), /wildcard/i);
  });

  it('bounds names by DNS lengths and refuses huge input without work', () => {
    const label = 'a'.repeat(63);
    const max = [label, label, label, 'a'.repeat(61)].join('.');
    assert.equal(max.length, 253);
    assert.equal(rule(max).host, max);
    assert.match(refused(`${max}a`), /253/);
    assert.match(refused('a'.repeat(1_000_000)), /longer/);
    assert.match(refused('\u0000'.repeat(100)), /control/);
  });

  it('formats a rule as it parses back', () => {
    for (const text of [
      'example.com',
      'example.com:443',
      '*.example.com',
      '*.example.com:22',
      '10.0.0.5:80',
      '[fd00::1]:443',
      '[fd00::1]',
    ]) {
      assert.equal(formatEgressRule(rule(text)), text);
    }
  });
});

describe('normalizeDestinationHost', () => {
  it('normalises names and literals', () => {
    assert.deepEqual(normalizeDestinationHost('Example.COM.'), { host: 'example.com' });
    assert.deepEqual(normalizeDestinationHost('10.0.0.5'), { host: '10.0.0.5', literal: 'ipv4' });
    assert.deepEqual(normalizeDestinationHost('[FD00:0000::0001]'), { host: 'fd00::1', literal: 'ipv6' });
    assert.deepEqual(normalizeDestinationHost('0:0:0:0:0:0:0:1'), { host: '::1', literal: 'ipv6' });
    assert.deepEqual(normalizeDestinationHost('1:0:0:2:0:0:0:3'), { host: '1:0:0:2::3', literal: 'ipv6' });
    assert.deepEqual(normalizeDestinationHost('::ffff:169.254.169.254'), { host: '169.254.169.254', literal: 'ipv4' });
    assert.deepEqual(normalizeDestinationHost('::ffff:a9fe:a9fe'), { host: '169.254.169.254', literal: 'ipv4' });
  });

  it('refuses wildcards, ports, non-canonical IPv4 and junk', () => {
    for (const bad of [
      '*.example.com',
      'example.com:443',
      '127.1',
      '0x7f000001',
      '[10.0.0.1]',
      '',
      'a b',
      'ex\u00e4mple.com',
      'x'.repeat(300),
    ]) {
      assert.ok('error' in normalizeDestinationHost(bad), bad);
    }
  });
});

describe('classifyAddress', () => {
  const cases: Array<[string, ReturnType<typeof classifyAddress>]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::1', 'private'],
    ['fc00::1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['fec0::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['not an address', 'reserved'],
    ['127.1', 'reserved'],
  ];
  for (const [ip, cls] of cases) {
    it(`${ip} is ${cls}`, () => assert.equal(classifyAddress(ip), cls));
  }
});

describe('matchRule', () => {
  const rules = [rule('api.example.com:443'), rule('*.cdn.example'), rule('10.0.0.5'), rule('[fd00::1]:22')];
  it('matches by exact name, wildcard below the suffix, and canonical literal', () => {
    assert.equal(matchRule(rules, { host: 'api.example.com', port: 443 }), rules[0]);
    assert.equal(matchRule(rules, { host: 'API.example.com.', port: 443 }), rules[0]);
    assert.equal(matchRule(rules, { host: 'api.example.com', port: 80 }), undefined);
    assert.equal(matchRule(rules, { host: 'x.api.example.com', port: 443 }), undefined);
    assert.equal(matchRule(rules, { host: 'a.cdn.example', port: 1 }), rules[1]);
    assert.equal(matchRule(rules, { host: 'a.b.cdn.example', port: 65535 }), rules[1]);
    assert.equal(matchRule(rules, { host: 'cdn.example', port: 443 }), undefined, 'the suffix itself is not below it');
    assert.equal(matchRule(rules, { host: 'evilcdn.example', port: 443 }), undefined);
    assert.equal(matchRule(rules, { host: '10.0.0.5', port: 8080 }), rules[2]);
    assert.equal(matchRule(rules, { host: '::ffff:10.0.0.5', port: 8080 }), rules[2]);
    assert.equal(matchRule(rules, { host: 'fd00:0::1', port: 22 }), rules[3]);
    assert.equal(matchRule(rules, { host: 'fd00::1', port: 23 }), undefined);
    assert.equal(matchRule(rules, { host: '10.0.0.6', port: 80 }), undefined);
    assert.equal(matchRule(rules, { host: '127.1', port: 80 }), undefined);
  });
});

describe('decideDestination', () => {
  const policy = (mode: 'ask' | 'allowlist', ...texts: string[]) => ({ mode, rules: texts.map(rule) });
  it('allows by a rule, else denies in allowlist and asks in ask', () => {
    assert.deepEqual(decideDestination(policy('allowlist', 'example.com'), { host: 'example.com', port: 443 }), {
      kind: 'allow',
      rule: rule('example.com'),
    });
    assert.deepEqual(decideDestination(policy('allowlist'), { host: 'example.com', port: 443 }), {
      kind: 'deny',
      reason: "not in the folder's allowlist",
    });
    assert.deepEqual(decideDestination(policy('ask'), { host: 'example.com', port: 443 }), { kind: 'ask' });
  });

  it('denies metadata and other unreachable literals even when a rule names them', () => {
    for (const host of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '240.1.1.1']) {
      const v = decideDestination(policy('ask', host, '*.example.com'), { host, port: 80 });
      assert.equal(v.kind, 'deny', host);
    }
    const v = decideDestination(policy('ask', '169.254.169.254'), { host: '169.254.169.254', port: 80 });
    assert.ok(v.kind === 'deny' && /link-local/.test(v.reason));
  });

  it('lets a rule or an answer allow loopback and private literals', () => {
    assert.equal(decideDestination(policy('allowlist', '127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 }).kind, 'allow');
    assert.equal(decideDestination(policy('ask'), { host: '127.0.0.1', port: 8080 }).kind, 'ask');
    assert.equal(decideDestination(policy('ask'), { host: '10.0.0.1', port: 22 }).kind, 'ask');
  });

  it('denies invalid hosts and ports without repeating them', () => {
    const v = decideDestination(policy('ask', '*.example.com'), { host: '127.1', port: 80 });
    assert.ok(v.kind === 'deny' && !v.reason.includes('127.1'));
    assert.equal(decideDestination(policy('ask'), { host: 'a\u0000b', port: 80 }).kind, 'deny');
    assert.equal(decideDestination(policy('ask', 'example.com'), { host: 'example.com', port: 0 }).kind, 'deny');
    assert.equal(decideDestination(policy('ask', 'example.com'), { host: 'example.com', port: 70000 }).kind, 'deny');
  });
});

describe('checkResolved', () => {
  const dest = { host: 'example.com', port: 443 };
  it('pins the first address of a name that resolves only to allowed places', () => {
    assert.deepEqual(checkResolved(dest, true, ['93.184.216.34', '2606:2800::1'], []), { address: '93.184.216.34' });
    assert.deepEqual(checkResolved(dest, true, ['10.0.0.9'], []), { address: '10.0.0.9' });
  });
  it('refuses a name leading to loopback, link-local, the host itself or any other unreachable class', () => {
    const cases: Array<[string[], RegExp]> = [
      [['93.184.216.34', '127.0.0.1'], /127\.0\.0\.1, a loopback address.*rebinding/],
      [['::1'], /loopback/],
      [['::ffff:127.0.0.1'], /loopback/],
      [['169.254.169.254'], /link-local/],
      [['0.0.0.0'], /unspecified/],
      [['239.1.1.1'], /multicast/],
      [['255.255.255.255'], /broadcast/],
      [['240.0.0.1'], /reserved/],
      [['192.168.1.20'], /an address of this host/],
      [['FD00:0::5'], /an address of this host/],
      [['junk'], /not an address/],
    ];
    for (const [addresses, reason] of cases) {
      const r = checkResolved(dest, true, addresses, ['192.168.1.20', 'fd00::5']);
      assert.ok('reason' in r, addresses.join());
      assert.match(r.reason, reason);
    }
    assert.deepEqual(checkResolved(dest, true, [], []), { reason: 'example.com does not resolve' });
  });
  it('takes a literal as its own address', () => {
    assert.deepEqual(checkResolved({ host: '127.0.0.1', port: 80 }, false, [], ['127.0.0.1']), { address: '127.0.0.1' });
    assert.deepEqual(checkResolved({ host: 'fd00::1', port: 80 }, false, [], []), { address: 'fd00::1' });
  });
});

describe('BUILTIN_EGRESS_RULES', () => {
  it('are valid builtin rules for the agents, registries and GitHub', () => {
    const texts = BUILTIN_EGRESS_RULES.map(formatEgressRule);
    for (const r of BUILTIN_EGRESS_RULES) {
      assert.equal(r.source, 'builtin');
      assert.deepEqual(parseEgressRule(formatEgressRule(r), 'builtin'), r);
    }
    for (const must of ['api.anthropic.com:443', 'claude.ai:443', 'api.openai.com:443', 'auth.openai.com:443', 'chatgpt.com:443']) {
      assert.ok(texts.includes(must), must);
    }
    for (const must of [
      'registry.npmjs.org:443',
      'pypi.org:443',
      'files.pythonhosted.org:443',
      'deb.debian.org:80',
      'security.debian.org:443',
    ]) {
      assert.ok(texts.includes(must), must);
    }
    for (const must of ['github.com:443', 'api.github.com:443', 'codeload.github.com:443', 'objects.githubusercontent.com:443']) {
      assert.ok(texts.includes(must), must);
    }
    assert.equal(new Set(texts).size, texts.length);
    assert.ok(Object.isFrozen(BUILTIN_EGRESS_RULES));
  });
});

describe('remoteRules', () => {
  it('gives each remote URL form its host and port', () => {
    assert.deepEqual(
      remoteRules([
        'https://github.com/owner/repo.git',
        'https://user:token@GitLab.example.com:8443/group/repo',
        'http://git.example.org/repo',
        'ssh://git@ssh.example.com:2222/repo.git',
        'ssh://example.net/repo',
        'git@bitbucket.org:team/repo.git',
        'host.example:repo.git',
        'https://[fd00::7]:8443/x',
        'git://git.kernel.org/pub/scm/git/git.git',
        'https://github.com/other/repo',
      ]).map(formatEgressRule),
      [
        'github.com:443',
        'gitlab.example.com:8443',
        'git.example.org:80',
        'ssh.example.com:2222',
        'example.net:22',
        'bitbucket.org:22',
        'host.example:22',
        '[fd00::7]:8443',
        'git.kernel.org:9418',
      ],
    );
    assert.ok(remoteRules(['git@github.com:a/b']).every((r) => r.source === 'remote'));
  });

  it('gives nothing for paths, transports and malformed URLs, and never throws', () => {
    const hostile = [
      '/home/me/repo',
      './repo',
      '../x:y',
      'C:\\repos\\x',
      'c:/repos/x',
      'file:///srv/repo.git',
      'ext::ssh -p 22 host %S',
      'fd::ssh',
      'https://',
      'https://:443/x',
      'https://example.com:0/x',
      'https://example.com:99999/x',
      'https://exa mple.com/x',
      'https://*.example.com/x',
      'https://127.1/x',
      'https://[fd00::1/x',
      'ftp://example.com/x',
      ':path',
      '@:x',
      '',
      'x'.repeat(100_000),
      `https://${'a'.repeat(300)}.com/x`,
      '\u0000\u0001',
    ];
    assert.deepEqual(remoteRules(hostile), []);
    assert.deepEqual(remoteRules([null, 42, {}] as unknown as string[]), []);
  });
});

describe('deniedMessage', () => {
  it('names the policy, the normalised destination, the reason and how to allow it', () => {
    assert.equal(
      deniedMessage('allowlist', { host: 'example.com', port: 443 }, "not in the folder's allowlist"),
      "Toolbox egress policy (allowlist) refused example.com:443: not in the folder's allowlist. Allow it from VS Code (Allow for This Folder when asked, or the setting toolbox.egressForFolder).",
    );
    assert.match(deniedMessage('ask', { host: 'fd00::1', port: 22 }, 'you said no.'), /refused \[fd00::1\]:22: you said no\. Allow/);
  });
  it('never repeats raw client bytes and offers no way to allow what nothing allows', () => {
    const m = deniedMessage('ask', { host: 'evil\r\nX-Injected: 1', port: 80 }, 'bad');
    assert.ok(!m.includes('\n') && !m.includes('Injected'), m);
    assert.match(deniedMessage('ask', { host: '169.254.169.254', port: 80 }, 'link-local'), /does not let a container reach it\.$/);
    assert.match(
      deniedMessage(undefined, { host: 'a.b', port: 1 }, 'x', { fixable: false }),
      /^Toolbox egress policy refused a\.b:1: x\. Toolbox does not/,
    );
  });
});
