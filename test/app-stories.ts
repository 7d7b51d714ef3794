// What the apps' story tests (test/api-apps*.test.ts) assert about a refusal, in one place.
import { expect } from 'vitest';
import { appsHost, created, createCustomer, expectError, type Res } from './helpers.ts';

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

/** The company of the first stories (api-apps-a, api-apps2-a): a customer, an employee and a project. */
export async function storiesWithProject(apps: readonly string[]) {
  const { host, co } = await appsHost(apps);
  const api = co.as();
  const customerId = (await createCustomer(api, 'Al-Noor Trading')).id;
  const employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Engineer', joinDate: '2020-03-01' }))).id;
  const projectId = (await created(api.post('/api/v1/projects', { name: 'Riyadh HQ fit-out' }))).id;
  return { host, co, api, customerId, employeeId, projectId };
}

/** The company of the second stories (api-apps-b, api-apps2-b): an employee, the manager who approves, and a customer with a phone. */
export async function storiesWithApprover(apps: readonly string[]) {
  const { host, co } = await appsHost(apps);
  const api = co.as();
  const employeeId = (await created(api.post('/api/v1/employees', { fullName: 'Sara Al-Harbi', jobTitle: 'Engineer', joinDate: '2020-01-01' }))).id;
  const otherEmployeeId = (await created(api.post('/api/v1/employees', { fullName: 'Omar Al-Qahtani', jobTitle: 'Manager', joinDate: '2018-01-01' }))).id;
  const customerId = (await created(api.post('/api/v1/customers', { name: 'Al-Noor Trading', phone: '+966112345678' }))).id;
  return { host, co, api, employeeId, otherEmployeeId, customerId };
}
