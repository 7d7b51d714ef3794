// The README's signature check for webhook consumers, run as written: the ```js block that
// exports `verify`, imported from a temporary file and checked against the host's signer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { generateSecret, signHeader, unixSeconds } from '../core/webhooks/signature.ts';

type Verify = (rawBody: string, header: string, secret: string, toleranceSeconds?: number) => boolean;

async function readmeVerify(): Promise<Verify> {
  const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
  const block = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('export function verify'));
  if (!block) throw new Error('README.md has no ```js block exporting verify');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'readme-verify-')), 'verify.mjs');
  fs.writeFileSync(file, block);
  return ((await import(pathToFileURL(file).href)) as { verify: Verify }).verify;
}

describe("the README's verify()", () => {
  it('accepts what the host signs, with either secret of a rotation, and refuses the rest', async () => {
    const verify = await readmeVerify();
    // The clock stands still mid-second: a second boundary passing between signing and checking
    // would otherwise move the ±301 s cases to 300.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Math.floor(Date.now() / 1000) * 1000 + 500);
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const [oldSecret, newSecret] = [generateSecret(), generateSecret()];
    const body = JSON.stringify({ id: 'evt_1', type: 'invoice.created', data: { total: 1150 } });
    const now = unixSeconds(Date.now());
    const header = signHeader([newSecret, oldSecret], now, body);
    expect(verify(body, header, newSecret)).toBe(true);
    expect(verify(body, header, oldSecret)).toBe(true);
    expect(verify(body, signHeader([newSecret], now, body), newSecret)).toBe(true);
    // Another secret, a changed body, a stale or future time, a mangled header: refused, never thrown.
    expect(verify(body, header, generateSecret())).toBe(false);
    expect(verify(body.replace('1150', '1151'), header, newSecret)).toBe(false);
    expect(verify(body, signHeader([newSecret], now - 301, body), newSecret)).toBe(false);
    expect(verify(body, signHeader([newSecret], now + 301, body), newSecret)).toBe(false);
    for (const bad of ['', 't=', 'v1=abc', `t=${now}`, `t=${now},v1=zz`, `t=${now},v1=${'0'.repeat(64)}`, `t=x,${header.split(',')[1]}`]) {
      expect(verify(body, bad, newSecret), bad).toBe(false);
    }
  });
});
