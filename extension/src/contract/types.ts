/**
 * Types every layer shares: the host facts the planner reads, the object names of one namespace,
 * and what the bridge and proximo hand to the planner. Pure declarations; no layer imported.
 */

/** Facts about the host the planner needs, gathered by an adapter before planning. */
export interface HostFacts {
  uid: number;
  gid: number;
  /** Absolute host home directory. */
  home: string;
  platform: NodeJS.Platform;
  /** The host's CPU architecture, as Node names it (TOOLBOX_HOST_ARCH); unknown: not emitted. */
  arch?: string;
  /** Whether a host path exists (the adapter answers from the filesystem; tests from a set). */
  pathExists(path: string): boolean;
  /** Group id owning the host's Docker socket; with "0", the container's GroupAdd when the socket is mounted. */
  dockerSocketGid?: number;
  /**
   * What a host path is, never following a symbolic link (the protected paths, plan/protect.ts).
   * Needed when a request asks for protected paths; the adapter answers from lstat.
   */
  lstat?(path: string): HostPathFact;
  /** The names in a host directory; [] when it cannot be read. */
  readDir?(path: string): string[];
  /** The start of a small host file (a worktree's `.git` pointer); undefined when it cannot be read. */
  readSmall?(path: string): string | undefined;
}

/** A host path as lstat sees it: `missing` when nothing is there. */
export interface HostPathFact {
  kind: 'file' | 'dir' | 'symlink' | 'other' | 'missing';
  /** A file's hard links: another name for the same file would not be read-only. */
  links?: number;
  /**
   * Which file or directory it is: its inode number and birth time. A host program that replaces
   * the entry (git renames a new config over the old) changes it, even when the file system
   * gives the new file the old one's freed inode number, as ext4 does for git's two writes in a row.
   * A placeholder of ours (kind `missing`, backend/hostFacts.ts) has one too.
   */
  identity?: string;
}

/** Which toolbox container a name is (contract/objects.ts has the grammar). */
export type OwnedContainerKind = 'workspace' | 'named' | 'anchor' | 'init';

/** Object names for one namespace: production uses `toolbox`, tests their own prefix. */
export interface ObjectNames {
  prefix: string;
  anchor: string;
  socketVolume: string;
  socketVolumeInit: string;
  /** The kind of toolbox container a name (with or without the leading `/`) is, by the exact name grammar; undefined: not ours. */
  kindOf(name: string): OwnedContainerKind | undefined;
  /**
   * True when a container is ours: its name is in the grammar and no label marks it as another
   * tool's (Compose, Swarm, …). Pass the labels whenever the caller has them.
   */
  isOurs(name: string, labels?: Readonly<Record<string, string>> | null): boolean;
}

/** proximo as seen from the host, decided before planning. */
export interface ProximoFacts {
  /** Host path of proximo's CA certificate, when it exists. */
  caPath: string;
  /** Host names routed by proximo, pinned to host-gateway in the container. */
  hosts: string[];
}

/** The bridge as it will be mounted into the container. */
export interface BridgeMount {
  /** Host dir holding `token` and `port`, mounted ro at the contract's bridge dir. */
  stateDir: string;
  /** Host dir holding the unix socket, mounted rw at the contract's run dir. */
  runDir: string;
}

/** A `--publish` style port: host port on 127.0.0.1 unless hostIp says otherwise. */
/** The `toolbox.seccomp` setting (SECCOMP_PROFILES). */
export type SeccompProfile = 'unconfined' | 'default';

export interface PortSpec {
  /** Undefined: loopback (plan/publish.ts DEFAULT_PUBLISH_HOST_IP). */
  hostIp?: string;
  /** As Docker's HostPort: `8080`, a range Docker picks from (`8000-8010`), or '' (Docker picks any free port). */
  hostPort: string;
  containerPort: number;
  protocol?: 'tcp' | 'udp' | 'sctp';
}
