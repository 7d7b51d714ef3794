// The document as served: its JSON text, a strong ETag and, made on first ask, its compressed
// forms (a document with every app is megabytes of repetitive JSON, a twentieth compressed).

import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { OpenApiDocument } from './build-document.ts';

export interface OpenApiText {
  json: string;
  etag: string;
  /** The bytes to send: UTF-8 (`identity`) or compressed, each made once. */
  encoded(encoding: 'br' | 'gzip' | 'identity'): Buffer;
}

export function openApiText(doc: OpenApiDocument): OpenApiText {
  const json = JSON.stringify(doc);
  const made = new Map<string, Buffer>();
  // Brotli at quality 5: most of quality 11's gain on JSON for a fraction of its time.
  const encode = (encoding: 'br' | 'gzip' | 'identity') =>
    encoding === 'identity'
      ? Buffer.from(json)
      : encoding === 'br'
        ? zlib.brotliCompressSync(json, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } })
        : zlib.gzipSync(json);
  return {
    json,
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`,
    encoded: (encoding) => made.get(encoding) ?? made.set(encoding, encode(encoding)).get(encoding)!,
  };
}
