// Property-based fuzz of the whole API from its own OpenAPI document (GET /api/v1/openapi.json).
// For every operation, fast-check draws requests: valid ones from the request schemas, and
// mutated ones (bodies with wrong types, missing or unknown fields, numbers out of range, long
// strings, deep nesting; malformed JSON; wrong or missing content types; bodies where none is
// taken; bad path parameters; odd queries; missing, unknown, revoked, expired, other-company and
// too-weak keys; odd headers; HEAD; a sibling operation first). Every answer must be:
// - no 5xx;
// - an error exactly `{ error: { code, message, details[] } }` with a code of the error table;
// - a status, and a code at that status, that the document declares for the operation;
// - a success that validates against the declared response schema (ajv, with formats);
// - what the mutation is known to provoke, where that is certain (401 for a revoked key, ...).
// Methods the document does not declare at a path answer 405 with `Allow`.
//
// Bodies also carry lone surrogates (`"\udfff"`, half of a UTF-16 pair) in their strings and keys,
// and queries their would-be bytes: SQLite stores such text, PostgreSQL refuses it, so the API
// refuses it first (VALIDATION_ERROR). The file runs on both databases (vitest.config.ts's
// `postgres` project runs it again with every host on PostgreSQL).
//
// Seeded and reproducible: FUZZ_SEED (base seed; each operation derives its own) and FUZZ_RUNS
// (cases per operation; 40 on SQLite, 20 on PostgreSQL). A failure names the operation and the FUZZ_SEED to rerun it with, and
// fast-check prints the shrunk case with its own seed and path. More cases: bench/fuzz.ts.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FuzzWorld } from './fuzz/world.ts';
import fc from 'fast-check';
import { fuzzOperation, fuzzUnknownMethods, opSeed } from './fuzz/runner.ts';
import { CaseBuilder } from './fuzz/requests.ts';
import { loneSurrogateMutations } from './fuzz/mutate.ts';
import { FUZZ_COMPANY_APPS } from './fuzz/apps.ts';
import type { Schema } from './fuzz/schema-arbitrary.ts';
import { probes, sendProbe } from './fuzz/node-level.ts';
import type { Host } from '../core/host.ts';
import { createCompany, makeHost, type TestCompany } from './helpers.ts';
import { onPostgres } from './db.ts';

// Half the cases on PostgreSQL, where each costs about twice as much: what differs there is what
// the database takes, and the lone-surrogate sweep below tries every string on both in full.
const RUNS = Number(process.env.FUZZ_RUNS ?? (onPostgres() ? 20 : 40));
const SEED = Number(process.env.FUZZ_SEED ?? 0x0d1_0a9);

// The operations are known only from the served document, before the tests are declared.
const world = await FuzzWorld.create();
afterAll(() => world.close());

describe(`OpenAPI fuzz: every operation (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS})`, () => {
  it('covers every operation of the document, the app routes of three apps included', () => {
    expect(world.operations.length).toBeGreaterThan(40);
    for (const tag of ['core', 'invoicing', 'widgets', 'gizmos']) {
      expect(world.operations.some((o) => o.id.startsWith(`${tag}.`)), tag).toBe(true);
    }
  });

  for (const op of world.operations) {
    it(`${op.method} ${op.path}`, async () => {
      await fuzzOperation(world, op, { numRuns: RUNS, seed: opSeed(SEED, op.id), baseSeed: SEED, assert: true });
    });
  }

  it('methods the document does not declare answer 405 METHOD_NOT_ALLOWED with Allow', async () => {
    await fuzzUnknownMethods(world, { numRuns: RUNS * 4, seed: SEED, assert: true });
  });

  // Every string of a valid body of every operation, and a new key in every object, once with a
  // lone surrogate: SQLite would store it, PostgreSQL would answer 500 (13 of 26,051 fuzzed
  // requests did, before the check). Not left to chance: each place is tried.
  it('a lone surrogate in any string of any body, or in a key, answers 400 VALIDATION_ERROR naming it', async () => {
    const withBody = world.operations.filter((o) => o.op.requestBody?.content['application/json']?.schema !== undefined && (o.op.security ?? []).length > 0);
    expect(withBody.length).toBeGreaterThan(15);
    const t = await world.freshTenant(SEED);
    const failures: string[] = [];
    let sent = 0;
    for (const op of withBody) {
      const appId = op.id.split('.')[0];
      const code = appId !== 'core' && !FUZZ_COMPANY_APPS.includes(appId) ? 'APP_NOT_ENABLED' : 'VALIDATION_ERROR';
      const [step] = fc.sample(new CaseBuilder(world, t, op).validStep({}), { seed: opSeed(SEED, op.id), numRuns: 1 });
      const schema = op.op.requestBody!.content['application/json']!.schema as Schema;
      for (const [lone, upper] of [['a\udfffb', false], ['\ud800', true]] as const) {
        for (const m of loneSurrogateMutations(JSON.parse(step.payload!), schema, world.genContext(t), lone, upper)) {
          const ans = await world.inject({ ...step, payload: m.payload });
          sent++;
          const where = `${op.method} ${op.path} ${m.label}`;
          const violations = world.oracle.check(op, ans, { codes: [code] });
          if (violations.length) failures.push(`${where}: ${violations.map((v) => v.message).join('; ')}`);
          else if (code === 'VALIDATION_ERROR') {
            const details = JSON.parse(ans.body).error.details as { pointer: string; rule: string }[];
            if (!details.some((d) => d.pointer === m.pointer && d.rule === 'surrogate')) failures.push(`${where}: details do not name ${m.pointer}: ${JSON.stringify(details)}`);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(100);
    expect(failures).toEqual([]);
  });

  it('a body nested far deeper than any schema goes answers 4xx in the envelope, not 500', async () => {
    const t = await world.freshTenant(SEED);
    const op = world.operations.find((o) => o.id === 'core.sendTestEvent')!;
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const ans = await world.inject({
      method: 'POST',
      url: op.path,
      headers: { authorization: `Bearer ${t.keys.Owner}`, 'x-company-id': t.companyId, 'content-type': 'application/json' },
      payload: `{"topic":"invoice.created","data":${deep}}`,
    });
    expect(world.oracle.check(op, ans)).toEqual([]);
    expect(ans.status).toBeLessThan(500);
  });
});

describe('OpenAPI fuzz: below HTTP (raw sockets)', () => {
  let host: Host;
  let co: TestCompany;
  let port: number;
  /** How long a probe may go unanswered; a slow client is held up to this long. */
  const WAIT_MS = Number(process.env.FUZZ_SLOW_MS ?? 1500);

  beforeAll(async () => {
    // Time-outs shorter than the wait, so a client that stops sending is answered within it.
    host = await makeHost({ config: { headersTimeoutMs: WAIT_MS - 500, requestTimeoutMs: WAIT_MS - 500 } });
    co = await createCompany(host);
    await host.app.listen({ port: 0, host: '127.0.0.1' });
    port = (host.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => host?.close());

  const names = probes({ companyId: '', key: '', path: '/', waitMs: 0 }).map((p) => p.name);
  for (const name of names) {
    it(`${name}: answered in the envelope, with a code of the error table, within ${WAIT_MS} ms`, async () => {
      const probe = probes({ companyId: co.company.id, key: co.keys.Owner, path: '/api/v1/customers', waitMs: WAIT_MS * 2 }).find((p) => p.name === name)!;
      const r = await sendProbe(port, probe, WAIT_MS);
      expect(r.timedOut, 'no answer in time').toBe(false);
      expect(r.silent, `closed without an answer: ${r.raw.slice(0, 200)}`).toBe(false);
      expect(r.answer!.status).toBeLessThan(500);
      expect(world.oracle.checkEnvelope(r.answer!).violations).toEqual([]);
    });
  }
});
