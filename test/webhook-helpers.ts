// What the webhook, package and cross-process tests need beyond `helpers.ts`, on the
// asynchronous host: companies and keys created through the unit of work, raw reads through
// the `Db` interface, and a bounded wait for what another process changes.
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import type { Host } from '../core/host.ts';
import type { WriteScope } from '../core/audit/unit-of-work.ts';
import type { ApiKeyRecord } from '../core/identity/api-keys.ts';
import { ROLES, type Role } from '../core/identity/roles.ts';
import { client, type TestCompany } from './helpers.ts';

export { makeHost, client, authHeaders, expectError, invoiceBody, createCustomer, invoicingSources, type TestCompany, type Client, type Res } from './helpers.ts';

/** The operator (the CLI) acting in `companyId` for the core. */
export function cliScope(companyId: string): WriteScope {
  return { companyId, actor: CLI_ACTOR, appId: 'core' };
}

/** A key created by the operator; the full key and its record. */
export function createKey(host: Host, companyId: string, input: { role: Role; scopes?: string[]; name?: string }): Promise<{ record: ApiKeyRecord; key: string }> {
  return host.keys.create(cliScope(companyId), { role: input.role, scopes: input.scopes ?? ['*'], name: input.name });
}

/** A company with the invoicing app (or `apps`) and one `*`-scoped key per role. */
export async function createCompany(host: Host, input: { name?: string; currency?: string; apps?: string[] } = {}): Promise<TestCompany> {
  const { company } = await host.createCompany({ name: input.name ?? 'Test Co', currency: input.currency ?? 'SAR', apps: input.apps ?? ['invoicing'] });
  const keys = {} as Record<Role, string>;
  for (const role of ROLES) keys[role] = (await createKey(host, company.id, { role, name: `${role} key` })).key;
  return { company, keys, as: (role: Role = 'Owner') => client(host, keys[role], company.id) };
}

/** The first column of the first row (a `count(*)`, one value), straight from the database. */
export async function scalar<T = unknown>(host: Host, sql: string, ...args: unknown[]): Promise<T | undefined> {
  const row = await host.storage.db.get(sql, args);
  return row ? (Object.values(row)[0] as T) : undefined;
}

/** The first column of every row. */
export async function column<T = unknown>(host: Host, sql: string, ...args: unknown[]): Promise<T[]> {
  return (await host.storage.db.all(sql, args)).map((r) => Object.values(r)[0] as T);
}

/** Rows counted by a `SELECT count(*) …`. */
export async function count(host: Host, sql: string, ...args: unknown[]): Promise<number> {
  return Number(await scalar(host, sql, ...args));
}

/**
 * Calls `probe` until it answers something truthy, at most `ms` milliseconds; answers that value
 * and how long it took. Throws, naming `what`, if the time runs out.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 1000, everyMs = 10): Promise<{ value: T; elapsed: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    const elapsed = Date.now() - started;
    if (value) return { value, elapsed };
    if (elapsed > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
