// ZATCA's QR payload (issue 27, part 7): base64 TLV, one byte of tag and one of length.
import { describe, expect, it } from 'vitest';
import { parseQr, qr } from '../apps-installed/invoicing/zatca/index.ts';

describe('the QR TLV', () => {
  const phase1 = { sellerName: 'مطعم الفجر | Al Fajr Restaurant', vatNumber: '310122393500003', timestamp: '2026-11-28T09:30:00', total: '40.00', vatTotal: '5.22' };

  it('writes tags 1–5 in order, lengths in bytes (Arabic is 2 bytes a letter)', () => {
    const bytes = Buffer.from(qr(phase1), 'base64');
    expect(bytes[0]).toBe(1);
    expect(bytes[1]).toBe(Buffer.byteLength(phase1.sellerName));
    const tags: number[] = [];
    for (let i = 0; i < bytes.length; i += 2 + bytes[i + 1]) tags.push(bytes[i]);
    expect(tags).toEqual([1, 2, 3, 4, 5]);
    expect(parseQr(qr(phase1))).toEqual(phase1);
  });

  it('round-trips tags 6–9 (6 and 7 as base64 text, 8 and 9 as bytes)', () => {
    const full = { ...phase1, hash: 'z5F9qsS6oWyDhehD8u8S0DaxV+2CUiUz9Y+UsR61JgQ=', signature: 'MEUCIQ==', publicKey: new Uint8Array([48, 86, 1, 2]), certificateSignature: new Uint8Array([48, 69, 9]) };
    expect(parseQr(qr(full))).toEqual(full);
  });

  it('refuses a value longer than one length byte holds, and a truncated payload', () => {
    expect(() => qr({ ...phase1, sellerName: 'x'.repeat(256) })).toThrow(/tag 1 is 256 bytes/);
    const cut = Buffer.from(qr(phase1), 'base64').subarray(0, 10).toString('base64');
    expect(() => parseQr(cut)).toThrow(/truncated/);
  });
});
