// What issuing an invoice costs (issue 27): the whole `POST /invoices/{id}/send` of a company
// onboarded with ZATCA, in process (the counter and number, the PIH read, the XML, the hash, the
// XAdES stamp and the QR with tags 1–9, all in the issuing write), against a bare ECDSA
// secp256k1 sign of the same bytes (the invoice hash each send signed) in the same run. Beside
// them: the same send by a company not onboarded (tags 1–5, no stamp: what the stamp adds), and
// the zatca module's `sign()` alone on one invoice's XML (hash, stamp, QR: what the module
// costs, without the host) and its invoiceHash() alone. One host, on in-memory SQLite, both companies in it; the company's
// account is kept as onboarding keeps it (a key, a certificate from a local CA, sealed). Rounds
// alternate the order of the five cases; medians of the rounds are reported.
//
//   npx tsx bench/issuing.ts [--rounds 7] [--sends 200]
import { createPrivateKey, createSign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildHost, type Host } from '../core/host.ts';
import { validManifest } from '../core/apps/app-source.ts';
import { SYSTEM_ACTOR } from '../core/kernel/actor.ts';
import type { Company } from '../core/tenancy/companies.ts';
import { invoiceHash, issueCertificate, makeKeyAndCsr, makeTestCa, sign } from '../apps-installed/invoicing/zatca/index.ts';
import { saveZatcaAccount } from '../apps-installed/invoicing/zatca-account.ts';
import { arg, machineLine, median, REPO_ROOT } from './lib/util.ts';

const ROUNDS = arg('rounds', 7);
const SENDS = arg('sends', 200);

const PROFILE = {
  legalName: { en: 'Riyadh Trading Co.', ar: 'شركة الرياض للتجارة' },
  vatNumber: '310122393500003',
  crNumber: '1010010000',
  address: { buildingNumber: '1234', street: 'King Fahd Road', district: 'Al Olaya', city: 'Riyadh', postalCode: '12214', country: 'SA' },
};

interface Seller {
  company: Company;
  headers: Record<string, string>;
  customerId: string;
}

async function seller(host: Host, name: string): Promise<Seller> {
  const { company } = await host.createCompany({ name, currency: 'SAR', apps: ['invoicing'] });
  const { key } = await host.keys.create({ companyId: company.id, actor: { type: 'cli', id: 'bench' }, appId: 'core' }, { role: 'Owner', scopes: ['*'] });
  const headers = { authorization: `Bearer ${key}`, 'x-company-id': company.id, 'content-type': 'application/json' };
  const call = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
    const res = await host.app.inject({ method, url, headers, payload: JSON.stringify(body) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return res.json().data;
  };
  await call('PATCH', '/api/v1/company', PROFILE);
  const customer = await call('POST', '/api/v1/customers', { name: 'Walk-in' });
  return { company: (await host.companies.get(company.id))!, headers, customerId: customer.id };
}

/** `n` drafts of the seller (made outside the timing). */
async function drafts(host: Host, s: Seller, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await host.app.inject({
      method: 'POST', url: '/api/v1/invoices', headers: s.headers,
      payload: JSON.stringify({ customerId: s.customerId, date: '2026-03-01', dueDate: '2026-03-31', lines: [{ description: 'Office chair', quantity: 2, unitPrice: 450 + i }, { description: 'Delivery', quantity: 1, unitPrice: 35 }] }),
    });
    ids.push(res.json().data.id);
  }
  return ids;
}

interface Timing {
  /** µs of wall time and of CPU per operation. */
  wall: number;
  cpu: number;
}

async function timed(n: number, fn: (i: number) => unknown): Promise<Timing> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(i);
  const c = process.cpuUsage(c0);
  return { wall: ((performance.now() - t0) * 1000) / n, cpu: (c.user + c.system) / n };
}

/** Sends every draft; answers the timing and the hashes the sends signed. */
async function sends(host: Host, s: Seller, ids: string[], stamped: boolean): Promise<Timing & { hashes: string[] }> {
  const hashes: string[] = [];
  const t = await timed(ids.length, async (i) => {
    const res = await host.app.inject({ method: 'POST', url: `/api/v1/invoices/${ids[i]}/send`, headers: s.headers, payload: '{}' });
    if (res.statusCode !== 200) throw new Error(`send: ${res.statusCode} ${res.body.slice(0, 300)}`);
    const d = res.json().data;
    if (stamped !== (typeof d.signatureValue === 'string')) throw new Error(`send answered ${stamped ? 'no stamp' : 'a stamp'}`);
    hashes.push(d.hash);
  });
  return { ...t, hashes };
}

const manifest = validManifest(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests', 'invoicing.json'), 'utf8')));
const host = await buildHost({ dbFile: ':memory:', sources: [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', 'invoicing'), origin: 'first-party' }], logger: false, config: { rateLimitPerMinute: 0 } });
try {
  const onboarded = await seller(host, 'Onboarded');
  const plain = await seller(host, 'Not onboarded');
  // The account onboarding keeps: a secp256k1 key, the certificate issued for its CSR, a CSID.
  const ca = makeTestCa();
  const { privateKeyPem, csrPem } = makeKeyAndCsr({
    environment: 'simulation', commonName: 'Diwan-bench', organizationName: PROFILE.legalName.en, organizationUnit: 'Riyadh', solutionName: 'Diwan', model: 'invoicing',
    deviceSerial: onboarded.company.id, vatNumber: PROFILE.vatNumber, invoiceType: '1100', registeredAddress: '1234 King Fahd Road', businessCategory: 'Trade',
  });
  const certificatePem = issueCertificate(csrPem, ca);
  const ctx = host.runtime.contextFor('invoicing', { company: onboarded.company, actor: SYSTEM_ACTOR, lang: 'en', requestId: null });
  await saveZatcaAccount(ctx, {
    gateway: 'simulation', baseUrl: 'http://127.0.0.1:9', certificatePem, privateKeyPem,
    credentials: { binarySecurityToken: 'bench', secret: 'bench' }, onboardedAt: new Date().toISOString(),
  });
  const bareKey = createPrivateKey(privateKeyPem);

  // One issued, unstamped invoice's XML: what `sign()` alone stamps.
  const [first] = await drafts(host, plain, 1);
  await sends(host, plain, [first], false);
  const xml = (await host.app.inject({ method: 'GET', url: `/api/v1/invoices/${first}/xml`, headers: plain.headers })).body;
  const signingTime = new Date();

  type Case = 'send' | 'sendUnstamped' | 'module' | 'hash' | 'bare';
  const cases: Case[] = ['send', 'sendUnstamped', 'module', 'hash', 'bare'];
  const runs: Record<Case, Timing[]> = { send: [], sendUnstamped: [], module: [], hash: [], bare: [] };
  let hashes: string[] = [];
  const run: Record<Case, () => Promise<Timing>> = {
    send: async () => {
      const r = await sends(host, onboarded, await drafts(host, onboarded, SENDS), true);
      hashes = r.hashes;
      return r;
    },
    sendUnstamped: async () => sends(host, plain, await drafts(host, plain, SENDS), false),
    module: () => timed(SENDS, () => sign(xml, { privateKeyPem, certificatePem, signingTime })),
    hash: () => timed(SENDS, () => invoiceHash(xml)),
    // The same bytes the sends signed: each invoice's hash (32 bytes), ECDSA secp256k1 with SHA-256, the key already parsed.
    bare: () => timed(SENDS, (i) => createSign('sha256').update(Buffer.from(hashes[i % hashes.length], 'base64')).sign(bareKey)),
  };
  // Warm-up: JIT, the validators, the lazily loaded e-invoice code.
  for (const k of cases) await run[k]();
  for (let r = 0; r < ROUNDS; r++) {
    const order = cases.map((_, i) => cases[(i + r) % cases.length]);
    // `bare` signs the hashes of this round's `send`: it runs after it.
    if (order.indexOf('bare') < order.indexOf('send')) order.push(order.splice(order.indexOf('bare'), 1)[0]);
    for (const k of order) runs[k].push(await run[k]());
  }
  const med = (k: Case, f: keyof Timing) => median(runs[k].map((t) => t[f]));
  const per = (k: Case, base: Case, f: keyof Timing) => median(runs[k].map((t, i) => t[f] / runs[base][i][f]));
  console.log(machineLine());
  console.log(`issuing, ${ROUNDS} rounds × ${SENDS} (medians; per operation, wall / CPU):`);
  const label: Record<Case, string> = {
    send: 'send, onboarded (number, hash, stamp, QR 1–9)',
    sendUnstamped: 'send, not onboarded (number, hash, QR 1–5)',
    module: 'zatca sign() alone (hash, stamp, QR)',
    hash: 'zatca invoiceHash() alone (C14N, SHA-256)',
    bare: 'bare ECDSA secp256k1 sign of the hash',
  };
  for (const k of cases) console.log(`  ${label[k].padEnd(48)} ${med(k, 'wall').toFixed(0).padStart(6)} µs / ${med(k, 'cpu').toFixed(0).padStart(6)} µs`);
  console.log('== summary');
  console.log(`issuing: onboarded send ${med('send', 'wall').toFixed(0)} µs (${med('send', 'cpu').toFixed(0)} µs CPU) = ${per('send', 'bare', 'wall').toFixed(1)}× a bare ECDSA sign (${med('bare', 'wall').toFixed(0)} µs; CPU ${per('send', 'bare', 'cpu').toFixed(1)}×)`);
  const more = (f: keyof Timing) => median(runs.send.map((t, i) => t[f] - runs.sendUnstamped[i][f]));
  console.log(`  stamp's share: onboarded / not onboarded send ${per('send', 'sendUnstamped', 'wall').toFixed(2)}× (+${more('wall').toFixed(0)} µs; CPU ${per('send', 'sendUnstamped', 'cpu').toFixed(2)}×, +${more('cpu').toFixed(0)} µs)`);
  console.log(`  sign() alone ${per('module', 'bare', 'wall').toFixed(1)}× the bare sign (CPU ${per('module', 'bare', 'cpu').toFixed(1)}×), of which invoiceHash() ${per('hash', 'bare', 'wall').toFixed(1)}× (CPU ${per('hash', 'bare', 'cpu').toFixed(1)}×)`);
  console.log(`  rounds, send / bare: ${runs.send.map((t, i) => `${(t.wall / runs.bare[i].wall).toFixed(1)} (${t.wall.toFixed(0)}/${runs.bare[i].wall.toFixed(0)} µs)`).join(' ')}`);
} finally {
  await host.close();
}
