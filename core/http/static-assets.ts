// Files held in memory, each precompressed once (brotli and gzip) and answered in the encoding
// the client accepts. Content-hashed assets are cached for a year (`immutable`); pages are
// revalidated every time (`no-cache`, with an ETag).
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface StaticAsset {
  type: string;
  /** The identity body and its two precompressed forms. */
  raw: Buffer;
  br: Buffer;
  gzip: Buffer;
  etag: string;
  cacheControl: string;
  /** Request headers the answer depends on. */
  vary: string;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

export const contentHash = (data: Buffer | string, length = 10): string =>
  createHash('sha256').update(data).digest('base64url').replace(/[-_]/g, '').slice(0, length).toLowerCase();

export function makeAsset(body: Buffer | string, type: string, cacheControl: string, vary = 'accept-encoding'): StaticAsset {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return {
    type,
    raw,
    br: zlib.brotliCompressSync(raw, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT },
    }),
    gzip: zlib.gzipSync(raw, { level: 9 }),
    etag: `"${contentHash(raw, 16)}"`,
    cacheControl,
    vary,
  };
}

/** The best encoding in an Accept-Encoding header among br and gzip (q-values honoured), or identity. */
export function pickEncoding(header: string | string[] | undefined): 'br' | 'gzip' | 'identity' {
  const value = Array.isArray(header) ? header.join(',') : header ?? '';
  const q = new Map<string, number>();
  for (const part of value.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.find((p) => p.trim().startsWith('q='));
    const n = qp ? Number(qp.trim().slice(2)) : 1;
    q.set(name, Number.isFinite(n) ? n : 0);
  }
  const of = (name: string) => q.get(name) ?? (q.has('*') ? q.get('*')! : 0);
  const br = of('br');
  const gz = of('gzip');
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

export function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: StaticAsset): FastifyReply {
  reply
    .header('content-type', asset.type)
    .header('cache-control', asset.cacheControl)
    .header('etag', asset.etag)
    .header('vary', asset.vary)
    .header('x-content-type-options', 'nosniff');
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  const enc = pickEncoding(req.headers['accept-encoding']);
  if (enc !== 'identity') reply.header('content-encoding', enc);
  const body = enc === 'br' ? asset.br : enc === 'gzip' ? asset.gzip : asset.raw;
  return reply.header('content-length', body.length).send(body);
}
