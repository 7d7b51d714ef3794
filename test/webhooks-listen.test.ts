// `diwan listen` as a developer runs it (`node cli/bin.js listen …` in a child process) against a
// host on a real port and a loopback receiver: it prints a per-session secret once, forwards
// each event signed exactly as deliveries are (the SDK's verifier accepts it with that secret),
// prints one line per event with the receiver's answer, reconnects and resumes after the host
// restarts, stops on Ctrl-C (and the server drops its reader), and refuses a bad key with the
// API's error.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { verifySignature, verifyWebhook } from '../sdk/verify-signature.ts';
import { client, createCompany, createCustomer, makeHost, receiver, status, until, type Receiver, type TestCompany } from './webhooks-kit.ts';

const BIN = path.resolve(import.meta.dirname, '../cli/bin.js');

interface Cli {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  stderr: () => string;
  waitForLine(match: (line: string) => boolean, ms?: number): Promise<string>;
  exited: Promise<number | null>;
}

function diwanListen(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [BIN, 'listen', ...args], { env: { ...process.env, DIWAN_LANG: '', ...env } });
  const lines: string[] = [];
  let partial = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    partial += c;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => err,
    async waitForLine(match, ms = 15_000) {
      await until(() => lines.some(match), ms, `a line from diwan listen (stdout so far: ${JSON.stringify(lines)}, stderr: ${err})`);
      return lines.find(match)!;
    },
    exited,
  };
}

describe('diwan listen', () => {
  let dir: string;
  let host: Host;
  let co: TestCompany;
  let port: number;
  let r: Receiver;
  const children: ChildProcessWithoutNullStreams[] = [];
  /** Requests to the host running now (it restarts in the first test). */
  const as = (role: 'Owner' | 'Admin' = 'Owner') => client(host, co.keys[role], co.company.id);

  const start = async () => {
    const h = await makeHost({ dbFile: path.join(dir, 'diwan.db'), config: { dataDir: dir } });
    await h.app.listen({ port, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
    return h;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-listen-'));
    port = 0;
    host = await start();
    co = await createCompany(host);
    r = await receiver();
  });

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await host?.close();
    await r?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('forwards each event signed with the session secret it prints, one line per event with the answer, and resumes after a restart', async () => {
    const cli = diwanListen(['--forward-to', r.url, '--company', co.company.id, '--url', `http://127.0.0.1:${port}`, '--topics', 'customer.*'], { DIWAN_KEY: co.keys.Admin });
    children.push(cli.child);
    const secretLine = await cli.waitForLine((l) => l.includes('signing secret'));
    const secret = /(whsec_[A-Za-z0-9+/]{43}=)/.exec(secretLine)![1];
    expect(cli.lines.filter((l) => l.includes(secret))).toHaveLength(1);
    expect(cli.lines[0]).toContain(`Forwarding the events of ${co.company.id} (customer.*)`);
    await until(() => host.streams.size === 1, 5000, 'the CLI holding a stream');

    const customer = await createCustomer(as(), 'Listened');
    const [got] = await r.waitFor(1);
    expect(got.body).toMatchObject({ type: 'customer.created', companyId: co.company.id, data: { id: customer.id, name: 'Listened' } });
    // Signed exactly as deliveries are: the SDK's verifier accepts it with the printed secret.
    expect(verifySignature(got.raw, got.headers['x-service-signature'] as string, secret)).toMatchObject({ ok: true });
    expect(verifySignature(got.raw, got.headers['x-service-signature'] as string, 'whsec_another')).toMatchObject({ ok: false, reason: 'mismatch' });
    // The Standard Webhooks headers too, as deliveries carry them.
    expect(got.headers['webhook-id']).toBe(got.body.id);
    expect(verifyWebhook(got.raw, got.headers as Record<string, string>, secret)).toMatchObject({ ok: true });
    expect(verifyWebhook(got.raw, got.headers as Record<string, string>, 'whsec_another')).toMatchObject({ ok: false, reason: 'mismatch' });
    expect(got.headers['x-diwan-event-id']).toBe(got.body.id);
    expect(got.headers['x-diwan-delivery-id']).toMatch(/^dlv_/);
    expect(got.headers['content-type']).toBe('application/json');
    // The same bytes the events API answers for it.
    expect(got.raw).toBe((await as('Admin').get(`/api/v1/events/${got.body.id}`)).body.slice('{"data":'.length, -1));
    const line = await cli.waitForLine((l) => l.includes(got.body.id));
    expect(line).toMatch(new RegExp(`customer\\.created  ${got.body.id}  → 200 \\[\\d+ ms\\]$`));

    r.behave(status(500));
    await createCustomer(as(), 'Refused');
    await r.waitFor(2);
    expect(await cli.waitForLine((l) => l.includes(r.got[1].body.id))).toContain('→ 500');
    r.behave((_req, res) => res.writeHead(200).end());

    // The host restarts on the same port: the CLI reconnects and resumes after its last event.
    await host.close();
    await cli.waitForLine((l) => l.includes('host_closing'));
    host = await start();
    await createCustomer(as(), 'While away');
    await r.waitFor(3, 15_000);
    expect(r.got[2].body.data.name).toBe('While away');
    await cli.waitForLine((l) => l.includes('Reconnected'));
    await createCustomer(as(), 'After');
    await r.waitFor(4);
    expect(r.got.map((g) => g.body.data.name)).toEqual(['Listened', 'Refused', 'While away', 'After']);

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.lines.at(-1)).toBe('Stopped.');
    await until(() => host.streams.size === 0, 3000, 'the server dropping the reader');
  });

  it('prints one JSON object per line with --json, and reports a receiver that cannot be reached', async () => {
    const gone = await receiver();
    const url = gone.url;
    await gone.close();
    const cli = diwanListen(['--forward-to', url, '--company', co.company.id, '--key', co.keys.Owner, '--url', `http://127.0.0.1:${port}`, '--json']);
    children.push(cli.child);
    const ready = JSON.parse(await cli.waitForLine((l) => l.includes('"ready"')));
    expect(ready).toMatchObject({ type: 'ready', company: co.company.id, topics: '*', forwardTo: url });
    expect(ready.secret).toMatch(/^whsec_/);
    await until(() => host.streams.size === 1, 5000, 'the CLI holding a stream');
    await createCustomer(as(), 'Nobody home');
    const ev = JSON.parse(await cli.waitForLine((l) => l.includes('"event"')));
    expect(ev).toMatchObject({ type: 'event', topic: 'customer.created', ok: false, status: null, failure: 'connection_refused' });
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it("refuses a key that cannot read webhooks with the API's error, and exits 1", async () => {
    const cli = diwanListen(['--forward-to', r.url, '--company', co.company.id, '--key', co.keys.Viewer, '--url', `http://127.0.0.1:${port}`]);
    children.push(cli.child);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('error FORBIDDEN');
    expect(cli.stderr()).toContain('webhooks:read');
  });
});
