// Passwords are hashed with scrypt (memory-hard: 32 MiB per hash), a random salt each, and
// compared in constant time. The parameters travel with the hash, so they can be raised later
// without invalidating the hashes already stored.
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${Math.log2(N)}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A stored hash to compare against when the account does not exist, so both cases take as long. */
let dummy: Promise<string> | undefined;

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const hash = stored ?? (await (dummy ??= hashPassword(randomBytes(16).toString('hex'))));
  const [scheme, logN, r, p, salt, expected] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const want = Buffer.from(expected, 'base64url');
  const got = await derive(password, Buffer.from(salt, 'base64url'), 2 ** Number(logN), Number(r), Number(p));
  return got.length === want.length && timingSafeEqual(got, want) && stored !== undefined && stored !== null;
}
