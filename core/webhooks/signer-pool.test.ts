import { afterAll, describe, expect, it } from 'vitest';
import { generateSecret, generateSigningKeyPair, signHeader, standardSignatureHeader } from './signature.ts';
import { SignerPool, type SignItem } from './signer-pool.ts';

const pool = new SignerPool({ threads: 2, maxBatch: 64, minChunk: 8 });
afterAll(() => pool.close());

function variedItems(): SignItem[] {
  const secrets = [
    'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8',
    'whsec_' + 'k'.repeat(100), // longer than the 64-byte HMAC block: hashed first
    'سر-عربي-🔑', // non-ASCII key bytes
    'x'.repeat(64), // exactly one block
  ];
  const bodies = [
    '',
    '{"a":1}',
    '{"name":"شركة الديوان","emoji":"🧾🧾"}',
    'lone surrogate \ud800 end', // encoded as U+FFFD by UTF-8, the same inline and in the worker
    JSON.stringify({ big: 'y'.repeat(100_000) }), // larger than the worker's first scratch buffer
    JSON.stringify({ big: 'ع'.repeat(30_000) }),
  ];
  const items: SignItem[] = [];
  let i = 0;
  for (const body of bodies) {
    for (let k = 0; k < secrets.length; k++) {
      items.push({ secrets: [secrets[k]], t: 1767225600 + i++, body });
      items.push({ secrets: [secrets[k], secrets[(k + 1) % secrets.length]], t: 9 + i++, body });
    }
  }
  // The same bodies as bytes: a pooled small Buffer, a view into a larger buffer, a plain Uint8Array.
  for (const body of bodies) {
    const b = Buffer.from(body, 'utf8');
    items.push({ secrets: [secrets[0]], t: 1767225600, body: b });
    const big = Buffer.concat([Buffer.from('junk-before'), b, Buffer.from('junk-after')]);
    items.push({ secrets: [secrets[1], secrets[2]], t: 1767225601, body: big.subarray(11, 11 + b.length) });
    items.push({ secrets: [secrets[3]], t: 1767225602, body: new Uint8Array(b) });
  }
  items.push({ secrets: [], t: 0, body: 'no secret at all' });
  return items;
}

describe('SignerPool', () => {
  it('produces exactly the inline headers, for string and byte bodies', async () => {
    const items = variedItems();
    const pooled = await pool.sign(items);
    expect(pooled).toEqual(items.map((it) => signHeader(it.secrets, it.t, it.body)));
    // A string and its UTF-8 bytes sign alike.
    const [fromString, fromBytes] = await pool.sign([
      { secrets: ['whsec_q'], t: 7, body: 'شركة' },
      { secrets: ['whsec_q'], t: 7, body: Buffer.from('شركة') },
    ]);
    expect(fromBytes).toBe(fromString);
  });

  it('signs both schemes in one call exactly as inline: the spec header and webhook-signature (v1 per secret, v1a with a signing key)', async () => {
    const { signingKey } = generateSigningKeyPair();
    const other = generateSigningKeyPair().signingKey;
    const extra = [generateSecret(), generateSecret()];
    const ids = ['evt_0001', 'evt_شركة', 'evt_' + 'z'.repeat(200)];
    const items: SignItem[] = variedItems().map((it, i) => ({
      ...it,
      secrets: i % 5 === 0 ? [...it.secrets, ...extra] : it.secrets,
      id: ids[i % ids.length],
      signingKey: i % 3 === 0 ? signingKey : i % 3 === 1 ? other : null,
    }));
    // Items without an id get the spec header only, in the same batch.
    items.push({ secrets: ['whsec_only'], t: 3, body: 'no id' });
    const signed = await pool.signAll(items);
    expect(signed.map((s) => s.signature)).toEqual(items.map((it) => signHeader(it.secrets, it.t, it.body)));
    expect(signed.map((s) => s.standard)).toEqual(items.map((it) => (it.id === undefined ? '' : standardSignatureHeader(it.secrets, it.id, it.t, it.body, it.signingKey))));
    expect(signed[0].standard).toMatch(/^v1,\S+ v1,\S+ v1,\S+ v1a,\S+$/);
  });

  it("leaves the caller's byte bodies intact (they are copied, not transferred)", async () => {
    const body = Buffer.from('{"keep":"me"}');
    await pool.sign([{ secrets: ['whsec_k'], t: 1, body }]);
    expect(body.toString()).toBe('{"keep":"me"}');
  });

  it('gathers calls made in the same tick into few worker round trips, in order', async () => {
    const before = pool.stats;
    const items = Array.from({ length: 100 }, (_, i) => ({ secrets: ['whsec_s'], t: 1767225600, body: `{"n":${i}}` }));
    const results = await Promise.all(items.map((it) => pool.sign([it])));
    expect(results.map((r) => r[0])).toEqual(items.map((it) => signHeader(it.secrets, it.t, it.body)));
    const trips = pool.stats.roundTrips - before.roundTrips;
    // 100 items, maxBatch 64: one eager batch of 64 (split in 2 for 2 threads), then 36 at the end of the tick (split in 2).
    expect(trips).toBe(4);
    expect(pool.stats.items - before.items).toBe(100);
  });

  it('splits one large call across batches and reassembles it in order', async () => {
    const items = Array.from({ length: 500 }, (_, i) => ({ secrets: ['whsec_a', 'whsec_b'], t: 1767225600 + i, body: `{"i":${i}}` }));
    const headers = await pool.sign(items);
    expect(headers).toHaveLength(500);
    expect(headers[0]).toBe(signHeader(['whsec_a', 'whsec_b'], 1767225600, '{"i":0}'));
    expect(headers[499]).toBe(signHeader(['whsec_a', 'whsec_b'], 1767225600 + 499, '{"i":499}'));
  });

  it('answers an empty call at once and rejects a timestamp that is not whole seconds', async () => {
    expect(await pool.sign([])).toEqual([]);
    await expect(pool.sign([{ secrets: ['s'], t: 1.5, body: '' }])).rejects.toThrow(RangeError);
    await expect(pool.sign([{ secrets: ['s'], t: -1, body: '' }])).rejects.toThrow(RangeError);
    await expect(pool.sign([{ secrets: ['s'], t: 2 ** 32, body: '' }])).rejects.toThrow(RangeError);
  });

  it('a bad item fails only its own call, not the calls sharing its batch', async () => {
    const good = pool.sign([{ secrets: ['whsec_g'], t: 1, body: 'fine' }]);
    const bad = pool.sign([{ secrets: [42 as unknown as string], t: 1, body: 'bad' }]);
    const alsoBad = pool.sign([{ secrets: ['whsec_g'], t: 1, body: { not: 'bytes' } as unknown as string }]);
    await expect(bad).rejects.toThrow(TypeError);
    await expect(alsoBad).rejects.toThrow(TypeError);
    expect(await good).toEqual([signHeader(['whsec_g'], 1, 'fine')]);
  });

  it('close() signs what is queued, then refuses new work', async () => {
    const own = new SignerPool({ threads: 1 });
    const pending = own.sign([{ secrets: ['whsec_z'], t: 5, body: 'queued before close' }]);
    await own.close();
    expect(await pending).toEqual([signHeader(['whsec_z'], 5, 'queued before close')]);
    await expect(own.sign([{ secrets: ['whsec_z'], t: 5, body: 'late' }])).rejects.toThrow(/closed/);
  });
});
