// The session cookie: `__Host-` prefixed (Secure, Path=/, no Domain, so no subdomain can set or
// read it), HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site writes).
export const SESSION_COOKIE = '__Host-diwan-session';

/** One cookie's value from a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

export const clearedSessionCookie = `${SESSION_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`;
