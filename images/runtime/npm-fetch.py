#!/usr/bin/env python3
"""Fetches one package from the npm registry without npm, for the runtime image's build.

Usage: npm-fetch.py NAME SPEC DEST [MEMBER ...]

SPEC is an exact version (22.23.5), a major or major.minor (22, 22.23: the highest release with
that prefix, prereleases excluded) or a dist-tag (latest). The tarball URL and its sha512
integrity come from the registry's metadata; the download is checked against that hash before
a byte is extracted. The package's files go under DEST without the tarball's "package/" prefix;
MEMBERs (paths inside the package, e.g. bin/node) restrict extraction to those files.

The registry is $NPM_REGISTRY (default https://registry.npmjs.org). Proxies come from the usual
*_proxy variables and certificates from the system bundle (Dockerfile: EXTRA_CA_CERTS).
Bounded: metadata 64 MiB, tarball 512 MiB, 120 s without progress per request.
"""
import base64
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import urllib.parse
import urllib.request

REGISTRY = os.environ.get("NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
METADATA_MAX = 64 << 20
TARBALL_MAX = 512 << 20
TIMEOUT_S = 120


def die(message):
    print(f"npm-fetch: {message}", file=sys.stderr)
    sys.exit(1)


def get(url, limit, accept=None):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            body = response.read(limit + 1)
    except Exception as err:  # noqa: BLE001 - any failure ends the build with the URL named
        die(f"could not fetch {url}: {err}")
    if len(body) > limit:
        die(f"{url} is larger than {limit >> 20} MiB; refusing it")
    return body


def release_key(version):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(x) for x in m.groups()) if m else None


def resolve(meta, spec):
    versions = meta.get("versions") or {}
    if re.fullmatch(r"\d+(\.\d+)?", spec):
        prefix = tuple(int(x) for x in spec.split("."))
        candidates = [v for v in versions if (k := release_key(v)) and k[: len(prefix)] == prefix]
        if candidates:
            return max(candidates, key=release_key)
    die(f"{meta.get('name')} has no version matching {spec!r}")


def main():
    if len(sys.argv) < 4:
        die("usage: npm-fetch.py NAME SPEC DEST [MEMBER ...]")
    name, spec, dest, members = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
    quoted = urllib.parse.quote(name, safe="@")
    if re.fullmatch(r"\d+(\.\d+)?", spec):
        # A range: the abbreviated metadata of every version, and the highest match.
        meta = json.loads(get(f"{REGISTRY}/{quoted}", METADATA_MAX, "application/vnd.npm.install-v1+json"))
        version = resolve(meta, spec)
        dist = (meta["versions"].get(version) or {}).get("dist") or {}
    else:
        # An exact version or a dist-tag: the registry answers with that one version's document.
        doc = json.loads(get(f"{REGISTRY}/{quoted}/{urllib.parse.quote(spec)}", METADATA_MAX))
        version, dist = doc.get("version", spec), doc.get("dist") or {}
    integrity, url = dist.get("integrity", ""), dist.get("tarball", "")
    if not integrity.startswith("sha512-") or not url.startswith(("https://", "http://")):
        die(f"{name}@{version} has no sha512 integrity or tarball URL in the registry's metadata")
    data = get(url, TARBALL_MAX)
    actual = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if actual != integrity:
        die(f"{url} does not match its integrity hash (expected {integrity}, got {actual})")
    extracted = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        chosen = []
        # Every path is checked before a byte is written: a bad tarball extracts nothing.
        for member in tar.getmembers():
            path = member.name.split("/", 1)[1] if "/" in member.name else ""
            if path.startswith("/") or ".." in path.split("/"):
                die(f"{name}@{version} holds an unsafe path {member.name!r}")
            if not path or (members and path not in members):
                continue
            if not (member.isfile() or member.isdir()):
                continue  # npm tarballs hold files and directories only
            chosen.append((member, path))
        for member, path in chosen:
            member.name = path
            member.uid = member.gid = 0
            member.uname = member.gname = "root"
            tar.extract(member, dest, set_attrs=True)
            extracted += 1
    missing = [m for m in members if not os.path.exists(os.path.join(dest, m))]
    if missing or extracted == 0:
        die(f"{name}@{version} lacks {', '.join(missing) or 'any file'}")
    print(f"{name}@{version}: {len(data) >> 10} KiB, {integrity[:19]}… verified, {extracted} files to {dest}")


main()
