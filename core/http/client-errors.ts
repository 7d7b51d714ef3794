// Answers for requests Node's HTTP parser refuses before Fastify sees them (a bad Content-Length,
// a malformed chunk, bare-LF line endings, headers over the size limit, a request that arrives
// too slowly), and for a request without Host. Node and Fastify would answer these in their own
// shapes or with an empty body; here they leave in the one envelope, like every other answer.
import http, { type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { errorCodes } from '../kernel/errors/codes.ts';
import { pickLanguage, type Lang, type Translator } from '../kernel/i18n/i18n.ts';

export interface RequestTimeouts {
  /** Time allowed for the request line and headers; 0 turns it off. */
  headersTimeoutMs: number;
  /** Time allowed for the whole request, body included; 0 turns it off. */
  requestTimeoutMs: number;
}

/**
 * Node's parser (llhttp) error → the `reason` in `details` and its message key. The code alone
 * is ambiguous (a bare LF after the version is HPE_INVALID_VERSION; Content-Length with
 * Transfer-Encoding is reported under either header's code), so llhttp's text decides first.
 */
export function parserReason(err: { code?: string; reason?: string }): [reason: string, key: string] {
  const text = err.reason ?? '';
  if (/can't be present with/i.test(text)) return ['content_length_and_transfer_encoding', 'reason.contentLengthAndTransferEncoding'];
  if (/\bCR(LF)?\b/.test(text)) return ['line_ending', 'reason.lineEnding'];
  switch (err.code) {
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return ['content_length', 'reason.contentLength'];
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return ['transfer_encoding', 'reason.transferEncoding'];
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ['chunk', 'reason.chunk'];
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return ['line_ending', 'reason.lineEnding'];
  }
  if (/chunk/i.test(text)) return ['chunk', 'reason.chunk'];
  return ['malformed_http', 'reason.malformedHttp'];
}

/** What a connection-level error answers, in the caller's language when its headers were read. */
export function clientErrorFor(err: Error & { code?: string; reason?: string }, timeouts: RequestTimeouts, headersRead: boolean, lang: Lang, tr: Translator): DiwanError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new DiwanError('HEADERS_TOO_LARGE', [{ limit: http.maxHeaderSize }]);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Node raises one error for both limits; once the headers are in, only the whole-request one is left.
      return headersRead || timeouts.headersTimeoutMs === 0
        ? new DiwanError('REQUEST_TIMEOUT', [{ reason: 'request', limitMs: timeouts.requestTimeoutMs }])
        : new DiwanError('REQUEST_TIMEOUT', [{ reason: 'headers', limitMs: timeouts.headersTimeoutMs }]);
  }
  const [reason, key] = parserReason(err);
  const detail = reason === 'malformed_http' && err.code ? { reason, parserError: err.code } : { reason };
  return new DiwanError('BAD_REQUEST', [detail], { reason: tr.t(lang, key) });
}

/** The raw HTTP/1.1 answer for a socket Fastify never got a reply object for. */
export function rawEnvelope(err: DiwanError, lang: Lang, tr: Translator): string {
  const status = errorCodes[err.code].status;
  const body = JSON.stringify({ error: { code: err.code, message: tr.t(lang, `error.${err.code}`, err.params), details: err.details } });
  return [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Content-Language: ${lang}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Fastify's `clientErrorHandler` option: the envelope instead of Fastify's own shape. */
export function clientErrorHandler(tr: Translator, timeouts: RequestTimeouts) {
  return function onClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // The response in flight on this socket, if the request got that far (Node's own handler looks
    // at the same field). Once its headers are out, another answer would corrupt the stream.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const lang = pickLanguage(inFlight?.req?.headers['accept-language']);
    const answer = clientErrorFor(err, timeouts, inFlight !== undefined, lang, tr);
    this.log.debug({ err, code: answer.code }, 'client error');
    // Node's order: write, then destroy; a short answer on a writable socket goes out at once.
    if (socket.writable) socket.write(rawEnvelope(answer, lang, tr));
    socket.destroy();
  };
}

/**
 * HTTP/1.1 requires Host (RFC 9112 §3.2). Node's own check (`requireHostHeader`) answers an
 * empty 400, so it is turned off in core/http/server-options.ts and done here instead.
 */
export function installHostHeaderCheck(app: FastifyInstance, tr: Translator): void {
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    if (raw.headers.host !== undefined || raw.httpVersionMajor < 1 || (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 0)) return done();
    const lang = pickLanguage(request.headers['accept-language']);
    done(new DiwanError('BAD_REQUEST', [{ reason: 'missing_host', header: 'Host' }], { reason: tr.t(lang, 'reason.missingHost') }, { connection: 'close' }));
  });
}
