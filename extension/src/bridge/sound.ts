/**
 * /sound: the container's `paplay` shim hands over an MP3 (base64) and the host plays it, as
 * upstream's daemon does (internal/bridge/sound.go, daemon.go handleSound). The body is hostile:
 * a strict schema, upstream's size limit and bucket, strict base64, an MP3 header, a temporary file
 * of our own naming (the sent name is only logged), one player at a time, run with argv (never a
 * shell) and stopped after SOUND.playMs. The answer comes once the player started, not when it ends.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { BODY_LIMITS, FIELDS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { runHostProcess } from '../host/process';
import { failed, parseBody, refused, type Route, type RouteResult } from './route';

/**
 * /sound (upstream internal/bridge/sound.go): the players tried on a Linux host, in upstream's
 * order with its flags (the file path is appended); macOS plays with afplay. A player is stopped
 * after `playMs`, and one plays at a time: a sound asked for meanwhile is answered 503.
 */
export const SOUND = {
  linuxPlayers: [
    { name: 'paplay', args: [] },
    { name: 'pw-play', args: [] },
    // ffplay and mpv probe past the MP3 header this route checks: an HLS playlist or a concat
    // list after an ID3 tag would make them fetch URLs or open host files. Both are held to the
    // MP3 demuxer and to local files (upstream passes no such flags).
    { name: 'ffplay', args: ['-nodisp', '-autoexit', '-loglevel', 'quiet', '-protocol_whitelist', 'file', '-f', 'mp3'] },
    { name: 'mpg123', args: ['-q'] },
    {
      name: 'mpv',
      args: [
        '--no-video',
        '--really-quiet',
        '--no-config',
        '--ytdl=no',
        '--demuxer=lavf',
        '--demuxer-lavf-format=mp3',
        '--load-unsafe-playlists=no',
      ],
    },
  ],
  macPlayer: '/usr/bin/afplay',
  playMs: 30_000,
  /** Longest container-side file name kept for the log. */
  nameMax: 255,
} as const;

const soundRequest = z.strictObject({
  [FIELDS.name]: z.string().max(SOUND.nameMax).optional(),
  [FIELDS.data]: z.string(),
});

/** Go's base64.StdEncoding: the standard alphabet, padded, nothing else (no whitespace, no URL alphabet). */
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** An MP3 starts with an ID3 tag or an MPEG audio frame header (11 sync bits). */
export function looksLikeMp3(data: Buffer): boolean {
  if (data.length >= 3 && data.subarray(0, 3).toString('latin1') === 'ID3') return true;
  return data.length >= 2 && data[0] === 0xff && (data[1]! & 0xe0) === 0xe0;
}

export interface SoundPlayer {
  file: string;
  args: readonly string[];
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The host's player: on Linux the first of upstream's chain found on PATH (absolute PATH entries
 * only), on macOS afplay, elsewhere none.
 */
export function findSoundPlayer(platform: NodeJS.Platform, pathEnv: string | undefined): SoundPlayer | undefined {
  if (platform === 'darwin') return isExecutableFile(SOUND.macPlayer) ? { file: SOUND.macPlayer, args: [] } : undefined;
  if (platform !== 'linux') return undefined;
  const dirs = (pathEnv ?? '').split(delimiter).filter((d) => d !== '' && isAbsolute(d));
  for (const player of SOUND.linuxPlayers) {
    for (const dir of dirs) {
      const file = join(dir, player.name);
      if (isExecutableFile(file)) return { file, args: player.args };
    }
  }
  return undefined;
}

const NO_PLAYER =
  'No audio player on this host, so the sound was not played. On Linux install one of paplay (PulseAudio), ' +
  'pw-play (PipeWire), ffplay, mpg123 or mpv, then try again; on macOS afplay is built in.';

/** Stops the player now running (host-wide: one sound at a time), if any; `busy` covers the start too. */
let playing: AbortController | undefined;
let busy = false;

/** Stops the player of a sound that is still playing (the bridge hub calls it when it shuts down, bridge/hub.ts). */
export function stopSound(): void {
  playing?.abort();
}

/** Starts `player` on `path`; resolves once it runs, rejects when it could not start. Removes `dir` when it ends. */
function startPlayer(player: SoundPlayer, path: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const stop = new AbortController();
  playing = stop;
  const done = (): void => {
    if (playing === stop) {
      playing = undefined;
      busy = false;
    }
    void rm(dir, { recursive: true, force: true });
  };
  return new Promise((resolve, reject) => {
    runHostProcess({
      file: player.file,
      args: [...player.args, path],
      // The user's player needs their session (PulseAudio, PipeWire, D-Bus).
      env: { from: env, pass: 'all' },
      timeoutMs: SOUND.playMs,
      maxOutputBytes: 0,
      output: 'none',
      signal: stop.signal,
      onSpawn: resolve,
    }).then(done, (err: unknown) => {
      done();
      reject(err as Error);
    });
  });
}

export const soundRoute: Route = {
  path: ROUTES.sound,
  bodyLimit: BODY_LIMITS.sound,
  bucket: 'sound',
  runLimitMs: RUN_LIMITS_MS.sound,
  logDetail: true,
  async handle(body, _workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(soundRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const text = parsed.value[FIELDS.data];
    if (text === '' || !STD_BASE64.test(text)) return refused('The sound must be non-empty base64 (the MP3 file, encoded).');
    const data = Buffer.from(text, 'base64');
    if (!looksLikeMp3(data)) return refused('The sound is not an MP3 file (no ID3 tag or MPEG frame header); only MP3 is played.');
    const player = findSoundPlayer(process.platform, deps.env.PATH);
    if (player === undefined) return failed(NO_PLAYER);
    if (busy) return { status: 503, message: 'Busy: another sound is playing on the host; try again when it ends.' };
    busy = true;

    // Our own name in a private directory: nothing the container sent becomes part of a path.
    let dir: string | undefined;
    try {
      dir = await mkdtemp(join(tmpdir(), 'toolbox-sound-'));
      const path = join(dir, 'sound.mp3');
      await writeFile(path, data, { mode: 0o600, flag: 'wx' });
      await startPlayer(player, path, dir, deps.env);
    } catch (err) {
      busy = false;
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      return failed(`Could not play the sound with ${player.file}: ${(err as Error).message}`);
    }
    return { status: 200, json: {} };
  },
};
