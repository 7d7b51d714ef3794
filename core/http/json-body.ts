// The one JSON body parser for every route. It replaces Fastify's default so that nesting depth
// is bounded before anything walks the value: JSON.parse itself copes with deep input, but
// validation, serialisation and the app code after it recurse and die with a RangeError (a 500).
// Prototype-poisoning protection stays as Fastify has it: secure-json-parse, `__proto__` and
// `constructor.prototype` refused.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorCodes as fastifyErrors } from 'fastify';
import secureJson from 'secure-json-parse';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import { langOf } from './error-handlers.ts';
import type { Translator } from '../kernel/i18n/i18n.ts';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when arrays and objects in `text` nest deeper than `limit` (`{}` is depth 1).
 * One pass, no recursion, no allocation; brackets inside strings do not count. Text that is
 * not JSON gets an arbitrary answer and is then refused by the parser anyway.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

/** Installs the parser for `application/json` (any charset parameter), on every route. */
export function installJsonBodyParser(app: FastifyInstance, tr: Translator, maxDepth: number): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // Fastify's own errors for these two, so core/errors/handlers.ts maps them as before.
    if (text.length === 0) return done(new fastifyErrors.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
    if (nestsDeeperThan(text, maxDepth)) {
      const reason = tr.t(langOf(request), 'reason.jsonTooDeep', { limit: maxDepth });
      return done(new DiwanError('BAD_REQUEST', [{ reason: 'json_too_deep', limit: maxDepth }], { reason }), undefined);
    }
    let value: unknown;
    try {
      value = secureJson.parse(text, undefined, PARSE_OPTIONS);
    } catch {
      return done(new fastifyErrors.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    done(null, value);
  });
}
