// An idle host must sleep: with nothing due, the delivery loop's timer waits for the poll
// interval instead of firing again at once (a NaN delay once made it spin on every tick).
import { afterEach, expect, it } from 'vitest';
import type { Host } from '../core/host.ts';
import { buildHost } from './db.ts';
import { invoicingSources } from './webhook-helpers.ts';

let host: Host | undefined;
afterEach(async () => host?.close());

it('reports no due delivery as null, and an idle listening host uses almost no CPU', async () => {
  host = await buildHost({ dbFile: ':memory:', sources: invoicingSources() });
  await host.createCompany({ name: 'Idle', apps: ['invoicing'] });
  expect(await host.webhooks.deliveries.nextDue()).toBeNull();
  await host.app.listen({ port: 0, host: '127.0.0.1' });
  const before = process.cpuUsage();
  await new Promise((r) => setTimeout(r, 1000));
  const used = process.cpuUsage(before);
  // A spinning loop burned about 200 ms of CPU per second here; a sleeping one a few ms.
  expect((used.user + used.system) / 1000).toBeLessThan(100);
});
