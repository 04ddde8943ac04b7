/**
 * /sound as upstream's daemon serves it (filippolmt/toolbox@0db16470adfb30cd3b83a248d6ccd03ca7878d68
 * internal/bridge/daemon.go handleSound, sound.go, sound_linux.go): 512 KiB body limit, its own
 * bucket of 10/s with a burst of 5, 400 for a payload that is not non-empty base64, 502 when no
 * player can play it, 200 once the player started. The player here is a fake `paplay` on the
 * hub's PATH that records its argv and the bytes it was given.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BODY_LIMITS } from '../../extension/src/contract/shims';
import { RATE_LIMITS } from '../../extension/src/bridge/hub';
import { findSoundPlayer, looksLikeMp3, stopSound } from '../../extension/src/bridge/sound';
import { call, startRig, unixTarget, type Rig } from './support';

/** An MPEG-1 layer III frame header followed by filler: enough for the MP3 check. */
const MP3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(400, 7)]);
const b64 = (b: Buffer) => b.toString('base64');

const FAKE_PLAYER = `#!/bin/sh
# Records what it was asked to play, then plays for FAKE_PLAYER_SLEEP seconds.
for a; do last=$a; done
n=$(date +%s%N)
printf '%s\\n' "$@" > "$FAKE_PLAYER_LOG/$n.argv"
cp "$last" "$FAKE_PLAYER_LOG/$n.bytes"
exec sleep "\${FAKE_PLAYER_SLEEP:-0}"
`;

interface Played {
  argv: string[];
  bytes: Buffer;
}

async function soundRig(
  opts: { player?: string | false; sleep?: string; rates?: boolean } = {},
): Promise<{ rig: Rig; played: () => Played[] }> {
  let log = '';
  const rig = await startRig({
    prepare(dirs) {
      log = join(dirs.root, 'played');
      mkdirSync(log);
      mkdirSync(join(dirs.root, 'bin'));
      if (opts.player !== false) {
        const file = join(dirs.root, 'bin', opts.player ?? 'paplay');
        writeFileSync(file, FAKE_PLAYER);
        chmodSync(file, 0o755);
      }
    },
    hub: (dirs) => ({
      // Only the rig's bin dir and the system dirs the fake needs (sh, date, cp, sleep): no real player.
      env: {
        PATH: `${join(dirs.root, 'bin')}${delimiter}/usr/bin${delimiter}/bin`,
        FAKE_PLAYER_LOG: log,
        FAKE_PLAYER_SLEEP: opts.sleep ?? '0',
      },
      ...(opts.rates ? { rateLimits: RATE_LIMITS, now: () => 1_000 } : {}),
    }),
  });
  const played = (): Played[] =>
    readdirSync(log)
      .filter((f) => f.endsWith('.argv') && existsSync(join(log, f.replace(/\.argv$/, '.bytes'))))
      .sort()
      .map((f) => ({
        argv: readFileSync(join(log, f), 'utf8').split('\n').filter(Boolean),
        bytes: readFileSync(join(log, f.replace(/\.argv$/, '.bytes'))),
      }));
  return { rig, played };
}

/** Waits (bounded) until `check` holds: the player runs detached from the answer. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`never happened: ${what}`);
}

describe('/sound with a fake host player', () => {
  let rig: Rig;
  let played: () => Played[];
  before(async () => {
    ({ rig, played } = await soundRig());
  });
  after(async () => {
    stopSound();
    await rig.cleanup();
  });
  const post = (body: unknown) => call(unixTarget(rig), '/sound', { token: rig.token, body });

  it("plays the bytes with the first player of upstream's chain, from a file of its own naming, removed afterwards", async () => {
    const reply = await post({ name: '../../../../etc/cron.d/evil.mp3', data: b64(MP3) });
    assert.equal(reply.status, 200, reply.text);
    const ended = () => played().length === 1 && !existsSync(dirname(played()[0]!.argv[0]!));
    await eventually(ended, 'the player ran and its temporary directory was removed when it ended');
    const [run] = played();
    assert.equal(run!.argv.length, 1, 'paplay gets the file and no flags');
    const file = run!.argv[0]!;
    assert.equal(basename(file), 'sound.mp3', 'the name the container sent is never part of the path');
    assert.equal(dirname(dirname(file)), tmpdir());
    assert.match(basename(dirname(file)), /^toolbox-sound-/);
    assert.deepEqual(run!.bytes, MP3);
    assert.equal(existsSync('/etc/cron.d/evil.mp3'), false);
  });

  it('refuses what is not non-empty standard base64 of an MP3, and runs nothing (400, as upstream)', async () => {
    const before = played().length;
    const cases: Array<[unknown, RegExp]> = [
      [{ data: '' }, /non-empty base64/],
      [{ data: 'not base64!' }, /non-empty base64/],
      [{ data: `${b64(MP3)}\n` }, /non-empty base64/],
      [{ data: b64(MP3).replace(/=+$/, '') }, /non-empty base64/],
      [
        {
          data: b64(Buffer.from([0xfb, 0xff, 0x3e, 0x3f]))
            .replace(/\+/g, '-')
            .replace(/\//g, '_'),
        },
        /non-empty base64/,
      ],
      [{ data: b64(Buffer.from('#!/bin/sh\nrm -rf ~\n')) }, /not an MP3 file/],
      [{ data: b64(MP3), name: 'x'.repeat(256) }, /field "name"/],
      [{ data: b64(MP3), path: '/etc/passwd' }, /unknown field "path"/],
      [{ name: 'a.mp3' }, /field "data"/],
      [{ data: 42 }, /field "data"/],
      [['data'], /must be a JSON object/],
    ];
    for (const [body, reason] of cases) {
      const reply = await post(body);
      assert.equal(reply.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(reply.text, reason);
    }
    assert.equal(played().length, before);
  });

  it('refuses a body over 512 KiB before reading it all (413), and takes one at the limit', async () => {
    const overhead = JSON.stringify({ data: '' }).length;
    const exact = Buffer.alloc(Math.floor((BODY_LIMITS.sound - overhead) / 4) * 3, 1);
    MP3.copy(exact);
    const fits = JSON.stringify({ data: b64(exact) });
    assert.ok(fits.length <= BODY_LIMITS.sound && fits.length > BODY_LIMITS.sound - 8, String(fits.length));
    assert.equal((await post(JSON.parse(fits))).status, 200);
    const big = Buffer.alloc(BODY_LIMITS.sound, 1);
    MP3.copy(big);
    assert.equal((await post({ data: b64(big) })).status, 413);
  });
});

describe('/sound: one at a time, its own bucket, and no player', () => {
  it('answers 503 while a sound still plays, and plays again once it ended', async () => {
    const { rig, played } = await soundRig({ sleep: '30' });
    try {
      const post = () => call(unixTarget(rig), '/sound', { token: rig.token, body: { data: b64(MP3) } });
      assert.equal((await post()).status, 200);
      const busy = await post();
      assert.equal(busy.status, 503);
      assert.match(busy.text, /another sound is playing/);
      await eventually(() => played().length === 1, 'the first player ran');
      stopSound();
      let again = await post();
      for (let i = 0; again.status === 503 && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 25));
        again = await post();
      }
      assert.equal(again.status, 200);
    } finally {
      stopSound();
      await rig.cleanup();
    }
  });

  it('a flood is cut by the sound bucket (burst 5, then 429), and the shared bucket is untouched', async () => {
    const { rig } = await soundRig({ rates: true });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        statuses.push((await call(unixTarget(rig), '/sound', { token: rig.token, body: { data: b64(Buffer.from('not mp3')) } })).status);
      }
      assert.deepEqual(statuses, [400, 400, 400, 400, 400, ...Array(7).fill(429)]);
      const open = await call(unixTarget(rig), '/open', { token: rig.token, body: { url: 'https://example.com/' } });
      assert.equal(open.status, 204, 'a run of chimes does not spend what /open needs');
    } finally {
      await rig.cleanup();
    }
  });

  it('answers 502 saying which players to install when the host has none, as upstream', async () => {
    const { rig, played } = await soundRig({ player: false });
    try {
      const reply = await call(unixTarget(rig), '/sound', { token: rig.token, body: { data: b64(MP3) } });
      assert.equal(reply.status, 502);
      assert.match(reply.text, /No audio player on this host.*paplay.*pw-play.*ffplay.*mpg123.*mpv/);
      assert.deepEqual(played(), []);
    } finally {
      await rig.cleanup();
    }
  });

  it("picks players in upstream's order with its flags, and only from absolute PATH entries", async () => {
    const { rig } = await soundRig({ player: 'mpv' });
    try {
      const bin = join(rig.root, 'bin');
      // ffplay and mpv are held to the MP3 demuxer and local files: an ID3 tag followed by an HLS
      // playlist must not make the host player fetch what the container names (issue 25 attack 5).
      const mpv = findSoundPlayer('linux', bin);
      assert.equal(mpv?.file, join(bin, 'mpv'));
      assert.deepEqual(mpv?.args.slice(0, 2), ['--no-video', '--really-quiet']);
      assert.ok(mpv?.args.includes('--demuxer-lavf-format=mp3') && mpv.args.includes('--ytdl=no'), mpv?.args.join(' '));
      writeFileSync(join(bin, 'ffplay'), FAKE_PLAYER);
      chmodSync(join(bin, 'ffplay'), 0o755);
      const ffplay = findSoundPlayer('linux', bin)?.args.join(' ') ?? '';
      assert.match(ffplay, /^-nodisp -autoexit -loglevel quiet /);
      assert.match(ffplay, /-protocol_whitelist file -f mp3$/, 'the format is forced, and only local files are read');
      assert.equal(findSoundPlayer('linux', `bin${delimiter}.`), undefined);
      assert.equal(findSoundPlayer('win32', bin), undefined);
    } finally {
      await rig.cleanup();
    }
  });

  it('knows an MP3 by its ID3 tag or frame header', () => {
    assert.ok(looksLikeMp3(Buffer.from('ID3\x04\x00')));
    assert.ok(looksLikeMp3(MP3));
    assert.ok(!looksLikeMp3(Buffer.from('RIFF....WAVE')));
    assert.ok(!looksLikeMp3(Buffer.from([0xff])));
  });
});
