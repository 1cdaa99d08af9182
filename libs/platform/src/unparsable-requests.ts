import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { API_ERROR_CODES, type ApiErrorCode } from './api-error';

/**
 * How long a refused connection is still read (and discarded) after its answer. Node's own refusal writes the
 * answer and destroys the socket at once; a client still sending its body then gets the kernel's reset
 * (EPIPE or ECONNRESET) and often never reads the answer it was sent. Reading on for a while lets it.
 */
const LINGER_MS = 2_000;

/** Node's parser errors, as the codes of the catalogue (API_ERROR_CODES) that answer them. */
function answerOf(error: NodeJS.ErrnoException): { code: ApiErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: 'the request line and headers are larger than 16 KiB' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'the chunk extensions of the body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'the request was not received in time' };
    default:
      return { code: 'MALFORMED_REQUEST', message: 'the bytes received are not an HTTP/1.1 request' };
  }
}

/** The raw HTTP/1.1 answer to a request Node's parser refused: the one error shape of the edge, then close. */
export function unparsableAnswer(error: NodeJS.ErrnoException): string {
  const answer = answerOf(error);
  const status = API_ERROR_CODES[answer.code].status;
  const body = JSON.stringify(answer);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * A request Node's HTTP parser refuses before any application code runs (a request line and headers over
 * 16 KiB, bytes that are not HTTP, a request that took too long) is answered with the edge's error shape
 * `{code, message}` (docs/http-api.md), and its connection is closed gracefully: the answer is sent, the
 * write side ended, and what the client still sends is read and dropped for LINGER_MS before the socket is
 * destroyed - the "lingering close" of HTTP/1.1 servers. Called once per HTTP server, by every app.
 */
export function answerUnparsableRequests(server: Server): void {
  const answered = new WeakSet<Socket>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Node reports each further chunk of the same broken request again: the first report is answered.
    if (answered.has(socket)) return;
    answered.add(socket);
    // An answer already under way on this keep-alive connection (pipelining) must not be corrupted, and a
    // reset socket takes nothing: both are closed as Node would.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(unparsableAnswer(error));
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}
