/**
 * Which container a session holder serves, judged before anything is attached to it (issue 26
 * item 3, docs/decisions/0043-holder-proves-its-container.md). The holder reads its own container
 * id from where the engine mounted /etc/hostname from (images/runtime/toolbox-session
 * `own_container_id`) and says it on `whoami`; the extension compares it with the id the engine
 * gave. Pure: the holder's answer and the engine's id come in as arguments.
 */

/** A container id as the engines give it in full (Docker and Podman alike): 64 hex digits. */
const CONTAINER_ID_PATTERN = /^[0-9a-f]{64}$/;

/** What a holder's `whoami` answer proves about the container it serves. */
export type HolderProof =
  /** The holder serves this container. */
  | { kind: 'proven' }
  /** The holder cannot say (one from an image older than the check, or an engine it cannot read). */
  | { kind: 'unproven' }
  /** The holder serves another container: the one with this id. */
  | { kind: 'other'; serves: string };

/**
 * Judges the holder's answer (`reported`: the `container` field of its whoami answer, or
 * undefined when it has no whoami) against the container id the engine gave (`expected`, the
 * full id, or a prefix of 12 or more hex digits).
 */
export function judgeHolder(expected: string, reported: unknown): HolderProof {
  if (typeof reported !== 'string' || !CONTAINER_ID_PATTERN.test(reported)) return { kind: 'unproven' };
  const want = expected.toLowerCase();
  if (want === reported || (/^[0-9a-f]{12,63}$/.test(want) && reported.startsWith(want))) return { kind: 'proven' };
  return { kind: 'other', serves: reported };
}

/** The 12 hex digits the docker CLI shows for a container id. */
export function shortContainerId(id: string): string {
  return id.slice(0, 12);
}

/**
 * What the user reads when a holder serves another container: what happened and what to do.
 * `name` is the container's name, `where` the socket (or "an exec") through which it answered.
 */
export function holderMismatchText(name: string, expected: string, serves: string, where: string): string {
  return (
    `The session holder that answers for ${name} (${where}) serves another container (${shortContainerId(serves)}), ` +
    `not ${shortContainerId(expected)} on this engine: a container of the same name on another engine or Docker context ` +
    `shares its run directory. Nothing was attached to it. Stop the other container (on the engine that runs it), or stop ` +
    `${name} here and open the shell again: a container made now gets a run directory of its own.`
  );
}

/** Why a holder that cannot prove its container holds no new shell (they run as plain execs). */
export function unprovenHolderReason(name: string): string {
  return (
    `the session holder in ${name} cannot say which container it serves (the container was made from an older ` +
    `runtime image); stop ${name} and open a shell again to keep shells across reloads`
  );
}
