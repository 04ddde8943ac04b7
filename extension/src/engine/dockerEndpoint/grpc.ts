/**
 * A refused `/grpc` (BuildKit's own API, plan/dockerEndpoint/routes.ts BUILDKIT_GRPC_REFUSED) answered
 * so that its client shows the refusal. docker buildx dials `/grpc` as an upgrade to h2c and reads
 * any answer but 101 as "the engine has no BuildKit" (it says only "unable to upgrade to h2c,
 * received 403"), then falls back to starting a privileged moby/buildkit container of its own. So
 * the endpoint takes the upgrade itself, speaks just enough HTTP/2 (RFC 9113) to answer every
 * request on it with the gRPC status PERMISSION_DENIED and the refusal's sentence, and closes.
 * Nothing of it reaches the engine.
 *
 * Bounded like every other client connection: frames of at most the default 16 KiB, a few streams,
 * a few hundred KiB in all, a few seconds; past any of these the connection is closed.
 */
import type { Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** SETTINGS_MAX_FRAME_SIZE's default, which the answer never raises. */
const MAX_FRAME = 16_384;
/** Streams answered before the connection is closed (buildx asks once or twice). */
const MAX_STREAMS = 16;
/** Bytes read from the client in all. */
const MAX_BYTES = 256 * 1024;
/** How long the connection may stay open. */
const LIFETIME_MS = 10_000;

const FRAME = { data: 0x0, headers: 0x1, settings: 0x4, ping: 0x6, goaway: 0x7, continuation: 0x9 } as const;
const FLAG = { ack: 0x1, endStream: 0x1, endHeaders: 0x4 } as const;
/** gRPC's status code for a request the caller may not make. */
const PERMISSION_DENIED = 7;

/** The 101 a client that asked to upgrade to h2c waits for. */
export const GRPC_UPGRADED = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n', 'latin1');

/** Whether a request head is BuildKit's `/grpc` asking to upgrade to h2c (what buildx sends). */
export function isGrpcUpgrade(url: string | undefined, upgrade: string | undefined): boolean {
  const path = (url ?? '').split('?')[0] ?? '';
  return /^(?:\/v1\.[0-9]{1,2})?\/grpc$/.test(path) && (upgrade ?? '').trim().toLowerCase() === 'h2c';
}

/** One HTTP/2 frame. Pure. */
export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with a 7-bit prefix (RFC 7541 5.1), as a string length without Huffman coding. */
function hpackLength(n: number): Buffer {
  if (n < 0x7f) return Buffer.from([n]);
  const out = [0x7f];
  let rest = n - 0x7f;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A header field without indexing, its name given literally (RFC 7541 6.2.2). */
function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([0x00]), hpackLength(n.length), n, hpackLength(v.length), v]);
}

/** grpc-message's encoding: bytes outside printable ASCII, and `%`, as %XX of their UTF-8. */
export function grpcMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A trailers-only gRPC answer on `stream`: status 200, content-type, grpc-status and grpc-message, the stream ended. Pure. */
export function grpcRefusalFrame(stream: number, message: string): Buffer {
  const block = Buffer.concat([
    Buffer.from([0x88]), // :status 200, the static table's entry 8
    literal('content-type', 'application/grpc'),
    literal('grpc-status', String(PERMISSION_DENIED)),
    literal('grpc-message', grpcMessage(message)),
  ]);
  return frame(FRAME.headers, FLAG.endStream | FLAG.endHeaders, stream, block);
}

/**
 * Takes over `socket` (a client's connection whose `/grpc` upgrade the gate refused): sends the
 * 101 and the server's SETTINGS, then answers each request stream with the refusal, until the
 * client goes, or a bound is reached. `first` is what the client sent after its request head.
 */
export function refuseAsGrpc(socket: Socket, first: Buffer, message: string, onClose: () => void): void {
  let buffer = first;
  let read = first.length;
  let answered = 0;
  let lastStream = 0;
  let pending: number | undefined;
  let prefaced = false;
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    socket.destroy();
    onClose();
  };
  const timer = setTimeout(close, LIFETIME_MS);
  const goaway = (code: number): void => {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(lastStream, 0);
    payload.writeUInt32BE(code, 4);
    socket.end(frame(FRAME.goaway, 0, 0, payload));
    setTimeout(close, 500).unref();
  };
  const answer = (stream: number): void => {
    if (stream % 2 === 0 || stream <= lastStream) return;
    lastStream = stream;
    socket.write(grpcRefusalFrame(stream, message));
    answered += 1;
    if (answered >= MAX_STREAMS) goaway(0);
  };
  const take = (): void => {
    if (!prefaced) {
      if (buffer.length < PREFACE.length) return;
      if (!buffer.subarray(0, PREFACE.length).equals(PREFACE)) return close();
      buffer = buffer.subarray(PREFACE.length);
      prefaced = true;
    }
    while (!closed && buffer.length >= 9) {
      const length = buffer.readUIntBE(0, 3);
      // FRAME_SIZE_ERROR (6): nothing here is that large.
      if (length > MAX_FRAME) return goaway(6);
      if (buffer.length < 9 + length) return;
      const type = buffer.readUInt8(3);
      const flags = buffer.readUInt8(4);
      const stream = buffer.readUInt32BE(5) & 0x7fffffff;
      const payload = buffer.subarray(9, 9 + length);
      buffer = buffer.subarray(9 + length);
      if (type === FRAME.settings && (flags & FLAG.ack) === 0) socket.write(frame(FRAME.settings, FLAG.ack, 0));
      else if (type === FRAME.ping && (flags & FLAG.ack) === 0 && length === 8) socket.write(frame(FRAME.ping, FLAG.ack, 0, payload));
      else if (type === FRAME.headers || type === FRAME.continuation) {
        if (type === FRAME.headers) pending = stream;
        if ((flags & FLAG.endHeaders) !== 0 && pending !== undefined) {
          answer(pending);
          pending = undefined;
        }
      } else if (type === FRAME.goaway) return goaway(0);
      // DATA, WINDOW_UPDATE, RST_STREAM, PRIORITY: nothing to answer.
    }
  };
  socket.on('error', () => undefined);
  socket.once('close', close);
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_BYTES) return close();
    buffer = Buffer.concat([buffer, chunk]);
    take();
  });
  socket.write(GRPC_UPGRADED);
  socket.write(frame(FRAME.settings, 0, 0));
  take();
  socket.resume();
}
