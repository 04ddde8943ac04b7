/**
 * Turning the engine's image streams into progress a person can read: a pull's per-layer JSON
 * events become "layers and bytes", a build's "Step n/m" lines become the current step. Pure;
 * the raw lines still go to the log (engine/image.ts, engine/imageBuild.ts).
 */

/** One readable progress report: the phase's sentence and, where it is known, a percentage. */
export interface ImageProgress {
  message: string;
  /** 0–100, when the phase knows how far it is. */
  percent?: number;
}

export interface PullEventLike {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
}

interface LayerState {
  total?: number;
  current: number;
  done: boolean;
}

function megabytes(bytes: number): string {
  const mb = bytes / 1e6;
  return mb >= 10 ? `${Math.round(mb)} MB` : `${mb.toFixed(1)} MB`;
}

/** Folds pull events (Engine API /images/create) into layers done and bytes downloaded. */
export class PullProgress {
  private readonly layers = new Map<string, LayerState>();

  constructor(private readonly label: string) {}

  /** Feeds one event; returns the report it changes, or undefined when nothing visible changed. */
  update(event: PullEventLike): ImageProgress | undefined {
    const id = event.id;
    const status = event.status ?? '';
    // Events without a layer id (or the tag's own id in "Pulling from …") carry no byte counts.
    if (!id || /^Pulling from /.test(status) || /^(Digest|Status):/.test(status)) return undefined;
    let layer = this.layers.get(id);
    if (!layer) {
      layer = { current: 0, done: false };
      this.layers.set(id, layer);
    }
    const detail = event.progressDetail ?? {};
    if (status === 'Downloading') {
      if (typeof detail.total === 'number' && detail.total > 0) layer.total = detail.total;
      if (typeof detail.current === 'number') layer.current = detail.current;
    } else if (/^(Download complete|Verifying Checksum)$/.test(status)) {
      if (layer.total !== undefined) layer.current = layer.total;
    } else if (status === 'Already exists') {
      layer.done = true;
    } else if (status === 'Pull complete') {
      layer.done = true;
      if (layer.total !== undefined) layer.current = layer.total;
    } else if (status !== 'Extracting' && status !== 'Pulling fs layer' && status !== 'Waiting') {
      return undefined;
    }
    return this.report();
  }

  /**
   * The report once the engine says the pull succeeded: every layer is here. Podman's stream
   * never marks its last layers complete, so the bar would stop short of the end.
   */
  complete(): ImageProgress {
    for (const layer of this.layers.values()) {
      layer.done = true;
      if (layer.total !== undefined) layer.current = layer.total;
    }
    return { ...this.report(), percent: 100 };
  }

  report(): ImageProgress {
    const all = [...this.layers.values()];
    const done = all.filter((l) => l.done).length;
    const sized = all.filter((l) => l.total !== undefined);
    const total = sized.reduce((n, l) => n + (l.total ?? 0), 0);
    const current = sized.reduce((n, l) => n + Math.min(l.current, l.total ?? 0), 0);
    const bytes = total > 0 ? `, ${megabytes(current)} of ${megabytes(total)}` : '';
    const message = `Pulling ${this.label}: ${done} of ${all.length} layers${bytes}`;
    if (all.length === 0) return { message };
    // Bytes are the measure once every layer still to come has a size (layers the engine
    // already has carry none and need none); until then the layer count is the honest one.
    const bytesKnown = total > 0 && all.every((l) => l.done || l.total !== undefined);
    const percent = bytesKnown ? (100 * current) / total : (100 * done) / all.length;
    return { message, percent: Math.min(100, Math.floor(percent)) };
  }
}

export interface BuildStep {
  n: number;
  of: number;
  /** The Dockerfile instruction as the builder printed it (`FROM debian:bookworm-slim`). */
  instruction: string;
  /** Buildah, a Dockerfile of several stages: this step's stage, of how many (`[2/2] STEP …`). */
  stage?: number;
  stages?: number;
}

/**
 * The step a build output line starts: Docker's classic builder prints "Step n/m : INSTRUCTION"
 * (numbered across every stage), Podman's Buildah "STEP n/m: INSTRUCTION", and for a Dockerfile
 * of several stages "[s/S] STEP n/m: INSTRUCTION" (numbered within stage s of S; the runtime
 * image has two since decision 0049). Undefined for any other line.
 */
export function parseBuildStep(line: string): BuildStep | undefined {
  const m = /^(?:\[(\d+)\/(\d+)\] )?(?:Step|STEP) (\d+)\/(\d+) ?: (.*)$/.exec(line);
  if (!m) return undefined;
  const step: BuildStep = { n: Number(m[3]), of: Number(m[4]), instruction: m[5] as string };
  return m[1] !== undefined ? { ...step, stage: Number(m[1]), stages: Number(m[2]) } : step;
}

/** The progress a build step line reports, or undefined for any other line. */
export function buildStepProgress(label: string, line: string): ImageProgress | undefined {
  const step = parseBuildStep(line);
  if (!step) return undefined;
  const { n, of } = step;
  const instruction = step.instruction.replace(/\s+/g, ' ').trim();
  const short = instruction.length > 48 ? `${instruction.slice(0, 47)}…` : instruction;
  // Step n has started, so n - 1 are done; of a stage s of S, s - 1 stages are done too.
  const stage = step.stage !== undefined && step.stages !== undefined && step.stages > 1 ? { s: step.stage, of: step.stages } : undefined;
  const within = of > 0 ? (n - 1) / of : 0;
  const done = stage ? (stage.s - 1 + within) / stage.of : within;
  const where = stage ? `stage ${stage.s} of ${stage.of}, step ${n} of ${of}` : `step ${n} of ${of}`;
  return { message: `Building ${label}: ${where} (${short})`, percent: of > 0 ? Math.floor(100 * done) : undefined };
}
