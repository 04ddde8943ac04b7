# shellcheck shell=sh
# shellcheck disable=SC2016,SC2034 # backticks in messages are literal; callers use the SHIM_EXIT_* set
# Sourced by every toolbox shim (installed at /usr/local/lib/toolbox/bridge-lib.sh).
# It finds the host bridge's state (token, port, unix socket) and POSTs one JSON request to it.
# Every literal here is held to extension/src/contract/constants.ts by test/unit/contract.test.ts.

# Exit codes (sysexits.h) for the cases where no host command ran; SHIM_EXIT in extension/src/contract/constants.ts.
SHIM_EXIT_OK=0
SHIM_EXIT_REFUSED=77
SHIM_EXIT_UNAVAILABLE=69
SHIM_EXIT_USAGE=64
# Upstream's codes, kept by paplay (its caller only tells zero from non-zero; docs/decisions/0022-*).
SHIM_EXIT_FAILED=1
SHIM_EXIT_MISUSE=2

BRIDGE_DIR=/home/toolbox/.toolbox/bridge
BRIDGE_LEGACY_DIR=/home/toolbox/.toolbox/browser
BRIDGE_HOST=host.docker.internal
BRIDGE_HINT='open this workspace in VS Code with the Toolbox extension, or run `toolbox bridge` on the host'

BRIDGE_SHIM=${0##*/}
BRIDGE_ERROR=
BRIDGE_STATE_DIR=
BRIDGE_TOKEN=
BRIDGE_PORT=
BRIDGE_STATUS=
BRIDGE_BODY=
BRIDGE_CURL_RC=
BRIDGE_NL='
'

# bridge_say MESSAGE: one line on stderr, prefixed with the shim's name.
bridge_say() {
  printf '%s: %s\n' "$BRIDGE_SHIM" "$1" >&2
}

# bridge_fail CODE MESSAGE: bridge_say, then exit with CODE.
bridge_fail() {
  bridge_say "$2"
  exit "$1"
}

# bridge_ready: succeeds when a request can be attempted. Otherwise BRIDGE_ERROR says why:
# not_installed (no readable token/port), no_curl, or no_python3 (the shims build JSON with it).
bridge_ready() {
  BRIDGE_ERROR=
  # The legacy dir is only consulted when the current token is unreadable (upstream migration).
  if [ -r "$BRIDGE_DIR/token" ]; then
    BRIDGE_STATE_DIR=$BRIDGE_DIR
  elif [ -r "$BRIDGE_LEGACY_DIR/token" ]; then
    BRIDGE_STATE_DIR=$BRIDGE_LEGACY_DIR
  else
    BRIDGE_ERROR=not_installed
    return 1
  fi
  if [ ! -r "$BRIDGE_STATE_DIR/port" ]; then
    BRIDGE_ERROR=not_installed
    return 1
  fi
  if ! command -v curl >/dev/null 2>&1; then
    BRIDGE_ERROR=no_curl
    return 1
  fi
  if ! command -v python3 >/dev/null 2>&1; then
    BRIDGE_ERROR=no_python3
    return 1
  fi
  BRIDGE_TOKEN=$(tr -d ' \t\r\n' <"$BRIDGE_STATE_DIR/token")
  BRIDGE_PORT=$(tr -d ' \t\r\n' <"$BRIDGE_STATE_DIR/port")
  case $BRIDGE_PORT in
    '' | *[!0-9]*) BRIDGE_ERROR=not_installed; return 1 ;;
  esac
  if [ -z "$BRIDGE_TOKEN" ]; then
    BRIDGE_ERROR=not_installed
    return 1
  fi
  return 0
}

# bridge_reason: why the bridge could not be used, as a clause for a message.
bridge_reason() {
  case $BRIDGE_ERROR in
    not_installed) printf 'no bridge token and port under %s' "$BRIDGE_DIR" ;;
    no_curl) printf 'curl is not installed in this container' ;;
    no_python3) printf 'python3 is not installed in this container' ;;
    *)
      if [ "$BRIDGE_CURL_RC" = 28 ]; then
        printf 'no answer within the time limit; the command may still be running on the host'
      else
        printf 'nothing answered on %s or %s:%s' "$BRIDGE_STATE_DIR/run/bridge.sock" "$BRIDGE_HOST" "$BRIDGE_PORT"
      fi
      ;;
  esac
}

# bridge_unavailable: the one-line "bridge not reachable" message, then exit unavailable.
bridge_unavailable() {
  bridge_fail "$SHIM_EXIT_UNAVAILABLE" "the host bridge is not reachable ($(bridge_reason)) — $BRIDGE_HINT"
}

# bridge_error_text: the server's plain-text error body folded to one short line.
bridge_error_text() {
  printf '%s' "$BRIDGE_BODY" | tr -s '\r\n\t' '   ' | cut -c1-300
}

# _bridge_curl MAXTIME URL JSON [CURL ARGS...]: prints the body, a newline and the HTTP status.
# -q ignores ~/.curlrc and --noproxy keeps a container's HTTP(S)_PROXY off the bridge; the body
# goes through stdin so it never shows up in argv.
_bridge_curl() {
  _bc_max=$1 _bc_url=$2 _bc_json=$3
  shift 3
  printf '%s' "$_bc_json" | curl -q -s --noproxy '*' --max-time "$_bc_max" \
    -H "Authorization: Bearer $BRIDGE_TOKEN" -H 'Content-Type: application/json' -H 'Expect:' \
    --data-binary @- -o - -w '\n%{http_code}' "$@" "$_bc_url"
}

# bridge_post ROUTE JSON MAXTIME: POSTs JSON to ROUTE. Sets BRIDGE_STATUS (000 when no HTTP
# status came back) and BRIDGE_BODY. The unix socket is tried first when it exists; TCP via
# host.docker.internal only when the socket gave no status AND curl could not connect at all
# (exit 7), so a request the host may already be running is never sent twice.
bridge_post() {
  _bp_sock=$BRIDGE_STATE_DIR/run/bridge.sock
  _bp_rc=7
  if [ -S "$_bp_sock" ]; then
    _bp_out=$(_bridge_curl "$3" "http://localhost$1" "$2" --unix-socket "$_bp_sock")
    _bp_rc=$?
    BRIDGE_STATUS=${_bp_out##*"$BRIDGE_NL"}
    BRIDGE_BODY=${_bp_out%"$BRIDGE_NL"*}
  else
    BRIDGE_STATUS=000
  fi
  if [ "$BRIDGE_STATUS" = 000 ] && [ "$_bp_rc" = 7 ]; then
    _bp_out=$(_bridge_curl "$3" "http://$BRIDGE_HOST:$BRIDGE_PORT$1" "$2")
    _bp_rc=$?
    BRIDGE_STATUS=${_bp_out##*"$BRIDGE_NL"}
    BRIDGE_BODY=${_bp_out%"$BRIDGE_NL"*}
  fi
  case $BRIDGE_STATUS in
    [0-9][0-9][0-9]) ;;
    *) BRIDGE_STATUS=000 ;;
  esac
  BRIDGE_CURL_RC=$_bp_rc
  return 0
}
