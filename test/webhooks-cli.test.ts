// `diwan webhooks …` commands, run in-process on a throwaway host (main.ts registers the group).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { webhooks } from '../cli/commands/webhooks.ts';
import { CLI_ACTOR, type CommandContext } from '../cli/commands/command.ts';
import { createCompany, makeHost, type TestCompany } from './helpers.ts';

describe('diwan webhooks', () => {
  let host: Host;
  let co: TestCompany;
  beforeAll(async () => {
    host = await makeHost({ config: { webhooks: { ladder: [1], timeoutMs: 300, allowLoopback: true, allowPrivate: false, maxInFlightPerEndpoint: 2, rotationGraceSeconds: 60 } } });
    co = createCompany(host);
  });
  afterAll(() => host.close());

  const run = async (name: string, args: Record<string, string> = {}, opts: Record<string, string | boolean> = {}) => {
    const cmd = webhooks.commands.find((c) => c.name === name)!;
    const ctx: CommandContext = { host, args, opts: { company: co.company.id, json: true, ...opts }, lang: 'en', json: true, dataDir: '', actor: CLI_ACTOR };
    return cmd.run(ctx);
  };

  it('adds (secret printed once), lists, rotates, logs, retries and removes', async () => {
    const added = (await run('add', {}, { url: 'http://127.0.0.1:9/hook', topics: 'invoice.*, customer.created', description: 'ERP' })) as { data: { id: string; secret: string; topics: string[] }; text: string };
    expect(added.data.secret).toMatch(/^whsec_/);
    expect(added.data.topics).toEqual(['invoice.*', 'customer.created']);
    expect(added.text).toContain(added.data.secret);
    const listed = await run('list');
    expect(JSON.stringify(listed.data)).not.toContain(added.data.secret);
    expect((listed.data as { total: number }).total).toBe(1);
    const rotated = (await run('rotate', { endpointId: added.data.id })).data as { secret: string };
    expect(rotated.secret).not.toBe(added.data.secret);

    host.events.trigger(co.company.id, 'invoice.overdue', CLI_ACTOR);
    await host.webhooks.tick(); // port 9 on loopback refuses: a failed attempt
    const log = (await run('log', { endpointId: added.data.id }, { state: 'retrying' })).data as { total: number; data: { id: string }[] };
    expect(log.total).toBe(1);
    const retried = (await run('retry', { deliveryId: log.data[0].id })).data as { state: string };
    expect(retried.state).toBe('pending');
    await expect(run('retry', { deliveryId: 'dlv_nope' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(run('add', {}, { url: 'ftp://x', topics: 'nope.*' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });

    await run('remove', { endpointId: added.data.id });
    expect(((await run('list')).data as { total: number }).total).toBe(0);
    const actions = host.storage.sqlite.prepare("SELECT action FROM audit_log WHERE resource = 'webhook-endpoints' ORDER BY seq").pluck().all();
    expect(actions).toEqual(['create', 'rotate', 'retry', 'delete']);
  });
});
