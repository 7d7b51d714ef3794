// `diwan users create` as an operator runs it: `node cli/bin.js … ` in a child process on a
// temporary DATA_DIR. It makes the person a member with the role and prints the one-time
// sign-in link (`<DIWAN_PUBLIC_URL>/signin#<token>`), which then signs them in once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHost as realBuildHost, type HostOptions } from '../core/host.ts';
import { processDatabase } from '../test/db.ts';
import { runCli, type CliRun } from '../test/cli-run.ts';

const PUBLIC_URL = 'https://diwan.example.com';

/** The SQLite file in the data folder, or (the postgres project) a PostgreSQL database the CLI is pointed at. */
let db: Awaited<ReturnType<typeof processDatabase>>;
const buildHost = (opts: HostOptions) => realBuildHost({ ...opts, ...db.hostOptions });

function diwan(dataDir: string, ...args: string[]): Promise<CliRun> {
  return runCli(args, { env: { ...process.env, DATA_DIR: dataDir, DIWAN_PUBLIC_URL: PUBLIC_URL, DIWAN_LANG: '', ...db.env } });
}

describe('diwan users create', { timeout: 90_000 }, () => {
  let work: string;
  let dataDir: string;
  let companyId: string;

  beforeAll(async () => {
    db = await processDatabase();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-cli-users-'));
    dataDir = path.join(work, 'data');
    const host = await buildHost({ config: { dataDir }, logger: false });
    companyId = (await host.createCompany({ name: 'Acme Trading', apps: [] })).company.id;
    await host.close();
  });
  afterAll(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    await db.drop();
  });

  it('creates the first Owner and prints the one-time link once, as JSON; the link signs them in once', async () => {
    const res = await diwan(dataDir, 'users', 'create', '--email', 'Noura@Example.com', '--name', 'Noura Al-Harbi', '--company', companyId, '--json');
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(Object.keys(out).sort()).toEqual(['expiresAt', 'link', 'person']);
    expect(out.person).toMatchObject({ email: 'noura@example.com', name: 'Noura Al-Harbi', hasPassword: false });
    expect(out.link).toMatch(/^https:\/\/diwan\.example\.com\/signin#[0-9a-z]{40}$/);
    expect(Date.parse(out.expiresAt)).toBeGreaterThan(Date.now());

    const host = await buildHost({ config: { dataDir }, logger: false });
    try {
      const token = out.link.split('#')[1];
      const signIn = () => host.app.inject({ method: 'POST', url: '/api/v1/session/link', payload: { token, password: 'a long enough password' } });
      const first = await signIn();
      expect(first.statusCode, first.body).toBe(201);
      expect(first.json().data.companies).toEqual([expect.objectContaining({ id: companyId, role: 'Owner' })]);
      expect((await signIn()).statusCode).toBe(401);
      const audit = await host.storage.audit.list(companyId, { page: 1, pageSize: 50, resource: 'members' });
      expect(audit.rows).toEqual([expect.objectContaining({ actorType: 'cli', actorId: 'operator', action: 'create' })]);
    } finally {
      await host.close();
    }
  });

  it('adds a person who already has an account with the role asked, in text; never demotes the last Owner; refuses an unknown company and an unknown role', async () => {
    const second = await diwan(dataDir, 'users', 'create', '--email', 'sara@example.com', '--name', 'Sara', '--company', companyId, '--role', 'Owner', '--json');
    expect(second.code, second.stderr).toBe(0);
    const text = await diwan(dataDir, 'users', 'create', '--email', 'noura@example.com', '--name', 'Noura', '--company', companyId, '--role', 'Admin');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('already had an account, and is now Admin of Acme Trading');
    expect(text.stdout).toMatch(/\n {2}https:\/\/diwan\.example\.com\/signin#[0-9a-z]{40}\n/);

    // Sara is now the only Owner: a new link may not make her anything less (exit 1, nothing changed).
    const demote = await diwan(dataDir, 'users', 'create', '--email', 'sara@example.com', '--name', 'Sara', '--company', companyId, '--role', 'Viewer', '--json');
    expect(demote.code).toBe(1);
    expect(JSON.parse(demote.stdout).error).toMatchObject({ code: 'CONFLICT', details: [{ reason: 'last_owner' }] });

    const unknown = await diwan(dataDir, 'users', 'create', '--email', 'x@example.com', '--name', 'X', '--company', 'co_nope', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('NOT_FOUND');
    const role = await diwan(dataDir, 'users', 'create', '--email', 'x@example.com', '--name', 'X', '--company', companyId, '--role', 'King', '--json');
    expect(role.code).toBe(2);
    expect(JSON.parse(role.stdout).error.details[0]).toMatchObject({ pointer: '--role', rule: 'enum' });
  });
});
