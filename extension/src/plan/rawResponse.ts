/**
 * A whole HTTP/1.1 answer as bytes, for a socket Node's HTTP server no longer writes to: the
 * Docker endpoint's refused hijacks and bad heads (engine/dockerEndpoint/wire.ts), the egress
 * proxy's own refusals (bridge/egressWire.ts). The connection closes after it. Pure.
 */
import { STATUS_CODES } from 'node:http';

export function rawResponse(status: number, contentType: string, body: Buffer, extra: Record<string, string> = {}): Buffer {
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    ...Object.entries(extra).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
    '',
    '',
  ];
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]);
}
