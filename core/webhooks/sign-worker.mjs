// Piscina worker: signs one batch of deliveries, both schemes in one pass (signature.ts says what
// each is). Plain JS so it loads the same under tsx, vitest and node.
// Task (built by encodeBatch in signer-pool.ts):
//   bodies  (string|null)[]  string bodies; their UTF-8 encoding happens here, off the main thread
//   ids     (string|null)[]  event ids (webhook-id); null: the item wants the spec's header only
//   bytes   Uint8Array       byte bodies, back to back
//   meta    Uint32Array      per item: t, bodyStart (0xffffffff: string body), bodyLength,
//                            signingKeyIndex (0xffffffff: none), secretCount, secretIndex × secretCount
//   secrets string[]         the batch's distinct secrets
//   keys    string[]         the batch's distinct ed25519 signing keys (whsk_…)
// Returns two lines per item joined by "\n" (one string clones far cheaper than an array of
// many): the x-service-signature header, then the webhook-signature value ('' without an id).
//
// HMAC-SHA256 is computed by hand (RFC 2104): two one-shot hashes, the inner one over a reused
// buffer holding ipad ‖ message. On ~1 KiB bodies that is ~1.3 µs against ~2.4 µs for a
// createHmac() object, whose per-call setup costs more than hashing the body. The body is written
// once: the buffer holds ipad ‖ "<id>." ‖ "<t>." ‖ body; the standard's digests hash it from 0,
// then the spec's pad is copied over the id's place and its digests hash from there.
import crypto from 'node:crypto';

const BLOCK = 64;
// crypto.hash arrived in Node 20.12; older 20.x falls back to createHash.
const sha256 =
  typeof crypto.hash === 'function'
    ? (data, enc) => crypto.hash('sha256', data, enc)
    : (data, enc) => {
        const d = crypto.createHash('sha256').update(data);
        return enc === 'buffer' ? d.digest() : d.digest(enc);
      };

const PREFIX = 'whsec_';
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The standard scheme's key: as secretKeyBytes in signature.ts. */
function standardKey(secret) {
  const rest = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (rest.length > 0 && rest.length % 4 === 0 && STANDARD_BASE64.test(rest)) return Buffer.from(rest, 'base64');
  if (rest.length > 0 && rest.length % 4 !== 1 && BASE64URL.test(rest)) return Buffer.from(rest, 'base64url');
  return Buffer.from(secret, 'utf8');
}

function padsOf(keyBytes) {
  let key = keyBytes;
  if (key.length > BLOCK) key = sha256(key, 'buffer');
  const ipad = Buffer.alloc(BLOCK, 0x36);
  const opad = Buffer.alloc(BLOCK + 32, 0);
  opad.fill(0x5c, 0, BLOCK);
  for (let i = 0; i < key.length; i++) {
    ipad[i] ^= key[i];
    opad[i] ^= key[i];
  }
  return { ipad, opad };
}

// Per-secret pads of both schemes, computed once per worker.
const pads = new Map();
function padsFor(secret) {
  let p = pads.get(secret);
  if (p === undefined) {
    if (pads.size >= 10_000) pads.clear();
    p = { spec: padsOf(Buffer.from(secret, 'utf8')), standard: padsOf(standardKey(secret)) };
    pads.set(secret, p);
  }
  return p;
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const edKeys = new Map();
function edKeyFor(signingKey) {
  let k = edKeys.get(signingKey);
  if (k === undefined) {
    if (edKeys.size >= 10_000) edKeys.clear();
    const seed = Buffer.from(signingKey.slice('whsk_'.length), 'base64');
    k = crypto.createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    edKeys.set(signingKey, k);
  }
  return k;
}

let scratch = Buffer.allocUnsafe(16 * 1024);

const NONE = 0xffffffff;

export default function signBatch({ bodies, ids, bytes, meta, secrets, keys }) {
  const secretPads = secrets.map(padsFor);
  const out = new Array(bodies.length * 2);
  let m = 0;
  for (let i = 0; i < bodies.length; i++) {
    const t = meta[m];
    const start = meta[m + 1];
    const length = meta[m + 2];
    const keyIndex = meta[m + 3];
    const n = meta[m + 4];
    m += 5;
    const id = ids ? ids[i] : null;
    const idPrefix = id === null || id === undefined ? '' : `${id}.`;
    const prefix = `${t}.`;
    const body = bodies[i];
    // A string needs at most 3 bytes per UTF-16 unit; grow the scratch buffer before writing.
    const room = BLOCK + idPrefix.length * 3 + prefix.length + (start === NONE ? body.length * 3 : length);
    if (room > scratch.length) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2));
    const idEnd = BLOCK + scratch.write(idPrefix, BLOCK, 'utf8');
    const p = idEnd + scratch.write(prefix, idEnd, 'latin1');
    let end;
    if (start === NONE) {
      end = p + scratch.write(body, p, 'utf8');
    } else {
      scratch.set(bytes.subarray(start, start + length), p);
      end = p + length;
    }
    let standard = '';
    if (idPrefix !== '') {
      const inner = scratch.subarray(0, end);
      for (let k = 0; k < n; k++) {
        const { ipad, opad } = secretPads[meta[m + k]].standard;
        ipad.copy(scratch, 0);
        opad.write(sha256(inner, 'hex'), BLOCK, 'hex');
        standard += `${k === 0 ? '' : ' '}v1,${sha256(opad, 'base64')}`;
      }
      if (keyIndex !== NONE) {
        const sig = crypto.sign(null, scratch.subarray(BLOCK, end), edKeyFor(keys[keyIndex])).toString('base64');
        standard += `${standard === '' ? '' : ' '}v1a,${sig}`;
      }
    }
    // The spec's digests: its pad just before "<t>.", over the id's place.
    const from = idEnd - BLOCK;
    const inner = scratch.subarray(from, end);
    let header = `t=${t}`;
    for (let k = 0; k < n; k++) {
      const { ipad, opad } = secretPads[meta[m + k]].spec;
      ipad.copy(scratch, from);
      // Hex out and back in: a 'buffer' result costs an allocation that outweighs 64 hex digits.
      opad.write(sha256(inner, 'hex'), BLOCK, 'hex');
      header += `,v1=${sha256(opad, 'hex')}`;
    }
    m += n;
    out[2 * i] = header;
    out[2 * i + 1] = standard;
  }
  return out.join('\n');
}
