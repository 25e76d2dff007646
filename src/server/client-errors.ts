// A connection the HTTP parser refuses (a bad chunk size, a header overflow, a timeout)
// never reaches a route, so no review line is written for it. fastify's default handler
// logs the parser's error whole, and Node's error carries `rawPacket`: the bytes read so
// far, an Authorization header and a Secret's data among them. This one logs what went
// wrong, never the bytes, and answers as fastify's default does.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

const ANSWERS: Record<string, { status: number; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'Client Timeout' },
  HPE_HEADER_OVERFLOW: { status: 431, message: 'Exceeded maximum allowed HTTP header size' },
};

export function clientError(this: FastifyInstance, err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Socket): void {
  // A reset connection is already gone: nothing to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = ANSWERS[err.code ?? ''] ?? { status: 400, message: 'Client Error' };
  this.log.debug({ code: err.code, bytesParsed: err.bytesParsed, status }, 'client error: the request could not be parsed');
  if (socket.writable) {
    const body = JSON.stringify({ error: STATUS_CODES[status], message, statusCode: status });
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}
