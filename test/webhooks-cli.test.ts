// `diwan webhooks …` commands, run in-process on a throwaway host (main.ts registers the group).
// The host stands for both what a command may ask for: the light services and the whole host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import type { Company } from '../core/tenancy/companies.ts';
import { webhooks } from '../cli/commands/webhooks.ts';
import { CLI_ACTOR, type CommandContext } from '../cli/commands/command.ts';
import { makeHost } from './helpers.ts';

describe('diwan webhooks', () => {
  let host: Host;
  let company: Company;
  beforeAll(async () => {
    host = await makeHost({ config: { webhooks: { ladder: [1], timeoutMs: 300, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 2, rotationGraceSeconds: 60, jitter: 0 } } });
    ({ company } = await host.createCompany({ name: 'Test Co', currency: 'SAR', apps: ['invoicing'] }));
  });
  afterAll(() => host.close());

  const run = async (name: string, args: Record<string, string> = {}, opts: Record<string, string | boolean> = {}) => {
    const cmd = webhooks.commands.find((c) => c.name === name)!;
    const ctx: CommandContext = {
      services: async () => host,
      host: async () => host,
      args, opts: { company: company.id, json: true, ...opts }, lang: 'en', json: true, dataDir: '', actor: CLI_ACTOR,
    };
    return cmd.run(ctx);
  };

  it('adds (secret printed once), lists, rotates, logs, retries and removes', async () => {
    const added = (await run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*, customer.created', description: 'ERP' })) as { data: { id: string; secret: string; topics: string[]; warnings: unknown[] }; text: string };
    expect(added.data.secret).toMatch(/^whsec_/);
    expect(added.data.topics).toEqual(['invoice.*', 'customer.created']);
    expect(added.data.warnings).toEqual([]);
    expect(added.text).toContain(added.data.secret);
    const listed = await run('list');
    expect(JSON.stringify(listed.data)).not.toContain(added.data.secret);
    expect((listed.data as { total: number }).total).toBe(1);
    const rotated = (await run('rotate', { endpointId: added.data.id })).data as { secret: string };
    expect(rotated.secret).not.toBe(added.data.secret);

    await host.catalogue.trigger(company.id, 'invoice.overdue', CLI_ACTOR);
    await host.webhooks.tick(); // port 9 on loopback refuses: a failed attempt
    // The list shows each endpoint's health: this one has failed since that attempt.
    const listText = (await run('list', {}, { json: false })).text!;
    expect(listText).toContain('HEALTH');
    expect(listText).toMatch(/failing since \d{4}-/);
    const log = (await run('log', { endpointId: added.data.id }, { state: 'retrying' })).data as { total: number; data: { id: string }[] };
    expect(log.total).toBe(1);
    const retried = (await run('retry', { deliveryId: log.data[0].id })).data as { state: string };
    expect(retried.state).toBe('pending');
    await expect(run('retry', { deliveryId: 'dlv_nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(run('add', {}, { url: 'ftp://x', topics: 'nope.*' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });

    await run('remove', { endpointId: added.data.id });
    expect(((await run('list')).data as { total: number }).total).toBe(0);
    const actions = (await host.storage.db.all<{ action: string }>("SELECT action FROM audit_log WHERE resource = 'webhook-endpoints' ORDER BY seq")).map((r) => r.action);
    expect(actions).toEqual(['create', 'rotate', 'retry', 'delete']);
  });

  it('shows every attempt of one delivery: status, duration, failure, response excerpt (issue 8, item 16)', async () => {
    const ep = ((await run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*' })) as { data: { id: string } }).data;
    await host.catalogue.trigger(company.id, 'invoice.sent', CLI_ACTOR);
    await host.webhooks.tick();
    const log = (await run('log', { endpointId: ep.id })).data as { data: { id: string; attemptCount: number }[] };
    expect(log.data).toHaveLength(1);
    expect(log.data[0].attemptCount).toBe(1);

    // Failed once, pending its retry: `--state failed` lists it, and its STATE column says why (issue 29).
    const failed = await run('log', { endpointId: ep.id }, { state: 'failed', json: false });
    expect(failed.text).toMatch(new RegExp(`^${log.data[0].id}\\s+invoice\\.sent\\s+retrying\\s`, 'm'));
    expect(failed.text).not.toContain('pending');
    expect(((await run('log', { endpointId: ep.id }, { state: 'failed' })).data as { data: { state: string }[] }).data[0].state, 'the JSON keeps the stored state').toBe('pending');

    const one = await run('log', { endpointId: ep.id }, { delivery: log.data[0].id });
    const d = one.data as { id: string; topic: string; attempts: { attempt: number; at: string; durationMs: number; status: number | null; failure: string | null; responseExcerpt: string; responseBytes: number }[] };
    expect(d).toMatchObject({ id: log.data[0].id, endpointId: ep.id, topic: 'invoice.sent', attemptCount: 1 });
    expect(d.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status: null, failure: 'connection_refused', responseExcerpt: '', responseBytes: 0 }),
    ]);
    expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(one.text).toContain('ATTEMPT');
    expect(one.text).toMatch(/^state\s+retrying$/m);
    expect(one.text).toContain('connection_refused');

    await expect(run('log', { endpointId: ep.id }, { delivery: 'dlv_nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await run('remove', { endpointId: ep.id });
  });

  it('add --headers (JSON) and --asymmetric: shown on the endpoint; bad headers refused, each one named', async () => {
    const added = (await run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*', headers: '{"X-Tenant":"acme"}', asymmetric: true, json: false })) as {
      data: { id: string; headers: Record<string, string>; publicKey: string | null };
      text: string;
    };
    expect(added.data.headers).toEqual({ 'x-tenant': 'acme' });
    expect(added.data.publicKey).toMatch(/^whpk_/);
    expect(added.text).toContain('x-tenant: acme');
    expect(added.text).toContain(added.data.publicKey!);
    const refused = run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*', headers: '{"connection":"close","webhook-id":"x"}' });
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ header: 'connection' }), expect.objectContaining({ header: 'webhook-id' })] });
    await expect(run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*', headers: 'x-tenant: acme' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await run('remove', { endpointId: added.data.id });
  });
});
