// The testable steps of a release (.github/workflows/release.yml, scripts/release-dry-run.sh),
// under the channel rule of docs/decisions/0057-release-channels.md: a release tag is exactly
// v<package.json's version>, MAJOR.MINOR.PATCH with no suffix, and an odd MINOR is a pre-release.
//
//   node scripts/release.mjs check-tag TAG [--package FILE]
//       TAG names package.json's version; prints `version=X.Y.Z` and `prerelease=true|false`
//       (lines for $GITHUB_OUTPUT) on stdout, what it decided on stderr.
//   node scripts/release.mjs changelog-section VERSION [--changelog FILE] [--release]
//       prints the body of CHANGELOG.md's `## [VERSION] — <date>` section (up to the next `## `
//       heading, without its own heading): the GitHub release's notes. Fails when there is none
//       or it is empty; with --release also when its heading still says "unreleased".
//   node scripts/release.mjs vsix-list VSIX
//       lists the files in a VSIX (size and path), as `vsce ls` lists what would go in.
//   node scripts/release.mjs check-vsix VSIX TAG
//       the VSIX's extension/package.json has TAG's version, and it was packaged as a pre-release
//       (`npm run package -- --pre-release`) exactly when TAG's version is one.
//
// Exit status 1 with a message on stderr when a check fails, 2 on a usage error.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const DECISION = 'docs/decisions/0057-release-channels.md';

class Refusal extends Error {}
const refuse = (message) => {
  throw new Refusal(message);
};

/** `X.Y.Z` with no leading zeros and no suffix: the only versions the Marketplace publishes. */
const RELEASE_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** The channel of a release version: an odd minor is a pre-release (the VS Code convention). */
function isPrerelease(version) {
  const m = RELEASE_VERSION.exec(version);
  if (!m) refuse(`${version} is not a release version (MAJOR.MINOR.PATCH, no suffix; ${DECISION})`);
  return Number(m[2]) % 2 === 1;
}

/** The version a release tag names, or a refusal that says what a release tag looks like. */
function tagVersion(tag) {
  const m = /^v(.*)$/.exec(tag);
  if (!m || !RELEASE_VERSION.test(m[1])) {
    refuse(
      `the tag "${tag}" is not a release tag: a release tag is v<MAJOR>.<MINOR>.<PATCH> with no suffix (v0.2.0). ` +
        'A pre-release is an odd minor (v0.3.0), not a suffix like -pre.1: the Visual Studio Marketplace refuses versions ' +
        `with one (${DECISION}).`,
    );
  }
  return m[1];
}

function checkTag(tag, packageFile = join(root, 'package.json')) {
  const version = tagVersion(tag);
  const manifest = JSON.parse(readFileSync(packageFile, 'utf8'));
  if (typeof manifest.version !== 'string' || !RELEASE_VERSION.test(manifest.version)) {
    refuse(`package.json's version "${manifest.version}" is not a release version (MAJOR.MINOR.PATCH, no suffix; ${DECISION}).`);
  }
  if (manifest.version !== version) {
    refuse(
      `the tag ${tag} does not match package.json's version ${manifest.version}. Tag the commit whose package.json ` +
        `says ${version} (set "version" and add its CHANGELOG.md section in a commit first), or release ${manifest.version} ` +
        `as v${manifest.version}.`,
    );
  }
  return { version, prerelease: isPrerelease(version) };
}

/** The body of CHANGELOG.md's section for `version` (without its heading), and its heading. */
function changelogSection(text, version) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const heading = new RegExp(`^## \\[${escaped}\\](?=[\\s(]|$)`);
  let start = -1;
  let end = lines.length;
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(```|~~~)/.test(lines[i])) fenced = !fenced;
    if (fenced) continue;
    if (start < 0) {
      if (heading.test(lines[i])) start = i;
    } else if (/^## /.test(lines[i])) {
      end = i;
      break;
    }
  }
  if (start < 0) return undefined;
  const body = lines.slice(start + 1, end);
  // Keep a Changelog's link references (`[0.1.0]: https://…`) close the file, after the last section.
  while (body.length > 0 && (body.at(-1).trim() === '' || /^\[[^\]]+\]:\s*\S+/.test(body.at(-1)))) body.pop();
  while (body.length > 0 && body[0].trim() === '') body.shift();
  return { heading: lines[start], body: body.join('\n') };
}

function changelogNotes(version, { changelog = join(root, 'CHANGELOG.md'), release = false } = {}) {
  if (!existsSync(changelog)) refuse(`${changelog} does not exist: the release notes are its section for ${version}.`);
  const section = changelogSection(readFileSync(changelog, 'utf8'), version);
  if (!section) refuse(`CHANGELOG.md has no section for ${version}: add one headed "## [${version}] — <date>".`);
  if (section.body.trim() === '') refuse(`CHANGELOG.md's section for ${version} is empty: say what changed.`);
  if (release && /unreleased/i.test(section.heading)) {
    refuse(
      `CHANGELOG.md's section for ${version} is still headed "${section.heading}": put the release date there ` +
        `("## [${version}] — YYYY-MM-DD") in the commit the tag names.`,
    );
  }
  return section;
}

/**
 * The entries of a zip file (a VSIX is one), read from its central directory. Enough for what
 * vsce writes: stored or deflated entries, no ZIP64, no encryption.
 */
function zipEntries(buf) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) refuse('not a zip file (no end of central directory record)');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || p === 0xffffffff) refuse('a ZIP64 archive: not a VSIX vsce writes');
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50) refuse('a broken zip file (bad central directory)');
    const nameLength = buf.readUInt16LE(p + 28);
    entries.push({
      name: buf.toString('utf8', p + 46, p + 46 + nameLength),
      method: buf.readUInt16LE(p + 10),
      compressedSize: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      offset: buf.readUInt32LE(p + 42),
    });
    p += 46 + nameLength + buf.readUInt16LE(p + 30) + buf.readUInt16LE(p + 32);
  }
  return entries;
}

function zipRead(buf, entry) {
  const at = entry.offset;
  if (buf.readUInt32LE(at) !== 0x04034b50) refuse(`a broken zip file (bad local header for ${entry.name})`);
  const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
  const data = buf.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data;
  if (entry.method === 8) return inflateRawSync(data);
  return refuse(`${entry.name} is compressed with method ${entry.method}, not stored or deflated`);
}

function checkVsix(file, tag) {
  const version = tagVersion(tag);
  const prerelease = isPrerelease(version);
  const buf = readFileSync(file);
  const entries = zipEntries(buf);
  const read = (name) => {
    const entry = entries.find((e) => e.name === name);
    if (!entry) refuse(`${file} has no ${name}: not a VSIX`);
    return zipRead(buf, entry).toString('utf8');
  };
  const manifest = JSON.parse(read('extension/package.json'));
  if (manifest.version !== version) refuse(`${file} is version ${manifest.version}, not the tag's ${version} (${tag}).`);
  const packagedPrerelease = /Id="Microsoft\.VisualStudio\.Code\.PreRelease"\s+Value="true"/.test(read('extension.vsixmanifest'));
  if (packagedPrerelease !== prerelease) {
    refuse(
      prerelease
        ? `${file} was not packaged as a pre-release, but ${version} is one (odd minor, ${DECISION}): package it with \`npm run package -- --pre-release\`.`
        : `${file} was packaged as a pre-release, but ${version} is a release (even minor, ${DECISION}): package it without --pre-release.`,
    );
  }
  const bytes = entries.reduce((n, e) => n + e.size, 0);
  return { id: `${manifest.publisher}.${manifest.name}`, version, prerelease, files: entries.length, bytes };
}

function main(argv) {
  const [command, ...rest] = argv;
  const options = {};
  const positional = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--release') options.release = true;
    else if (rest[i] === '--package' || rest[i] === '--changelog') options[rest[i].slice(2)] = rest[++i];
    else positional.push(rest[i]);
  }
  const usage = () => {
    console.error('usage: node scripts/release.mjs check-tag TAG [--package FILE]');
    console.error('       node scripts/release.mjs changelog-section VERSION [--changelog FILE] [--release]');
    console.error('       node scripts/release.mjs vsix-list VSIX');
    console.error('       node scripts/release.mjs check-vsix VSIX TAG');
    process.exit(2);
  };
  const want = (n) => {
    if (positional.length !== n || Object.values(options).includes(undefined)) usage();
  };
  switch (command) {
    case 'check-tag': {
      want(1);
      const { version, prerelease } = checkTag(positional[0], options.package);
      console.error(`release: ${positional[0]} is ${version}, a ${prerelease ? 'pre-release (odd minor)' : 'release (even minor)'}`);
      console.log(`version=${version}`);
      console.log(`prerelease=${prerelease}`);
      break;
    }
    case 'changelog-section': {
      want(1);
      const { body } = changelogNotes(positional[0], { changelog: options.changelog, release: options.release });
      process.stdout.write(`${body}\n`);
      break;
    }
    case 'vsix-list': {
      want(1);
      const entries = zipEntries(readFileSync(positional[0]));
      for (const e of entries) console.log(`${String(e.size).padStart(10)}  ${e.name}`);
      console.log(`${String(entries.reduce((n, e) => n + e.size, 0)).padStart(10)}  (${entries.length} files)`);
      break;
    }
    case 'check-vsix': {
      want(2);
      const v = checkVsix(positional[0], positional[1]);
      const channel = v.prerelease ? 'pre-release' : 'release';
      console.log(`release: ${positional[0]} is ${v.id} ${v.version}, packaged as a ${channel}, ${v.files} files, ${v.bytes} bytes`);
      break;
    }
    default:
      usage();
  }
}

try {
  main(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof Refusal)) throw err;
  console.error(`release: ${err.message}`);
  process.exitCode = 1;
}
