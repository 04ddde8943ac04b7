#!/usr/bin/env bash
# Ensure the local base image `debian:bookworm-slim` exists.
#
# There is no Docker Hub on this machine, so the base image is built locally with
# debootstrap from the Debian mirror apt already uses, then imported into Docker.
# The result is a *local stand-in* for the official image: it carries the label
# dev.toolbox.local-stand-in=true and a marker file /etc/toolbox-local-stand-in.
#
# Idempotent: does nothing when the image already exists.
# Usage: bash scripts/ensure-base-image.sh   (as root; needs a running Docker engine)
set -euo pipefail

IMAGE="${BASE_IMAGE:-debian:bookworm-slim}"
SUITE="${BASE_SUITE:-bookworm}"
INCLUDE="python3,curl,git,ca-certificates,tini,zsh,sudo"

log() { printf '[ensure-base-image] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if ! docker version >/dev/null 2>&1; then
  die "the Docker engine does not answer; run 'bash scripts/ensure-docker.sh' first."
fi

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "image $IMAGE already present ($(docker image inspect -f '{{.Id}}' "$IMAGE" | cut -c1-19)); nothing to do."
  exit 0
fi

[ "$(id -u)" = 0 ] || die "debootstrap needs root; re-run as root (sudo bash $0)."

# --- find the mirror apt already uses -------------------------------------------------
# Reads deb822 *.sources files and one-line *.list files (the only ones apt reads),
# picks the first entry that serves the plain "$SUITE" suite (not -security/-updates).
find_mirror() {
  local f want="$1"  # a suite name, or "*" for any suite other than -security

  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    # deb [opts] URI suite components...
    awk -v s="$want" '
      /^[[:space:]]*#/ { next }
      $1 == "deb" {
        i = 2
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i+1) == s || (s == "*" && $(i+1) !~ /security/)) { print $i; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    # deb822 stanzas separated by blank lines
    awk -v s="$want" '
      function flush() {
        if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && enabled != "no") {
          n = split(suites, a, /[[:space:]]+/)
          for (k = 1; k <= n; k++) if (a[k] == s || (s == "*" && a[k] != "" && a[k] !~ /security/)) { split(uris, u, /[[:space:]]+/); print u[1]; exit }
        }
        types = ""; uris = ""; suites = ""; enabled = ""
      }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      tolower($1) == "types:"   { $1 = ""; types = $0 }
      tolower($1) == "uris:"    { $1 = ""; sub(/^[[:space:]]+/, ""); uris = $0 }
      tolower($1) == "suites:"  { $1 = ""; suites = $0 }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      END { flush() }' "$f"
  done
}

MIRROR="${BASE_MIRROR:-$(find_mirror "$SUITE" | head -n1 || true)}"
# No entry for this suite (e.g. a newer release): the same mirror serves every Debian suite.
[ -n "$MIRROR" ] || MIRROR="$(find_mirror '*' | grep -i debian | head -n1 || true)"
if [ -z "$MIRROR" ]; then
  # Not a Debian host (an Ubuntu CI runner, say): debootstrap's own default mirror serves bookworm.
  log "no Debian mirror in the apt sources; using debootstrap's default (set BASE_MIRROR to override)."
else
  log "using mirror $MIRROR"
fi

# --- debootstrap ----------------------------------------------------------------------
# debian-archive-keyring verifies the bookworm release on hosts that are not Debian (Ubuntu).
if ! command -v debootstrap >/dev/null 2>&1 || ! [ -e /usr/share/keyrings/debian-archive-keyring.gpg ]; then
  log "installing debootstrap and the Debian archive keyring"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || log "apt-get update failed; trying the install anyway"
  apt-get install -y -qq debootstrap debian-archive-keyring >/dev/null \
    || die "could not install debootstrap with apt-get; install it by hand and re-run."
fi

TMP="$(mktemp -d /tmp/toolbox-base.XXXXXX)"
cleanup() { rm -rf --one-file-system "$TMP"; }
trap cleanup EXIT

LOGF="/tmp/toolbox-debootstrap.log"
log "debootstrap $SUITE into $TMP (log: $LOGF); this takes a few minutes"
if ! debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$TMP/root" ${MIRROR:+"$MIRROR"} >"$LOGF" 2>&1; then
  tail -n 20 "$LOGF" >&2 || true
  die "debootstrap failed (see $LOGF); check that ${MIRROR:-the default Debian mirror} is reachable."
fi

R="$TMP/root"
# Make it look like the slim image: small, clean apt state, sources from the same mirror.
[ -z "$MIRROR" ] || printf 'deb %s %s main\n' "$MIRROR" "$SUITE" > "$R/etc/apt/sources.list"
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/archives/*.deb "$R"/var/cache/apt/*.bin "$R"/tmp/* || true
cat > "$R/etc/toolbox-local-stand-in" <<INFO
This image is a LOCAL STAND-IN for $IMAGE, built by scripts/ensure-base-image.sh
with debootstrap --variant=minbase ($SUITE, mirror ${MIRROR:-default}) on $(date -u +%Y-%m-%dT%H:%M:%SZ).
It is not the official Docker Hub image.
INFO

log "importing into Docker as $IMAGE"
tar --numeric-owner -C "$R" -c . | docker import \
  -c 'LABEL dev.toolbox.local-stand-in=true' \
  -c "LABEL dev.toolbox.local-stand-in.source=debootstrap-minbase-$SUITE" \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'CMD ["bash"]' \
  -m "local stand-in for $IMAGE (debootstrap minbase $SUITE from ${MIRROR:-the default mirror})" \
  - "$IMAGE" >/dev/null

log "done: $IMAGE $(docker image inspect -f '{{.Id}}' "$IMAGE" | cut -c1-19) (local stand-in, label dev.toolbox.local-stand-in=true)"
