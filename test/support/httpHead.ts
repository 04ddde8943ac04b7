import type { Socket } from 'node:net';

/** One HTTP head read off a socket: the bytes before the blank line, and whatever came after it. */
export interface HttpHead {
  head: Buffer;
  rest: Buffer;
}

/**
 * Reads one HTTP head (a request or an answer) off `socket`: resolves once the blank line arrived,
 * having stopped listening for data, so the caller owns what follows. `pause` also pauses the
 * socket (for a caller that hands it on later rather than at once). Rejects on a socket error, or
 * when the socket closes before the head is whole (with what had come, to see why).
 */
export function readHttpHead(socket: Socket, options: { pause?: boolean } = {}): Promise<HttpHead> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      if (options.pause) socket.pause();
      resolve({ head: buf.subarray(0, end), rest: buf.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed before an answer: ${buf.toString('latin1')}`)));
  });
}
