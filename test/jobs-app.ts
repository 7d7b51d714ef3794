// A small app with a durable job, for the tests of apps' jobs (test/app-jobs.test.ts and its
// child process, test/jobs-child.ts): shipping a parcel enqueues `notify` (keyed by the
// parcel, so once per parcel), whose handler counts a delivery on the parcel and emits
// `parcels.parcel.notified`. The parcel says how the carrier behaves: `failTimes` (the first
// attempts write, then throw, so their writes must be undone), `workMs` (a slow carrier),
// `hangOnFirst` (the first attempt writes, prints `hanging <id>`, and never ends: its process
// is killed).
import type { Manifest } from '../manifests/manifest.schema.ts';
import type { AppSource } from '../core/apps/app-source.ts';
import { bi, writeApp } from './fixtures.ts';

export function parcelsManifest(): Manifest {
  return {
    id: 'parcels', version: '1.0.0', host: '^0.1.0',
    name: bi('Parcels', 'الطرود'), description: bi('Parcels whose carrier is told when they ship', 'طرود يُبلَّغ ناقلها عند شحنها'),
    strings: { en: { title: 'Parcels', 'state.draft': 'Draft', 'state.shipped': 'Shipped' }, ar: { title: 'الطرود', 'state.draft': 'مسودة', 'state.shipped': 'مشحون' } },
    documentTypes: [{
      name: 'parcel', resource: 'parcels', idPrefix: 'pcl', label: bi('Parcel', 'طرد'), labelPlural: bi('Parcels', 'الطرود'),
      fields: [
        { name: 'label', type: 'string', required: true, maxLength: 200, label: bi('Label', 'الملصق') },
        { name: 'deliveries', type: 'integer', minimum: 0, label: bi('Carrier notices', 'إشعارات الناقل') },
        { name: 'notice', type: 'string', maxLength: 200, label: bi('Last notice', 'آخر إشعار') },
        { name: 'failTimes', type: 'integer', minimum: 0, label: bi('Carrier failures', 'إخفاقات الناقل') },
        { name: 'workMs', type: 'integer', minimum: 0, label: bi('Carrier delay', 'تأخر الناقل') },
        { name: 'hangOnFirst', type: 'boolean', label: bi('Carrier hangs once', 'يتعطل الناقل مرة') },
      ],
      states: ['draft', 'shipped'], initialState: 'draft',
      transitions: [{ name: 'ship', label: bi('Ship', 'شحن'), from: ['draft'], to: 'shipped' }],
    }],
    eventFamilies: [{
      family: 'parcels', prefix: 'parcels', label: bi('Parcels', 'الطرود'),
      topics: [
        { topic: 'parcels.parcel.shipped', description: bi('A parcel shipped.', 'شُحن طرد.'), source: { on: 'transition', type: 'parcel', transition: 'ship' } },
        {
          topic: 'parcels.parcel.notified', description: bi('The carrier was told of a parcel.', 'أُبلغ الناقل بطرد.'),
          source: { on: 'operation', operation: 'job notify' },
          payload: { type: 'object', additionalProperties: false, required: ['parcelId', 'attempt'], properties: { parcelId: { type: 'string' }, attempt: { type: 'integer' } } },
          example: { parcelId: 'pcl_1', attempt: 1 },
        },
      ],
    }],
  } as Manifest;
}

export const PARCELS_SERVER = `
import { defineApp, route, AppError } from 'diwan/sdk';

const options = (p) => ({ parcelId: p.id, failTimes: p.failTimes ?? 0, workMs: p.workMs ?? 0, hangOnFirst: p.hangOnFirst === true });

export default defineApp({
  id: 'parcels',
  hooks: {
    parcel: {
      async afterTransition(doc, transition, ctx) {
        if (transition === 'ship') await ctx.jobs.enqueue('notify', options(doc), { key: 'notify:' + doc.id });
      },
    },
  },
  routes: [route({
    method: 'POST', url: '/parcels/:id/renotify', permission: 'parcels:update', summary: 'Enqueue the carrier notice again (same key)',
    schema: {
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
      body: { type: 'object', additionalProperties: false, properties: { fail: { type: 'boolean' }, key: { type: 'string' } } },
      response: { 200: { type: 'object', additionalProperties: true } },
    },
    async handler(req, ctx) {
      const p = await ctx.docs('parcel').get(req.params.id);
      await ctx.docs('parcel').update(p.id, { notice: 'renotify asked' });
      const job = await ctx.jobs.enqueue('notify', options(p), { key: req.body.key ?? 'notify:' + p.id });
      if (req.body.fail) throw new AppError('CONFLICT', [{ reason: 'told_to_fail' }], { reason: 'told to fail' });
      return { body: { data: job } };
    },
  })],
  jobs: {
    async notify(payload, ctx) {
      const parcels = ctx.docs('parcel');
      const p = await parcels.get(payload.parcelId);
      const count = async (notice) => parcels.update(p.id, { deliveries: ((await parcels.get(p.id)).deliveries ?? 0) + 1, notice });
      if (payload.hangOnFirst && ctx.job.attempt === 1) {
        await count('hanging');
        process.stdout.write('hanging ' + p.id + '\\n');
        await new Promise(() => {});
      }
      if (ctx.job.attempt <= payload.failTimes) {
        await count('failed');
        throw new Error('the carrier is unavailable (attempt ' + ctx.job.attempt + ')');
      }
      if (payload.workMs) await new Promise((r) => setTimeout(r, payload.workMs));
      await count('sent on attempt ' + ctx.job.attempt);
      await ctx.events.emit('parcels.parcel.notified', { parcelId: p.id, attempt: ctx.job.attempt });
    },
  },
});
`;

export function parcelsSource(root: string): AppSource {
  return writeApp(root, parcelsManifest(), PARCELS_SERVER);
}

/** A child process (test/jobs-child.ts or another script) whose stdout lines the test waits for. */
export interface Child {
  proc: import('node:child_process').ChildProcess;
  lines: string[];
  /** Resolves once a line matches (rejects if the child exits first or `ms` pass). */
  waitFor(match: RegExp, ms?: number): Promise<string>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

export async function spawnChild(script: string, args: string[], env: Record<string, string> = {}): Promise<Child> {
  const { spawn } = await import('node:child_process');
  const path = await import('node:path');
  const { REPO_ROOT } = await import('../core/apps/app-source.ts');
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, script), ...args], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  let buf = '';
  const waiters = new Set<() => void>();
  let exited = false;
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    waiters.forEach((w) => w());
  });
  const exit = new Promise<void>((r) => proc.once('exit', () => ((exited = true), waiters.forEach((w) => w()), r())));
  return {
    proc, lines,
    waitFor: (match, ms = 30_000) => new Promise((resolve, reject) => {
      const until = Date.now() + ms;
      const look = () => {
        const line = lines.find((l) => match.test(l));
        if (line !== undefined) return (waiters.delete(look), clearTimeout(t), resolve(line));
        if (exited || Date.now() > until) return (waiters.delete(look), clearTimeout(t), reject(new Error(`the child never printed ${match}: ${lines.join(' | ')}`)));
      };
      const t = setTimeout(look, ms + 10);
      waiters.add(look);
      look();
    }),
    async kill() {
      if (!exited) proc.kill('SIGKILL');
      await exit;
    },
  };
}
