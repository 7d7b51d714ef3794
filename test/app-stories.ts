// What the apps' story tests (test/api-apps*.test.ts) assert about a refusal, in one place.
import { expect } from 'vitest';
import { expectError, type Res } from './helpers.ts';

/** The request headers of a caller reading Arabic. */
export const AR = { 'accept-language': 'ar' };

/** A VALIDATION_ERROR whose details name exactly these pointers. */
export async function invalid(res: Promise<Res>, ...pointers: string[]) {
  const e = expectError(await res, 400, 'VALIDATION_ERROR');
  expect(e.details.map((d) => d.pointer).sort()).toEqual([...pointers].sort());
  return e;
}

/** A CONFLICT with this reason (guard, locked, unique, parentLocked, parentRule). */
export async function conflict(res: Promise<Res>, reason = 'guard') {
  const e = expectError(await res, 409, 'CONFLICT');
  expect(e.details[0]).toMatchObject({ reason });
  return e;
}

/** A VALIDATION_ERROR at exactly these pointers (with these messages, in English), in order. */
export function refused(res: Res, ...problems: { pointer: string; message?: string }[]) {
  const e = expectError(res, 400, 'VALIDATION_ERROR');
  expect(e.details).toEqual(problems.map((p) => expect.objectContaining(p)));
  return e;
}

/** A CONFLICT whose first detail has these properties (and whose message says this). */
export function conflictWith(res: Res, detail: Record<string, unknown>, message?: string) {
  const e = expectError(res, 409, 'CONFLICT');
  expect(e.details[0]).toMatchObject(detail);
  if (message) expect(e.message).toContain(message);
  return e;
}
