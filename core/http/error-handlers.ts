// Every failure leaves through here as `{ error: { code, message, details } }`, with the
// message in the caller's language; Fastify's own error shape never reaches a client.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { errorCodes } from '../kernel/errors/codes.ts';
import { pickLanguage, type Lang, type Translator } from '../kernel/i18n/i18n.ts';
import { ajvDetails, validationError, type RequestPart } from '../kernel/validation.ts';
import { isTransientDbError } from '../storage/transient.ts';

const PARTS: Record<string, RequestPart> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

export function langOf(request: FastifyRequest): Lang {
  return (request as FastifyRequest & { lang?: Lang }).lang ?? pickLanguage(request.headers['accept-language']);
}

/** Maps anything thrown to a DiwanError; unknown faults become INTERNAL. */
export function toDiwanError(err: FastifyError | Error, lang: Lang, tr: Translator, bodyLimit: number): DiwanError {
  if (err instanceof DiwanError) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    return validationError(ajvDetails(fe.validation as never, PARTS[fe.validationContext ?? 'body'] ?? 'body', lang, tr));
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DiwanError('UNSUPPORTED_MEDIA_TYPE', [{ contentType: 'application/json' }]);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DiwanError('PAYLOAD_TOO_LARGE', [{ limit: bodyLimit }], { limit: bodyLimit });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DiwanError('BAD_REQUEST', [{ reason: 'empty_json' }], { reason: tr.t(lang, 'reason.emptyJson') });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DiwanError('BAD_REQUEST', [{ reason: 'content_length' }], { reason: tr.t(lang, 'reason.contentLength') });
  }
  if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new DiwanError('BAD_REQUEST', [{ reason: 'malformed_json' }], { reason: tr.t(lang, 'reason.malformedJson') });
  }
  if (isTransientDbError(err)) return new DiwanError('SERVICE_UNAVAILABLE', [{ reason: 'database_busy' }], { seconds: 1 }, { 'retry-after': '1' });
  const status = fe.statusCode ?? 500;
  if (status === 404) return new DiwanError('NOT_FOUND');
  if (status === 413) return new DiwanError('PAYLOAD_TOO_LARGE', [{ limit: bodyLimit }], { limit: bodyLimit });
  if (status === 415) return new DiwanError('UNSUPPORTED_MEDIA_TYPE');
  if (status >= 400 && status < 500) {
    return new DiwanError('BAD_REQUEST', [{ reason: fe.code ?? 'bad_request' }], { reason: fe.message });
  }
  return new DiwanError('INTERNAL');
}

export function sendError(reply: FastifyReply, err: DiwanError, lang: Lang, tr: Translator): FastifyReply {
  const params = { ...err.params };
  if (err.code === 'VALIDATION_ERROR' && params.summary === undefined) params.summary = '';
  return reply
    .code(errorCodes[err.code].status)
    .headers(err.headers)
    .header('content-language', lang)
    .type('application/json; charset=utf-8')
    .send({ error: { code: err.code, message: tr.t(lang, `error.${err.code}`, params), details: err.details } });
}

/** Errors Fastify's router raises before any handler runs (a bad URL encoding, say). */
export function frameworkErrorHandler(tr: Translator, bodyLimit: number) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const lang = langOf(request);
    const de = err.code === 'FST_ERR_BAD_URL'
      ? new DiwanError('BAD_REQUEST', [{ reason: 'bad_url' }], { reason: 'the URL is not correctly encoded' })
      : toDiwanError(err, lang, tr, bodyLimit);
    return sendError(reply, de, lang, tr);
  };
}

export function installErrorHandlers(
  app: FastifyInstance,
  tr: Translator,
  bodyLimit: number,
  notFound: (request: FastifyRequest) => DiwanError,
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const lang = langOf(request);
    const de = toDiwanError(err, lang, tr, bodyLimit);
    if (de.code === 'INTERNAL') request.log.error({ err }, 'unhandled error');
    else if (de.code === 'APP_ERROR') request.log.error({ err: de.cause ?? de, details: de.details }, 'app error');
    return sendError(reply, de, lang, tr);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, notFound(request), langOf(request), tr));
}
