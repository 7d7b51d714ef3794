// Issue 10, end to end: every event of the spec's catalogue (test/data/event-catalogue.json: the
// 517 of the app families and the core `apps` family's 4) is driven through its real source in
// one company that has every first-party app installed, and seen in the outbox as a real
// (`test: false`) event whose `data` validates against the payload schema the catalogue serves,
// carries the document's id and has the example's top-level shape.
//
// The driver is generic: it reads each topic's source from the manifests and
//   - builds create bodies from the type's fields (a referenced document is created first,
//     recursively, across apps),
//   - reaches a transition's `from` state by walking transitions from the initial state,
//   - changes a field from a value for which the source's `when` does not hold to one for
//     which it does,
//   - satisfies a schedule (date field, state) and advances the clock for `scheduler.tick()`,
// and only the few `operation` sources have a driver of their own (OPERATIONS below).
// Everything goes through `host.app.inject` with an Owner key.
import fs from 'node:fs';
import os from 'node:os';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildHost as realBuildHost, type Host } from '../core/host.ts';
import { buildHost, dropTestDatabase, onPostgres, testDatabaseUrl } from './db.ts';
import { ManualClock } from '../core/kernel/clock.ts';
import { CLI_ACTOR } from '../core/kernel/actor.ts';
import { REPO_ROOT, validManifest, type AppSource } from '../core/apps/app-source.ts';
import { isReadOnly } from '../core/apps/doc-schemas.ts';
import { startZatcaStandIn, type Answer, type StandIn } from './zatca-stand-in.ts';
import { OFFICE_SUPPLIES } from './zatca-company.ts';
import type { ConditionDecl, DocumentTypeDecl, FieldDecl, Manifest, SourceDecl, TopicDecl, WhenDecl } from '../manifests/manifest.schema.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const DAY = 86_400_000;
const START = Date.parse('2026-01-15T09:00:00.000Z');

type Json = Record<string, unknown>;
type Doc = Json & { id: string; state?: string };
type Field = FieldDecl | NonNullable<FieldDecl['fields']>[number];
type Transition = NonNullable<DocumentTypeDecl['transitions']>[number];

interface SpecFamily {
  family: string;
  prefix: string;
  listed: string[];
  further: number;
}
const SPEC = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test/data/event-catalogue.json'), 'utf8')) as { events: number; catalogue: SpecFamily[] };

interface CatalogueTopic {
  topic: string;
  source: SourceDecl;
  payload: Json;
  example: Json;
  owner: string;
}

// ---- the host and a client ----------------------------------------------------------------

let host: Host;
let clock: ManualClock;
let companyId: string;
let headers: Record<string, string>;
let manifests: Map<string, Manifest>;
let catalogue: Map<string, CatalogueTopic>;
/** `METHOD /api/v1/...` route templates answered so far, with the statuses seen. */
const answered = new Map<string, number[]>();

interface Res {
  status: number;
  body: Json;
  text: string;
}

async function call(method: string, url: string, body?: unknown, template?: string): Promise<Res> {
  const res = await host.app.inject({ method: method as 'GET', url, headers, ...(body !== undefined ? { payload: body as Json } : {}) });
  if (template) answered.set(`${method} ${template}`, [...(answered.get(`${method} ${template}`) ?? []), res.statusCode]);
  let parsed: Json = {};
  try {
    parsed = res.body ? (JSON.parse(res.body) as Json) : {};
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body: parsed, text: res.body };
}

class DriveError extends Error {}

async function expectStatus(res: Res, status: number, what: string): Promise<Json> {
  if (res.status !== status) throw new DriveError(`${what}: ${res.status} ${res.text.slice(0, 600)}`);
  return res.body;
}

// ---- the manifests, as the driver reads them ----------------------------------------------

interface TypeRef {
  app: string;
  decl: DocumentTypeDecl;
  manifest: Manifest;
}

function typeOf(app: string, ref: string): TypeRef {
  const [a, name] = ref.includes('/') ? ref.split('/') : [app, ref];
  const manifest = manifests.get(a);
  const decl = manifest?.documentTypes?.find((d) => d.name === name);
  if (!manifest || !decl) throw new DriveError(`no document type ${a}/${name}`);
  return { app: a, decl, manifest };
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const today = () => isoDay(clock.now());
const addDays = (day: string, n: number) => isoDay(Date.parse(`${day}T00:00:00.000Z`) + n * DAY);

const invoiceLines = () => [{ description: 'Consulting', quantity: 2, unitPrice: 100 }];

/**
 * Values the generator would get wrong for a type because a hook or a manifest rule refuses them
 * (`app/type` → fields): formats (an ID number, a version, a digest, emails, phones, HH:MM times,
 * domains), dates that must differ or come in order, and amounts a rule ties together (a
 * receipt's VAT within 15/115 of it, counts that add up). Effects and unique fields need their
 * own: an admission occupies its bed (one bed per admission), a cheque uses a leaf of its book (a
 * number inside the range, once per book), annual leave draws on the employee's allocation.
 */
let chequeNumber = 0;
let periodWeeks = 0;
let salaryDays = 0;
const OVERRIDES: Record<string, (day: string) => Json | Promise<Json>> = {
  // Invoicing: customer numbers have their forms (VAT 15 digits, the first and last 3); lines a VAT
  // category that fits their exemption reason; notes and payments against an issued invoice.
  'invoicing/customer': () => ({ vatNumber: '300000000000003', crNumber: '1010010000', country: 'SA' }),
  // Payroll: one salary assignment per employee and day.
  'payroll/salaryAssignment': () => ({ fromDate: new Date(Date.UTC(2020, 0, 1) + salaryDays++ * 86_400_000).toISOString().slice(0, 10) }),
  'invoicing/invoice': () => ({ lines: invoiceLines() }),
  'invoicing/creditNote': async () => ({ lines: [{ description: 'Returned', quantity: 1, unitPrice: 10 }], invoiceId: (await issuedInvoice()).id }),
  'invoicing/debitNote': async () => ({ lines: [{ description: 'Undercharged', quantity: 1, unitPrice: 10 }], invoiceId: (await issuedInvoice()).id }),
  'invoicing/payment': async () => ({ invoiceId: (await issuedInvoice()).id }),
  'hospital/admission': async () => ({ bedId: (await createDoc('hospital', 'bed', {})).id }),
  'cheques/book': () => ({ firstNumber: '1', lastNumber: '500', leaves: 500 }),
  'cheques/issuedCheque': () => ({ chequeNumber: String(++chequeNumber) }),
  // Leave drawn on no allocation (an allocation must be the employee's and cover the dates, which the generator's are not).
  'time-off/leaveRequest': () => ({ leaveType: 'sick', allocationId: undefined }),
  // A national ID is once per company.
  'emr/patient': () => ({ nationalId: `10${String(++serial).padStart(8, '0')}` }),
  // An employee's national ID is once per company; a Saudi IBAN and bank as the WPS file takes them.
  'employees/employee': () => ({ identityNumber: `1${String(++serial).padStart(9, '0')}`, iban: 'SA0380000000608010167519', bankSarieId: 'RJHI' }),
  // No approver: the generator's one employee cannot approve their own claim.
  'expenses/claim': (day) => ({ approverId: undefined, lines: [{ date: day, category: 'travel', description: 'Taxi', amount: 115, vatAmount: 15, receiptNumber: 'R-1' }] }),
  'fleet/vehicle': () => ({ vin: `1HGCM82633A${String(++serial).padStart(6, '0')}` }), // 17 characters, once per company
  'hospitality/booking': (day) => ({ departureDate: addDays(day, 1), adults: 1, children: 0 }), // within the room type's occupancy
  'hse/incident': () => ({ injuredCount: 0 }),
  'industry-models/industryModel': () => ({ version: '1.0.0', apps: [{ appId: 'crm' }] }),
  'jewelry/purchase': () => ({ sellerIdNumber: '1012345678' }),
  'legal/hearing': (day) => ({ nextHearingDate: addDays(day, 14) }),
  'marketplace/listing': () => ({ appId: `app-${++serial}`, currentVersion: '1.0.0' }),
  'marketplace/version': () => ({ version: `1.0.${++serial}`, packageSha256: 'a'.repeat(64) }), // once per listing
  'marketplace/install': () => ({ version: '1.0.0', versionId: undefined }), // a version record must be published and of the listing
  'migration/job': () => ({ entities: [{ entity: 'customers', sourceCount: 10, imported: 8, failed: 2 }] }),
  // Values the apps' rules require that a generic value does not give.
  'aftersales/agreement': (day) => ({ startDate: addDays(day, -30), endDate: addDays(day, -1) }), // renewed to a later end (today)
  'approvals/request': () => ({ currentStep: 1, totalSteps: 2, amount: 10, ruleId: undefined }), // a step is left to approve; a purchase has an amount; no rule to match
  'auto-workshop/job': () => ({ vin: '1HGCM82633A004352' }), // 17 characters
  'av/commissioning': () => ({ failedChecks: 0 }), // a pass has no failed check
  'elv/systemTest': () => ({ failedPoints: 0 }),
  'blog/post': () => ({ slug: `hello-world-${++serial}` }), // a slug is used once
  // apps2-a (issue 26): rules over referenced documents, unique fields and aggregates.
  'analytics/export': async () => ({ dashboardId: (await inState('analytics', 'dashboard', 'published')).id }), // only a published dashboard is exported
  'appraisals/appraisal': async () => ({ cycleId: (await walkTo(typeOf('appraisals', 'appraisalCycle'), await createDoc('appraisals', 'appraisalCycle', {}), (s) => s === 'open')).id }), // in an open cycle, once per employee
  'appraisals/goal': () => ({ weight: 1, appraisalId: undefined }), // an appraisal's goals weigh 100 at most, and are its employee's
  'approvals/rule': async () => ({ steps: [{ step: 1, approverId: (await refDoc('approvals', 'employees/employee', [])).id, deadlineDays: 2 }] }), // steps numbered from 1
  'attendance/attendanceRecord': async () => ({ employeeId: (await createDoc('employees', 'employee', {})).id, sheetId: undefined }), // one record per employee a day
  // Frozen on an approved design; a revision (FIXUPS) is numbered from the BoQ it supersedes, of its project.
  'av/boq': async () => ({ designId: (await inState('av', 'design', 'approved')).id, projectId: (await refDoc('av', 'projects/project', [])).id, revision: undefined, supersedesId: undefined }),
  'elv/boq': async () => ({ designId: (await inState('elv', 'design', 'approved')).id, projectId: (await refDoc('elv', 'projects/project', [])).id, revision: undefined, supersedesId: undefined }),
  'biometrics/punch': () => ({ postingId: undefined }), // a posting's period holds its punches' dates
  'education/enrolment': async () => ({ studentId: (await createDoc('education', 'student', {})).id, academicYear: undefined }), // once per class; the class's year
  'elearning/certificate': async () => ({ enrolmentId: (await inState('elearning', 'enrolment', 'completed')).id, courseId: undefined, learnerId: undefined }), // for a completed course, of its course and learner
  // apps-c (issue 26): the rules of their manifests
  // Enough on hand for the dispensings drawn from it (each draws from its batch and the batch's product).
  'pharmacy/batch': (day) => ({ receivedOn: addDays(day, -30), quantityOnHand: 1000 }),
  'planning/shift': () => ({ startTime: '08:00', endTime: '16:00' }),
  'property/enquiry': () => ({ email: 'enquiry@example.sa' }),
  // Activating a lease occupies its unit: one unit per lease.
  'property/lease': async (day) => ({ endDate: addDays(day, 364), ejarNumber: '10293847', unitId: (await createDoc('property', 'unit', {})).id }),
  'recruitment/application': () => ({ email: 'candidate@example.sa' }),
  // Sending an offer moves its application from interview to offer: an interviewed application per offer.
  'recruitment/offer': async (day) => {
    const application = await walkTo(typeOf('recruitment', 'application'), await createDoc('recruitment', 'application', {}), (s) => s === 'interview');
    return { validUntil: day, startDate: addDays(day, 30), applicationId: application.id };
  },
  // A cash-up is of a completed route, once, and its expected cash is the route's (nothing delivered: 0).
  'shipping/cashup': async () => {
    const route = await walkTo(typeOf('shipping', 'route'), await createDoc('shipping', 'route', {}), (s) => s === 'completed');
    return { routeId: route.id, countedAmount: 0 };
  },
  'restaurant/order': () => ({ orderType: 'takeaway' }),
  'restaurant/reservation': () => ({ time: '20:00' }),
  'security-ops/assignment': () => ({ startTime: '08:00', endTime: '16:00' }),
  'voip/extension': () => ({ number: String(100 + ++serial) }), // once in the company
  'report-builder/report': () => ({ columns: [{ field: 'total', aggregate: 'sum' }] }),
  'report-builder/schedule': () => ({ recipients: [{ email: 'cfo@example.sa' }] }),
  'sign/envelope': () => ({ documentSha256: 'a'.repeat(64) }),
  'sign/recipient': () => ({ email: 'signer@example.sa' }),
  'sms-marketing/contact': () => ({ phone: '+966500000000' }),
  'sms-marketing/campaign': () => ({ senderName: 'DIWAN' }),
  'social-marketing/post': (day) => ({ scheduledOn: day, scheduledTime: '09:00' }),
  // A response is to an open survey, with a score on every scale.
  'surveys/response': async () => ({ respondentEmail: 'respondent@example.sa', score: 5, surveyId: (await walkTo(typeOf('surveys', 'survey'), await createDoc('surveys', 'survey', {}), (s) => s === 'open')).id }),
  'website/site': () => ({ domain: `site${++serial}.example.sa` }), // a domain is one site's
  'website/domain': () => ({ domain: `www${++serial}.example.sa`, verificationToken: 'diwan-verify-1' }),
  'website/page': () => ({ path: `/about-${++serial}` }), // once per site
  'website/form': () => ({ notifyEmail: 'web@example.sa' }),
  'whatsapp/contact': () => ({ phone: '+966500000000' }),
  'whatsapp/template': () => ({ name: `order_ready_${++serial}` }), // one template of a name per language
  // A broadcast goes out on a template Meta approved.
  'whatsapp/broadcast': async () => ({ templateId: (await walkTo(typeOf('whatsapp', 'template'), await createDoc('whatsapp', 'template', {}), (s) => s === 'approved')).id }),
  'whatsapp/message': () => ({ text: 'Hello' }),
  'spreadsheet/send': () => ({ recipients: [{ email: 'ceo@example.sa' }] }),
  'referrals/referral': () => ({ candidateEmail: 'friend@example.sa' }),
  // A reward is for a hired referral, once, and goes to its referrer (the default).
  'referrals/reward': async () => ({ referrerId: undefined, referralId: (await walkTo(typeOf('referrals', 'referral'), await createDoc('referrals', 'referral', {}), (s) => s === 'hired')).id }),
  // One period per range: each a week after the one before.
  'timesheets/period': (day) => {
    const periodStart = addDays(day, 7 * periodWeeks++);
    return { periodStart, periodEnd: addDays(periodStart, 6) };
  },
  'projects/project': (day) => ({ startDate: day }),
  // A nonconformance is raised from a failed check.
  'quality/ncr': async () => ({ disposition: 'rework', checkId: (await walkTo(typeOf('quality', 'check'), await createDoc('quality', 'check', {}), (s) => s === 'failed')).id }),
  // A change releases its new revision and makes the released one it replaces obsolete.
  'plm/change': async () => {
    const revision = typeOf('plm', 'revision');
    const old = await walkTo(revision, await createDoc('plm', 'revision', { set: { revision: 'B' } }), (s) => s === 'released');
    const next = await createDoc('plm', 'revision', { set: { revision: 'C' } });
    return { fromRevision: 'B', toRevision: 'C', oldRevisionId: old.id, newRevisionId: next.id };
  },
  'subscriptions/subscription': (day) => ({ trialEndsOn: addDays(day, 14), nextBillingDate: addDays(day, 30) }),
  'training/induction': (day) => ({ checklist: [{ item: 'Safety walk', done: true, doneOn: day }] }),
  'shipping/linehaul': () => ({ sealNumber: 'SEAL-1' }),
  // apps2-b (issue 26): rules over referenced documents, aggregates, effects and unique fields
  'event-management/registration': async () => ({ eventId: (await inState('event-management', 'event', 'published')).id }),
  'forum/reply': async () => ({ topicId: (await inState('forum', 'topic', 'published')).id }),
  'forwarding/job': () => ({ quoteId: undefined }), // a quote's job is opened by accepting it
  'hse/acknowledgement': async () => ({ documentId: (await inState('hse', 'document', 'issued')).id, revision: undefined }),
  'marketing-automation/participant': async () => ({ workflowId: (await inState('marketing-automation', 'workflow', 'running')).id }),
  'loyalty/giftcard': () => ({ amount: 100_000 }), // its uses draw on its balance
  'manufacturing/order': async () => ({ productId: (await refDoc('manufacturing', 'ecommerce/product', [])).id, bomId: (await refDoc('manufacturing', 'bom', [])).id }), // the BOM's product
};

/** A new document of a type walked to a state (a published event takes registrations). */
async function inState(app: string, type: string, state: string): Promise<Doc> {
  const t = typeOf(app, type);
  return walkTo(t, await createDoc(app, type, { full: true }), (s) => s === state);
}

/**
 * Bodies a rule refuses for what they hold together (`app/type` → a fix of the body built):
 * a refund names its sale, a guard is not his own replacement, a failed run says why.
 */
const FIXUPS: Record<string, (body: Json) => Promise<void> | void> = {
  // A revision is numbered from the BoQ it supersedes, which it supersedes once: a BoQ of its own.
  'av/boq': async (b) => {
    delete b.revision;
    if (b.supersedesId) b.supersedesId = (await createDoc('av', 'boq', {})).id;
  },
  'elv/boq': async (b) => {
    delete b.revision;
    if (b.supersedesId) b.supersedesId = (await createDoc('elv', 'boq', {})).id;
  },
  'pos/order': async (b) => {
    if (b.kind === 'refund') {
      b.originalSaleId = (await createDoc('pos', 'order', { set: { kind: 'sale' } })).id;
      b.reason ??= 'Damaged';
    } else delete b.originalSaleId;
  },
  'security-ops/assignment': (b) => void delete b.replacementGuardId,
  'report-builder/run': (b) => {
    if (b.outcome === 'failed') b.error ??= 'SMTP timeout';
    else delete b.willRetry;
  },
  'training/competency': (b) => {
    if (typeof b.validUntil === 'string') b.issuedOn = addDays(b.validUntil, -365);
  },
  'shipping/booking': async (b) => {
    b.driverId ??= (await refDoc('shipping', 'employees/employee', [])).id;
  },
  'shipping/linehaul': async (b) => {
    if (!Array.isArray(b.shipments) || !b.shipments.length) b.shipments = [{ shipmentId: (await refDoc('shipping', 'shipment', [])).id }];
  },
};

/** What a transition's guard needs done first (`app/type/transition`): a week publishes with a shift planned, a bill is paid with an item on it, an envelope goes out to a signer. */
const BEFORE: Record<string, (doc: Doc) => Promise<unknown>> = {
  'planning/week/publish': (doc) => createDoc('planning', 'shift', { set: { weekId: doc.id, date: doc.weekStart } }),
  'restaurant/order/pay': (doc) => createDoc('restaurant', 'line', { set: { orderId: doc.id } }),
  'sign/envelope/send': (doc) => createDoc('sign', 'recipient', { set: { envelopeId: doc.id, role: 'signer', routingOrder: 1 } }),
};

/** Transition bodies a guard refuses when generated (`app/type/transition` → the inputs to use). */
const INPUTS: Record<string, (doc: Doc) => Promise<Json> | Json> = {
  'timesheets/entry/approve': async () => ({ approverId: (await createDoc('employees', 'employee', {})).id }),
  'property/lease/renew': (doc) => ({ endDate: addDays(String(doc.endDate), 365) }),
  // A clean room of the booked type (a room checked out of is dirty).
  'hospitality/booking/checkIn': async (doc) => ({ roomId: (await createDoc('hospitality', 'room', { set: { roomTypeId: doc.roomTypeId } })).id }),
};

/** Invoicing's notes and payments are made against an issued invoice (a fresh one each, 230.00 due). */
async function issuedInvoice(): Promise<Doc> {
  const t = typeOf('invoicing', 'invoice');
  return walkTo(t, await createDoc('invoicing', 'invoice', {}), (s) => s === 'sent');
}

/**
 * Transitions a guard keeps for what the business does (`app/type/transition` → how it comes
 * about): an invoice is paid by payments that leave nothing due.
 */
const BROUGHT_ABOUT: Record<string, (id: string) => Promise<Doc>> = {
  async 'invoicing/invoice/pay'(id) {
    const inv = (await expectStatus(await call('GET', `/api/v1/invoices/${id}`, undefined, '/api/v1/invoices/:id'), 200, 'get invoice')).data as Doc;
    const body = { amount: inv.balanceDue, date: today(), method: 'cash' };
    await expectStatus(await call('POST', `/api/v1/invoices/${id}/payments`, body, '/api/v1/invoices/:id/payments'), 201, 'pay invoice');
    return (await expectStatus(await call('GET', `/api/v1/invoices/${id}`, undefined, '/api/v1/invoices/:id'), 200, 'get invoice')).data as Doc;
  },
};

let serial = 0;


function numberIn(f: Field, wanted: number): number {
  let v = wanted;
  if (f.minimum !== undefined && v < f.minimum) v = f.minimum;
  if (f.maximum !== undefined && v > f.maximum) v = f.maximum;
  return f.type === 'integer' ? Math.ceil(v) : v;
}

function stringOf(f: Field, base: string): string {
  let s = base;
  const min = f.minLength ?? 0;
  const max = f.maxLength ?? 10_000;
  while (s.length < min) s += 'x';
  return s.slice(0, max);
}

/** A value for a field; references get a (cached) document of the target type. */
async function valueFor(app: string, f: Field, full: boolean, stack: string[] = []): Promise<unknown> {
  switch (f.type) {
    case 'string':
      return stringOf(f, `${f.name} ${++serial}`);
    case 'number':
    case 'money':
    case 'integer':
      return numberIn(f, 10);
    case 'boolean':
      return false;
    case 'date':
      return today();
    case 'enum':
      return f.values![0];
    case 'reference':
      return (await refDoc(app, f.to!, stack)).id;
    case 'lines': {
      const lf = (f as FieldDecl).fields ?? [];
      const line: Json = {};
      for (const x of lf) if (!isReadOnly(x) && (x.required || full)) line[x.name] = await valueFor(app, x, full, stack);
      return Array.from({ length: Math.max(1, (f as FieldDecl).minItems ?? 1) }, () => ({ ...line }));
    }
  }
}

/** A value different from `prev` (a fresh document for a reference). */
async function differentValue(app: string, f: Field, prev: unknown): Promise<unknown> {
  switch (f.type) {
    case 'string': {
      const s = stringOf(f, `${f.name} changed ${++serial}`);
      return s === prev ? `${s.slice(0, -1)}y` : s;
    }
    case 'number':
    case 'money':
    case 'integer': {
      const p = typeof prev === 'number' ? prev : numberIn(f, 10);
      const up = p + 1;
      return f.maximum === undefined || up <= f.maximum ? up : p - 1;
    }
    case 'boolean':
      return !prev;
    case 'date':
      return addDays(typeof prev === 'string' ? prev : today(), 1);
    case 'enum': {
      const v = f.values!.find((x) => x !== prev);
      if (v === undefined) throw new DriveError(`${f.name} has one value only`);
      return v;
    }
    case 'reference': {
      const t = typeOf(app, f.to!);
      return (await createDoc(t.app, t.decl.name, {})).id;
    }
    default:
      throw new DriveError(`cannot change a ${f.type} field`);
  }
}

const refCache = new Map<string, Promise<Doc>>();

/** One document per type, made once (with its required fields), for references to point at. */
function refDoc(app: string, ref: string, stack: string[]): Promise<Doc> {
  const t = typeOf(app, ref);
  const key = `${t.app}/${t.decl.name}`;
  let p = refCache.get(key);
  if (!p) {
    // Only required references are followed from here, so a cycle cannot be satisfied.
    if (stack.includes(key)) throw new DriveError(`required references form a cycle ${[...stack, key].join(' → ')}`);
    p = createDoc(t.app, t.decl.name, {}, [...stack, key]);
    refCache.set(key, p);
    p.catch(() => refCache.delete(key));
  }
  return p;
}

interface CreateOpts {
  /** Every writable field, not only the required ones. */
  full?: boolean;
  set?: Json;
  omit?: string[];
}

async function createBody(app: string, type: string, o: CreateOpts, stack: string[]): Promise<Json> {
  const { decl } = typeOf(app, type);
  const body: Json = {};
  const override = (await OVERRIDES[`${app}/${type}`]?.(today())) ?? {};
  for (const f of decl.fields) {
    if (isReadOnly(f) || o.omit?.includes(f.name)) continue;
    if (o.set && f.name in o.set) body[f.name] = o.set[f.name];
    else if (f.name in override) body[f.name] = override[f.name];
    else if (f.required || o.full) body[f.name] = await valueFor(app, f, !!o.full, stack);
  }
  await FIXUPS[`${app}/${type}`]?.(body);
  return body;
}

async function createDoc(app: string, type: string, o: CreateOpts, stack: string[] = []): Promise<Doc> {
  const { decl } = typeOf(app, type);
  const body = await createBody(app, type, o, stack);
  const res = await call('POST', `/api/v1/${decl.resource}`, body, `/api/v1/${decl.resource}`);
  return (await expectStatus(res, 201, `create ${app}/${type} ${JSON.stringify(body).slice(0, 300)}`)).data as Doc;
}

async function patchDoc(t: TypeRef, id: string, patch: Json): Promise<Doc> {
  const res = await call('PATCH', `/api/v1/${t.decl.resource}/${id}`, patch, `/api/v1/${t.decl.resource}/:id`);
  return (await expectStatus(res, 200, `update ${t.app}/${t.decl.name} ${JSON.stringify(patch)}`)).data as Doc;
}

/** The body a transition takes: a value for each input it requires (or what INPUTS gives). */
async function inputFor(t: TypeRef, name: string, doc: Doc): Promise<Json | undefined> {
  const input = t.decl.transitions?.find((x) => x.name === name)?.input;
  if (!input) return undefined;
  const given = INPUTS[`${t.app}/${t.decl.name}/${name}`];
  if (given) return given(doc);
  const body: Json = {};
  for (const f of input) if (f.required) body[f.name] = await valueFor(t.app, f, false);
  return body;
}

async function transitionDoc(t: TypeRef, doc: Doc, name: string): Promise<Doc> {
  const brought = BROUGHT_ABOUT[`${t.app}/${t.decl.name}/${name}`];
  if (brought) return brought(doc.id);
  await BEFORE[`${t.app}/${t.decl.name}/${name}`]?.(doc);
  const res = await call('POST', `/api/v1/${t.decl.resource}/${doc.id}/${name}`, await inputFor(t, name, doc), `/api/v1/${t.decl.resource}/:id/${name}`);
  return (await expectStatus(res, 200, `${name} ${t.app}/${t.decl.name}`)).data as Doc;
}

/** The shortest walk of transitions from `from` to a state `ok` accepts (breadth first). */
function walk(decl: DocumentTypeDecl, from: string, ok: (state: string) => boolean): Transition[] | undefined {
  const prev = new Map<string, { state: string; t: Transition } | null>([[from, null]]);
  const queue = [from];
  while (queue.length) {
    const s = queue.shift()!;
    if (ok(s)) {
      const out: Transition[] = [];
      for (let at = prev.get(s); at; at = prev.get(at.state)) out.unshift(at.t);
      return out;
    }
    for (const t of decl.transitions ?? []) {
      if (t.from.includes(s) && !prev.has(t.to)) {
        prev.set(t.to, { state: s, t });
        queue.push(t.to);
      }
    }
  }
  return undefined;
}

async function walkTo(t: TypeRef, doc: Doc, ok: (state: string) => boolean): Promise<Doc> {
  const steps = walk(t.decl, doc.state!, ok);
  if (!steps) throw new DriveError(`${t.app}/${t.decl.name}: no state reachable from ${doc.state} fits`);
  let d = doc;
  for (const s of steps) d = await transitionDoc(t, d, s.name);
  return d;
}

// ---- conditions ------------------------------------------------------------------------------

function holds(c: ConditionDecl, doc: Json): boolean {
  const v = doc[c.field];
  if (c.equals !== undefined) return v === c.equals;
  if (c.in !== undefined) return c.in.includes(v as string);
  if (c.present !== undefined) return c.present === (v !== undefined && v !== null && v !== '');
  if (typeof v !== 'number') return false;
  if (c.below !== undefined) return v < c.below;
  return v > c.above!;
}

const ABSENT = Symbol('absent');

/** A value of `f` for which `c` holds. */
async function satisfying(app: string, f: Field, c: ConditionDecl): Promise<unknown> {
  if (c.equals !== undefined) return c.equals;
  if (c.in !== undefined) return c.in[0];
  if (c.present === true) return valueFor(app, f, false);
  if (c.present === false) return ABSENT;
  const v = c.below !== undefined ? c.below - 1 : c.above! + 1;
  if ((f.minimum !== undefined && v < f.minimum) || (f.maximum !== undefined && v > f.maximum)) {
    throw new DriveError(`${f.name}: no value within [${f.minimum}, ${f.maximum}] makes ${JSON.stringify(c)} hold`);
  }
  return v;
}

/** A value of `f` (or ABSENT) for which `c` does not hold. */
async function failing(app: string, f: Field, c: ConditionDecl): Promise<unknown> {
  if (c.present === true) {
    if (f.required) throw new DriveError(`${f.name} is required, so "present" holds from the start`);
    return ABSENT;
  }
  if (c.present === false) return valueFor(app, f, false);
  if (c.equals !== undefined || c.in !== undefined) {
    const bad = (v: unknown) => (c.equals !== undefined ? v !== c.equals : !c.in!.includes(v as string));
    if (f.type === 'enum') {
      const v = f.values!.find(bad);
      if (v !== undefined) return v;
    } else if (f.type === 'boolean') return c.equals !== true;
    else if (f.type === 'number' || f.type === 'integer' || f.type === 'money') return numberIn(f, (c.equals as number) + 1);
    if (!f.required) return ABSENT;
    throw new DriveError(`${f.name}: no value fails ${JSON.stringify(c)}`);
  }
  const v = c.below !== undefined ? c.below : c.above!;
  if ((f.minimum !== undefined && v < f.minimum) || (f.maximum !== undefined && v > f.maximum)) {
    if (!f.required) return ABSENT;
    throw new DriveError(`${f.name}: no value within bounds fails ${JSON.stringify(c)}`);
  }
  return v;
}

function put(set: Json, omit: string[], name: string, v: unknown): void {
  if (v === ABSENT) omit.push(name);
  else set[name] = v;
}

function fieldOf(t: TypeRef, name: string): FieldDecl {
  const f = t.decl.fields.find((x) => x.name === name);
  if (!f) throw new DriveError(`${t.app}/${t.decl.name} has no field ${name}`);
  return f;
}

// ---- the outbox ------------------------------------------------------------------------------

interface OutRow {
  seq: number;
  topic: string;
  data: Json;
  test: boolean;
}

async function mark(): Promise<number> {
  const r = await host.storage.db.get<{ s: number }>('SELECT coalesce(max(seq), 0) AS s FROM outbox');
  return Number(r!.s);
}

async function eventsSince(seq: number, company = companyId): Promise<OutRow[]> {
  const rows = await host.storage.db.all<{ seq: number; topic: string; data: string; test: number }>(
    'SELECT seq, topic, data, test FROM outbox WHERE company_id = ? AND seq > ? ORDER BY seq',
    [company, seq],
  );
  return rows.map((r) => ({ seq: Number(r.seq), topic: r.topic, data: JSON.parse(r.data) as Json, test: Number(r.test) === 1 }));
}

const validators = new Map<string, ValidateFunction>();
function validatorOf(topic: string): ValidateFunction {
  let v = validators.get(topic);
  if (!v) validators.set(topic, (v = ajv.compile(catalogue.get(topic)!.payload)));
  return v;
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** What is wrong with the event of `topic` about `id` among `rows` (undefined: nothing). */
function problemOf(topic: string, rows: OutRow[], id: string, expect: (data: Json) => string | undefined = () => undefined): string | undefined {
  const t = catalogue.get(topic);
  if (!t) return 'not in the served catalogue';
  const mine = rows.filter((r) => r.topic === topic);
  if (!mine.length) return `not emitted (saw ${[...new Set(rows.map((r) => r.topic))].join(', ') || 'nothing'})`;
  const about = mine.filter((r) => (t.source.on === 'operation' ? Object.values(r.data).includes(id) : r.data.id === id));
  if (!about.length) return `emitted, but none carries the id ${id}: ${JSON.stringify(mine[0].data).slice(0, 300)}`;
  const ev = about[about.length - 1];
  if (ev.test) return 'emitted as a test event';
  const validate = validatorOf(topic);
  if (!validate(ev.data)) return `data does not validate: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(ev.data).slice(0, 400)}`;
  if (!validate(t.example)) return `the catalogue's example does not validate: ${ajv.errorsText(validate.errors)}`;
  for (const k of (t.payload.required as string[] | undefined) ?? []) {
    if (!(k in t.example)) return `the example lacks the required key ${k}`;
    if (kind(t.example[k]) !== kind(ev.data[k])) return `${k} is ${kind(ev.data[k])} in the event, ${kind(t.example[k])} in the example`;
  }
  return expect(ev.data);
}

// ---- the drivers -----------------------------------------------------------------------------

interface Drive {
  /** Outbox position before the step that should emit. */
  seq: number;
  /** The id the event must carry. */
  id: string;
  expect?: (data: Json) => string | undefined;
}

type Driver = (topic: TopicDecl, app: string) => Promise<Drive>;

function prevCheck(field: string, prev: unknown): (data: Json) => string | undefined {
  const want = prev === ABSENT ? null : prev;
  return (data) => {
    const p = data.previous as Json | undefined;
    if (!p || JSON.stringify(p[field] ?? null) !== JSON.stringify(want)) return `previous.${field} is ${JSON.stringify(p?.[field])}, expected ${JSON.stringify(want)}`;
    return undefined;
  };
}

/** The values a source's `when` needs at create (for create, update, delete and transition sources). */
async function whenValues(t: TypeRef, when: WhenDecl | undefined): Promise<{ set: Json; omit: string[] }> {
  const set: Json = {};
  const omit: string[] = [];
  if (when && !('rule' in when) && when.field !== 'state') put(set, omit, when.field, await satisfying(t.app, fieldOf(t, when.field), when));
  return { set, omit };
}

const byDocument: Record<Exclude<SourceDecl['on'], 'schedule' | 'operation'>, Driver> = {
  async create(topic, app) {
    const t = typeOf(app, topic.source.type!);
    const seq = await mark();
    const doc = await createDoc(t.app, t.decl.name, { full: true, ...(await whenValues(t, topic.source.when)) });
    return { seq, id: doc.id };
  },

  async update(topic, app) {
    const t = typeOf(app, topic.source.type!);
    const doc = await createDoc(t.app, t.decl.name, { full: true, ...(await whenValues(t, topic.source.when)) });
    const whenField = topic.source.when && 'field' in topic.source.when ? topic.source.when.field : undefined;
    const f = t.decl.fields.find((x) => !isReadOnly(x) && x.type === 'string' && x.name !== whenField) ?? t.decl.fields.find((x) => !isReadOnly(x) && ['number', 'integer', 'money'].includes(x.type));
    if (!f) throw new DriveError('no field to change');
    const seq = await mark();
    await patchDoc(t, doc.id, { [f.name]: await differentValue(app, f, doc[f.name]) });
    return { seq, id: doc.id };
  },

  async delete(topic, app) {
    const t = typeOf(app, topic.source.type!);
    const doc = await createDoc(t.app, t.decl.name, { full: true, ...(await whenValues(t, topic.source.when)) });
    const seq = await mark();
    await expectStatus(await call('DELETE', `/api/v1/${t.decl.resource}/${doc.id}`, undefined, `/api/v1/${t.decl.resource}/:id`), 200, `delete ${t.app}/${t.decl.name}`);
    return { seq, id: doc.id };
  },

  async transition(topic, app) {
    const t = typeOf(app, topic.source.type!);
    const tr = t.decl.transitions!.find((x) => x.name === topic.source.transition)!;
    let doc = await createDoc(t.app, t.decl.name, { full: true, ...(await whenValues(t, topic.source.when)) });
    doc = await walkTo(t, doc, (s) => tr.from.includes(s));
    const from = doc.state;
    const seq = await mark();
    await transitionDoc(t, doc, tr.name);
    return { seq, id: doc.id, expect: prevCheck('state', from) };
  },

  async change(topic, app) {
    const t = typeOf(app, topic.source.type!);
    const field = topic.source.field!;
    const when = topic.source.when as ConditionDecl | undefined;
    if (field === 'state') {
      // A transition into a state the condition accepts, from one it does not (reachable from the start).
      const good = (from: string, tr: Transition) => tr.to !== from && (!when || (holds(when, { state: tr.to }) && !holds(when, { state: from })));
      const tr = (from: string) => (t.decl.transitions ?? []).find((x) => x.from.includes(from) && good(from, x));
      let doc = await createDoc(t.app, t.decl.name, { full: true });
      doc = await walkTo(t, doc, (s) => !!tr(s));
      const from = doc.state!;
      const seq = await mark();
      await transitionDoc(t, doc, tr(from)!.name);
      return { seq, id: doc.id, expect: prevCheck('state', from) };
    }
    const f = fieldOf(t, field);
    const via = f.lockedIn && (t.decl.transitions ?? []).find((x) => x.set && field in x.set);
    if (via) {
      // A field locked in its states changes only through the transition that sets it (a transfer moves the bed).
      const doc = await walkTo(t, await createDoc(t.app, t.decl.name, { full: true }), (s) => via.from.includes(s));
      const seq = await mark();
      await transitionDoc(t, doc, via.name);
      return { seq, id: doc.id, expect: prevCheck(field, doc[field]) };
    }
    let prev: unknown;
    let next: unknown;
    if (when) {
      if (when.field !== field) throw new DriveError(`when on ${when.field} for a change of ${field}`);
      prev = await failing(app, f, when);
      next = await satisfying(app, f, when);
      if (next === ABSENT) throw new DriveError('a change cannot remove a value');
    } else {
      prev = await valueFor(app, f, true);
      next = await differentValue(app, f, prev);
    }
    const set: Json = {};
    const omit: string[] = [];
    put(set, omit, field, prev);
    const doc = await createDoc(t.app, t.decl.name, { full: true, set, omit });
    const seq = await mark();
    await patchDoc(t, doc.id, { [field]: next });
    return { seq, id: doc.id, expect: prevCheck(field, prev) };
  },
};

/** A book of `leaves` leaves from which one cheque is issued: its computed leaves left fall from `leaves` to `leaves − 1`. */
async function useLeaf(leaves: number): Promise<Drive> {
  const book = await createDoc('cheques', 'book', { set: { firstNumber: '1', lastNumber: String(leaves), leaves } });
  const seq = await mark();
  await createDoc('cheques', 'issuedCheque', { set: { bookId: book.id, chequeNumber: '1' } });
  return { seq, id: book.id, expect: prevCheck('leavesRemaining', leaves) };
}

/**
 * `change` sources on computed fields, and topics whose condition is a rule over computed values:
 * driven through what the values are computed from, in the domain's terms.
 */
const COMPUTED: Record<string, Driver> = {
  // Issued by a send: the number exists from then on.
  async 'invoice.issued'() {
    const t = typeOf('invoicing', 'invoice');
    const doc = await createDoc('invoicing', 'invoice', { full: true });
    const seq = await mark();
    await transitionDoc(t, doc, 'send');
    return { seq, id: doc.id, expect: prevCheck('number', ABSENT) };
  },
  async 'agents.budget.exceeded'() {
    // Runs of 60 and 40 tokens reach the agent's budget of 100.
    const agent = await createDoc('agents', 'agent', { full: true, set: { tokenBudget: 100 } });
    await createDoc('agents', 'run', { set: { agentId: agent.id, tokensUsed: 60 } });
    const seq = await mark();
    await createDoc('agents', 'run', { set: { agentId: agent.id, tokensUsed: 40 } });
    const result = { seq, id: agent.id, expect: (d: Json) => (d.tokensUsed === 100 && d.tokensRemaining === 0 ? undefined : `tokensUsed ${d.tokensUsed}, tokensRemaining ${d.tokensRemaining}`) };
    // The agent is then stopped: the one way to answer its exceedBudget route, whose guard reads the runs' tokens.
    await transitionDoc(typeOf('agents', 'agent'), agent, 'exceedBudget');
    return result;
  },
  // Transitions whose guard reads an aggregate: the children first.
  async 'auto-workshop.job.delivered'() {
    const t = typeOf('auto-workshop', 'job');
    const job = await createDoc('auto-workshop', 'job', { full: true });
    await walkTo(typeOf('auto-workshop', 'estimate'), await createDoc('auto-workshop', 'estimate', { set: { jobId: job.id } }), (s) => s === 'approved');
    const ready = await walkTo(t, job, (s) => s === 'ready');
    const seq = await mark();
    await transitionDoc(t, ready, 'deliver');
    return { seq, id: job.id, expect: prevCheck('state', 'ready') };
  },
  async 'biometrics.attendance.posted'() {
    const posting = await createDoc('biometrics', 'posting', { full: true, set: { periodFrom: today(), periodTo: today() } });
    await createDoc('biometrics', 'punch', { set: { postingId: posting.id, punchDate: today() } });
    const seq = await mark();
    await transitionDoc(typeOf('biometrics', 'posting'), posting, 'post');
    return { seq, id: posting.id, expect: prevCheck('state', 'draft') };
  },
  async 'connect.menu.published'() {
    const menu = await createDoc('connect', 'menu', { full: true });
    await createDoc('connect', 'item', { set: { menuId: menu.id } });
    const seq = await mark();
    const published = await transitionDoc(typeOf('connect', 'menu'), menu, 'publish');
    // Withdrawn again: its route needs a menu published, which needs items.
    await transitionDoc(typeOf('connect', 'menu'), published, 'withdraw');
    return { seq, id: menu.id, expect: prevCheck('state', 'draft') };
  },
  async 'storefronts.inventory.oversold'() {
    // A listing of 5 available with 3 committed takes an order of 4 more: 7 committed, 2 oversold.
    const listing = await createDoc('storefronts', 'listing', { full: true, set: { available: 5, committed: 3 } });
    const seq = await mark();
    await patchDoc(typeOf('storefronts', 'listing'), listing.id, { committed: 7 });
    return { seq, id: listing.id, expect: (d) => (d.freeToSell === -2 ? undefined : `freeToSell ${d.freeToSell}`) };
  },
  'cheques.book.low': () => useLeaf(5),
  'cheques.book.exhausted': () => useLeaf(1),
  async 'construction.contract.overrun'() {
    // Costs recorded against a contract of 1,000 add up past its value: 600, then 500.
    const contract = await createDoc('construction', 'contract', { full: true, set: { contractValue: 1000, budget: 900 } });
    await createDoc('construction', 'costEntry', { full: true, set: { contractId: contract.id, amount: 600 } });
    const seq = await mark();
    await createDoc('construction', 'costEntry', { full: true, set: { contractId: contract.id, amount: 500 } });
    return { seq, id: contract.id, expect: (d) => (d.actualCost === 1100 && d.costStatus === 'overrun' ? undefined : `actualCost ${d.actualCost}, costStatus ${d.costStatus}`) };
  },
  async 'nonprofit.campaign.goal_reached'() {
    // Donations received for a campaign of 100: 60, then 40 reach its goal.
    const campaign = await createDoc('nonprofit', 'campaign', { full: true, set: { goalAmount: 100 } });
    const t = typeOf('nonprofit', 'donation');
    await walkTo(t, await createDoc('nonprofit', 'donation', { full: true, set: { campaignId: campaign.id, amount: 60 } }), (s) => s === 'received');
    const second = await createDoc('nonprofit', 'donation', { full: true, set: { campaignId: campaign.id, amount: 40 } });
    const seq = await mark();
    await walkTo(t, second, (s) => s === 'received');
    return { seq, id: campaign.id, expect: (d) => (d.raisedAmount === 100 ? undefined : `raisedAmount ${d.raisedAmount}`) };
  },
};

/** The company onboarded with ZATCA (once), its gateway the stand-in, as its Owner does it. */
let zatca: StandIn | undefined;
async function onboardedWithZatca(): Promise<StandIn> {
  if (zatca) return zatca;
  zatca = await startZatcaStandIn();
  await expectStatus(await call('PATCH', '/api/v1/company', OFFICE_SUPPLIES, '/api/v1/company'), 200, 'the seller profile');
  await expectStatus(await call('PATCH', '/api/v1/apps/invoicing/settings', { zatcaBaseUrl: zatca.url }, '/api/v1/apps/:id/settings'), 200, 'the gateway');
  await expectStatus(await call('POST', '/api/v1/company/zatca/onboard', { otp: zatca.onboarding.otp, gateway: 'simulation' }, '/api/v1/company/zatca/onboard'), 200, 'onboarding');
  return zatca;
}

/** An invoice the onboarded company sends (standard when the buyer has a VAT number), submitted by its job with ZATCA answering `answer`. */
async function submittedToZatca(answer: Answer, buyerVat?: string): Promise<Drive> {
  const z = await onboardedWithZatca();
  // What other drivers issued meanwhile goes first, accepted.
  await host.jobRunner.runDue();
  const customer = await expectStatus(await call('POST', '/api/v1/customers', { name: 'Al Noor Trading', ...(buyerVat ? { vatNumber: buyerVat } : {}) }), 201, 'a customer');
  const lines = [{ description: 'A4 paper, 5 reams', quantity: 4, unitPrice: 112.5 }];
  const draft = await expectStatus(await call('POST', '/api/v1/invoices', { customerId: (customer.data as Doc).id, date: today(), dueDate: addDays(today(), 30), lines }), 201, 'a draft invoice');
  const id = (draft.data as Doc).id;
  await expectStatus(await call('POST', `/api/v1/invoices/${id}/send`, {}), 200, 'send');
  z.next(answer);
  const seq = await mark();
  if ((await host.jobRunner.runDue()) !== 1) throw new DriveError('the submission job did not run');
  return { seq, id };
}

/** `operation` sources: the route or write that makes the app's code emit. */
const OPERATIONS: Record<string, Driver> = {
  'invoice.zatca.cleared': () => submittedToZatca('accept', '300000000000003'),
  'invoice.zatca.reported': () => submittedToZatca('accept'),
  'invoice.zatca.rejected': () => submittedToZatca('reject'),
  async 'analytics.access.denied'() {
    const t = typeOf('analytics', 'dashboard');
    let doc = await createDoc(t.app, 'dashboard', { full: true });
    doc = await walkTo(t, doc, (s) => s === 'published');
    // No grant of the dashboard reaches the caller.
    const seq = await mark();
    const res = await call('GET', `/api/v1/analytics-dashboards/${doc.id}/open`, undefined, '/api/v1/analytics-dashboards/:id/open');
    await expectStatus(res, 403, 'open a dashboard without a grant');
    return { seq, id: doc.id };
  },
  async 'elv.credential.revealed'() {
    const doc = await createDoc('elv', 'credential', { full: true });
    const stored = await expectStatus(await call('PUT', `/api/v1/elv/credentials/${doc.id}/secret`, { secret: 's3cret' }, '/api/v1/elv/credentials/:id/secret'), 200, 'store a secret');
    // It answers the credential, never the secret.
    const answered = stored.data as Doc;
    if (answered.id !== doc.id || 'secret' in answered) throw new DriveError(`storing a secret answered ${JSON.stringify(answered)}`);
    const seq = await mark();
    const res = await call('POST', `/api/v1/elv/credentials/${doc.id}/reveal`, { purpose: 'site maintenance visit' }, '/api/v1/elv/credentials/:id/reveal');
    await expectStatus(res, 200, 'reveal a secret');
    return { seq, id: doc.id };
  },
  async 'project.budget.exceeded'() {
    const t = typeOf('projects', 'project');
    const doc = await createDoc('projects', 'project', { full: true, set: { budget: 1000, actualCost: 900 } });
    const seq = await mark();
    await patchDoc(t, doc.id, { actualCost: 1200 });
    return { seq, id: doc.id, expect: (d) => (d.overrunAmount === 200 ? undefined : `overrunAmount ${d.overrunAmount}`) };
  },
  async 'time-off.request.pending'() {
    const manager = await createDoc('employees', 'employee', {});
    const employee = await createDoc('employees', 'employee', { full: true, set: { managerId: manager.id } });
    const seq = await mark();
    const doc = await createDoc('time-off', 'leaveRequest', { full: true, set: { employeeId: employee.id } });
    return { seq, id: doc.id, expect: (d) => (d.approverId === manager.id && d.step === 'manager' ? undefined : `approverId ${d.approverId}, step ${d.step}`) };
  },
};

/** The app used for the `apps` family: one no other app depends on. */
function leafApp(): string {
  const needed = new Set([...manifests.values()].flatMap((m) => Object.keys(m.dependencies ?? {})));
  return [...manifests.keys()].filter((id) => !needed.has(id) && id !== 'invoicing').sort()[0];
}

const LIFECYCLE: [topic: string, step: (app: string) => Promise<Res>][] = [
  ['app.disabled', (a) => call('POST', `/api/v1/apps/${a}/disable`)],
  ['app.enabled', (a) => call('POST', `/api/v1/apps/${a}/enable`)],
  ['app.uninstalled', (a) => call('POST', `/api/v1/apps/${a}/uninstall`)],
  ['app.installed', (a) => call('POST', '/api/v1/apps', { appId: a })],
];

// ---- the suite ---------------------------------------------------------------------------------

/** topic → what was wrong (undefined: covered). */
const results = new Map<string, string | undefined>();

function firstPartyIds(): string[] {
  return fs.readdirSync(path.join(REPO_ROOT, 'manifests')).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json').map((f) => f.slice(0, -5));
}

beforeAll(async () => {
  clock = new ManualClock(START);
  host = await buildHost({ dbFile: ':memory:', clock });
  manifests = new Map(host.runtime.list().map((a) => [a.manifest.id, a.manifest]));
  const { company, installed } = await host.createCompany({ name: 'Every App Co', currency: 'SAR' });
  expect(installed.sort()).toEqual(firstPartyIds().sort());
  companyId = company.id;
  const { key } = await host.keys.create({ companyId, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: 'owner' });
  headers = { authorization: `Bearer ${key}`, 'x-company-id': companyId };
  const res = await call('GET', '/api/v1/events/catalogue');
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  catalogue = new Map();
  for (const f of (res.body.data as { families: { topics: CatalogueTopic[] }[] }).families) for (const t of f.topics) catalogue.set(t.topic, t);
}, 120_000);

afterAll(async () => {
  await host?.close();
  await zatca?.close();
});

describe('every catalogue event through its real source', () => {
  it('drives all 521 spec events (and the invoicing families) out of the outbox with payloads that keep their promise', async () => {
    const schedules: { topic: TopicDecl; app: string; t: TypeRef; doc: Doc }[] = [];
    for (const [app, m] of manifests) {
      for (const fam of m.eventFamilies ?? []) {
        for (const topic of fam.topics) {
          const on = topic.source.on;
          try {
            if (on === 'schedule') {
              // Set up now; the clock moves once for all of them below.
              const t = typeOf(app, topic.source.type!);
              const sc = t.decl.schedules!.find((s) => s.name === topic.source.schedule)!;
              const { set, omit } = await whenValues(t, sc.when);
              // Due once the clock has moved two days: date + offset = tomorrow.
              if (!['createdAt', 'updatedAt', 'stateChangedAt'].includes(sc.date)) set[sc.date] = addDays(today(), 1 - (sc.offsetDays ?? 0));
              let doc = await createDoc(t.app, t.decl.name, { full: true, set, omit });
              if (sc.states) doc = await walkTo(t, doc, (s) => sc.states!.includes(s));
              schedules.push({ topic, app, t, doc });
              continue;
            }
            // A condition stated as a rule over computed values has a story of its own (COMPUTED).
            const computed = topic.source.when && 'rule' in topic.source.when;
            const driver = on === 'operation' ? OPERATIONS[topic.topic] : (COMPUTED[topic.topic] ?? (computed ? undefined : byDocument[on]));
            if (!driver) {
              results.set(topic.topic, computed ? 'no driver for its computed condition' : `no driver for the operation "${topic.source.operation}"`);
              continue;
            }
            const d = await driver(topic, app);
            results.set(topic.topic, problemOf(topic.topic, await eventsSince(d.seq), d.id, d.expect));
          } catch (err) {
            if (!(err instanceof DriveError)) throw err;
            results.set(topic.topic, `could not drive: ${err.message}`);
          }
        }
      }
    }

    // Schedules: nothing is due yet; two days later each fires once.
    const before = await mark();
    await host.scheduler.tick();
    const early = await eventsSince(before);
    for (const s of schedules) {
      if (early.some((e) => e.topic === s.topic.topic && e.data.id === s.doc.id)) results.set(s.topic.topic, 'fired before it was due');
    }
    clock.advance(2 * DAY);
    const seq = await mark();
    while ((await host.scheduler.tick()) > 0);
    const fired = await eventsSince(seq);
    for (const s of schedules) {
      if (results.has(s.topic.topic)) continue;
      results.set(s.topic.topic, problemOf(s.topic.topic, fired, s.doc.id));
      const n = fired.filter((e) => e.topic === s.topic.topic && e.data.id === s.doc.id).length;
      if (n > 1) results.set(s.topic.topic, `fired ${n} times`);
    }

    // The core `apps` family, through the lifecycle routes.
    const app = leafApp();
    for (const [topic, step] of LIFECYCLE) {
      const seq = await mark();
      const res = await step(app);
      results.set(topic, res.status >= 300 ? `${topic}: ${res.status} ${res.text.slice(0, 300)}` : problemOf(topic, await eventsSince(seq), app, (d) => (d.companyId === companyId ? undefined : 'companyId')));
    }

    // Whatever the suite made the host emit (audit trail included) is a topic of the catalogue.
    const emitted = await host.storage.db.all<{ topic: string }>('SELECT DISTINCT topic FROM outbox WHERE company_id = ?', [companyId]);
    const unknown = emitted.map((r) => r.topic).filter((t) => !catalogue.has(t));

    // Per family: covered / total, against the spec's counts.
    const lines: string[] = [];
    let covered = 0;
    let total = 0;
    const missing: string[] = [];
    for (const fam of SPEC.catalogue) {
      const topics = [...catalogue.values()].filter((t) => t.topic.startsWith(`${fam.prefix}.`));
      const want = fam.listed.length + fam.further;
      const ok = topics.filter((t) => results.has(t.topic) && results.get(t.topic) === undefined).length;
      for (const l of fam.listed) if (!catalogue.has(l)) missing.push(`${l} (listed by the spec) is not in the catalogue`);
      // The audit trail is generated from the writes the host audits; the spec counts none of it.
      if (topics.length !== want && fam.prefix !== 'audit') missing.push(`${fam.prefix}: ${topics.length} topics in the catalogue, the spec counts ${want}`);
      covered += Math.min(ok, want);
      total += want;
      lines.push(`${fam.family.padEnd(28)} ${String(Math.min(ok, want)).padStart(3)} / ${want}`);
    }
    const outside = [...results.keys()].filter((k) => !SPEC.catalogue.some((f) => k.startsWith(`${f.prefix}.`)));
    console.log(`events covered per family (spec):\n${lines.join('\n')}\ntotal ${covered} / ${total}; outside the spec: ${outside.filter((k) => results.get(k) === undefined).length} / ${outside.length} (${outside.join(', ')})`);
    const problems = [...results].filter(([, p]) => p !== undefined).map(([t, p]) => `${t}: ${p}`);
    expect([...missing, ...problems, ...unknown.map((t) => `${t}: emitted, but not in the catalogue`)]).toEqual([]);
    expect(total).toBe(SPEC.events);
    expect(covered).toBe(521);
  }, 300_000);
});

// ---- menus and routes --------------------------------------------------------------------------

describe('every installed app answers', () => {
  it('opens every menu item: the list of its document type answers 200 for an Owner', async () => {
    const res = await call('GET', '/api/v1/menu');
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const items = res.body.data as { app: string; id: string; resource?: string; path: string }[];
    const declared = [...manifests.values()].flatMap((m) => (m.menu ?? []).map((i) => `${m.id}/${i.id}`));
    expect(items.map((i) => `${i.app}/${i.id}`).sort()).toEqual(declared.sort());
    const failing: string[] = [];
    for (const item of items) {
      if (!item.resource) {
        failing.push(`${item.app}/${item.id} opens ${item.path}, not a document type`);
        continue;
      }
      const list = await call('GET', `/api/v1/${item.resource}`);
      if (list.status !== 200 || !Array.isArray(list.body.data)) failing.push(`${item.app}/${item.id}: GET /api/v1/${item.resource} answered ${list.status}`);
    }
    expect(failing).toEqual([]);
  }, 120_000);

  it('answers every generated and custom route of every app, never 404 or 5xx, and 2xx for the generated ones', async () => {
    // What the event drivers did not reach yet is driven here.
    const generated = new Map<string, () => Promise<Res>>();
    // A type locked in its initial state (a till receipt, a dispensing record) is final once
    // created: its update and delete answer CONFLICT, never 2xx.
    const lockedAtBirth = new Set<string>();
    const types = [...manifests.values()].flatMap((m) => (m.documentTypes ?? []).map((decl) => ({ app: m.id, decl, manifest: m })));
    for (const t of types) {
      const r = `/api/v1/${t.decl.resource}`;
      // Writable fields not locked in `state` (PATCH changes one of them).
      const writableIn = (state: string | undefined) => t.decl.fields.filter((x) => !isReadOnly(x) && x.type !== 'lines' && !(state && x.lockedIn?.includes(state)));
      // Locked from creation: as a whole, or field by field (an issued note).
      const born = t.decl.initialState;
      if (born && (t.decl.lockedIn?.includes(born) || !writableIn(born).length)) for (const m of ['PATCH', 'DELETE']) lockedAtBirth.add(`${m} ${r}/:id`);
      generated.set(`GET ${r}`, () => call('GET', r, undefined, r));
      generated.set(`POST ${r}`, async () => call('POST', r, await createBody(t.app, t.decl.name, { full: true }, []), r));
      generated.set(`GET ${r}/:id`, async () => call('GET', `${r}/${(await createDoc(t.app, t.decl.name, {})).id}`, undefined, `${r}/:id`));
      generated.set(`PATCH ${r}/:id`, async () => {
        const doc = await createDoc(t.app, t.decl.name, { full: true });
        // Not a field locked in the document's state, nor one whose generated values a rule refuses (those OVERRIDES gives), when there is another.
        const fixed = (await OVERRIDES[`${t.app}/${t.decl.name}`]?.(today())) ?? {};
        const writable = writableIn(doc.state);
        // Locked from creation: any field, to be refused.
        const f = writable.find((x) => !(x.name in fixed)) ?? writable[0] ?? writableIn(undefined)[0];
        return call('PATCH', `${r}/${doc.id}`, { [f.name]: await differentValue(t.app, f, doc[f.name]) }, `${r}/:id`);
      });
      generated.set(`DELETE ${r}/:id`, async () => call('DELETE', `${r}/${(await createDoc(t.app, t.decl.name, {})).id}`, undefined, `${r}/:id`));
      for (const tr of t.decl.transitions ?? []) {
        generated.set(`POST ${r}/:id/${tr.name}`, async () => {
          const doc = await walkTo(t, await createDoc(t.app, t.decl.name, { full: true }), (s) => tr.from.includes(s));
          return call('POST', `${r}/${doc.id}/${tr.name}`, await inputFor(t, tr.name, doc), `${r}/:id/${tr.name}`);
        });
      }
    }
    // A paid invoice is marked so by hand only when nothing was due at issue (a zero total).
    generated.set('POST /api/v1/invoices/:id/pay', async () => {
      const t = typeOf('invoicing', 'invoice');
      const zero = await createDoc('invoicing', 'invoice', { set: { lines: [{ description: 'Free sample', quantity: 0, unitPrice: 100 }] } });
      const sent = await walkTo(t, zero, (s) => s === 'sent');
      return call('POST', `/api/v1/invoices/${sent.id}/pay`, undefined, '/api/v1/invoices/:id/pay');
    });
    // Custom routes the operation drivers above did not call.
    const custom: Record<string, () => Promise<Res>> = {
      // An issued document's e-invoice and PDF, and its resubmission to ZATCA.
      ...Object.fromEntries(
        (
          [
            ['invoices', issuedInvoice],
            ['credit-notes', () => createDoc('invoicing', 'creditNote', {})],
            ['debit-notes', () => createDoc('invoicing', 'debitNote', {})],
          ] as const
        ).flatMap(([resource, make]) =>
          [
            ...['xml', 'pdf'].map((what) => [`GET /api/v1/${resource}/:id/${what}`, async () => call('GET', `/api/v1/${resource}/${(await make()).id}/${what}`, undefined, `/api/v1/${resource}/:id/${what}`)]),
            // Nothing to resubmit (never submitted, or accepted): CONFLICT, named.
            [`POST /api/v1/${resource}/:id/zatca/resubmit`, async () => call('POST', `/api/v1/${resource}/${(await make()).id}/zatca/resubmit`, {}, `/api/v1/${resource}/:id/zatca/resubmit`)],
          ],
        ),
      ),
      // Onboarding's state (before onboarding: not onboarded).
      'GET /api/v1/company/zatca': () => call('GET', '/api/v1/company/zatca', undefined, '/api/v1/company/zatca'),
      // A draft run has no WPS file yet: CONFLICT, named.
      'GET /api/v1/payroll-runs/:id/wps-file': async () => {
        const run = await createDoc('payroll', 'payrollRun', {});
        return call('GET', `/api/v1/payroll-runs/${run.id}/wps-file`, undefined, '/api/v1/payroll-runs/:id/wps-file');
      },
      'GET /api/v1/customers/:id/balance': async () => {
        const c = await createDoc('invoicing', 'customer', {});
        return call('GET', `/api/v1/customers/${c.id}/balance`, undefined, '/api/v1/customers/:id/balance');
      },
    };
    // A type locked in its first state (a note issued as it is made, a payment recorded) answers its update and delete with CONFLICT, never 2xx.
    const problems: string[] = [];
    const routes = host.runtime.routes();
    expect(routes.length).toBeGreaterThan(1000);
    for (const route of routes) {
      const key = `${route.doc.method} ${route.doc.url}`;
      const isGenerated = generated.has(key);
      if (!answered.get(key)?.some((s) => s < 400)) {
        try {
          await (generated.get(key) ?? custom[key])?.();
        } catch (err) {
          if (!(err instanceof DriveError)) throw err;
          problems.push(`${key}: could not drive: ${err.message}`);
          continue;
        }
      }
      const seen = answered.get(key) ?? [];
      if (!seen.length) problems.push(`${key}: never answered (no driver)`);
      else if (seen.some((s) => s === 404 || s >= 500)) problems.push(`${key}: answered ${seen.join(', ')}`);
      else if (lockedAtBirth.has(key)) {
        if (!seen.every((s) => s === 409)) problems.push(`${key}: answered ${seen.join(', ')}, not 409 (locked from creation)`);
      } else if (isGenerated && !seen.some((s) => s < 300)) problems.push(`${key}: answered ${seen.join(', ')}, never 2xx`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});

describe('install state', () => {
  it('is read without the install snapshots, which the lifecycle still reads where it needs them', async () => {
    // Dependents come from the snapshots: employees cannot be disabled under the apps that need it.
    const dependents = [...manifests.values()].filter((m) => m.dependencies?.employees).map((m) => m.id).sort();
    expect(dependents.length).toBeGreaterThan(10);
    const res = await call('POST', '/api/v1/apps/employees/disable');
    expect(res.status, res.text.slice(0, 300)).toBe(409);
    const detail = (res.body.error as { details: { reason: string; dependents: string[] }[] }).details[0];
    expect(detail.reason).toBe('app_in_use');
    expect([...detail.dependents].sort()).toEqual(dependents);
    // The upgrade plan compares the recorded snapshot with the available app: same version, nothing changes.
    const plan = await call('GET', '/api/v1/apps/invoicing/upgrade');
    expect(plan.status, plan.text.slice(0, 300)).toBe(200);
    expect(plan.body.data).toMatchObject({ appId: 'invoicing', from: '2.0.0', to: '2.0.0', documentTypes: { added: [], removed: [] }, routes: { added: [], removed: [] }, topics: { added: [], removed: [] } });
    // What every request reads per company carries no snapshot.
    const rows = [...(await host.runtime.installs(companyId)).values()];
    expect(rows.length).toBe(manifests.size);
    expect(rows.every((r) => !('snapshot' in r))).toBe(true);
  });
});

// ---- schedules fire once -------------------------------------------------------------------------

async function overdueEvents(h: Host, company: string, invoiceId: string): Promise<number> {
  const r = await h.storage.db.get<{ n: number }>(
    `SELECT count(*) AS n FROM outbox WHERE company_id = ? AND topic = 'invoice.overdue' AND ${h.storage.db.dialect.jsonField('data', 'id', 'text')} = ?`,
    [company, invoiceId],
  );
  return Number(r!.n);
}

describe('schedules', () => {
  // SQLite's plan (EXPLAIN QUERY PLAN); PostgreSQL plans from statistics, and scans tables this small.
  it.skipIf(onPostgres())("asks for due documents with indexed queries, never a scan of a type's table", async () => {
    const db = host.storage.db;
    const all = db.all.bind(db);
    const plans = new Map<string, string>();
    db.all = (async (sql: string, params?: unknown[]) => {
      if (sql.includes('schedule_firings') && !plans.has(sql)) {
        const plan = await all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params as never);
        plans.set(sql, plan.map((p) => p.detail).join(' | '));
      }
      return all(sql, params as never);
    }) as typeof db.all;
    try {
      await host.scheduler.tick();
    } finally {
      db.all = all;
    }
    // Every type with schedules was asked (two schedules on the same date share one statement).
    const tables = [...manifests.values()].flatMap((m) => (m.documentTypes ?? []).filter((d) => d.schedules?.length).map((d) => `"doc_${m.id.replace(/-/g, '_')}_${d.name.toLowerCase()}"`));
    expect(tables.filter((t) => ![...plans.keys()].some((sql) => sql.includes(t)))).toEqual([]);
    const scans = [...plans].filter(([, plan]) => /\bSCAN d\b/.test(plan)).map(([sql, plan]) => `${sql.slice(0, 200)} → ${plan}`);
    expect(scans).toEqual([]);
  });

  it('fires invoice.overdue under a driven clock for a sent invoice past its due date, once, and never for a paid one', async () => {
    const inv = typeOf('invoicing', 'invoice');
    const customer = await createDoc('invoicing', 'customer', {});
    const body = { customerId: customer.id, date: today(), dueDate: today(), lines: [{ description: 'Consulting', quantity: 2, unitPrice: 100 }] };
    const sent = await walkTo(inv, (await expectStatus(await call('POST', '/api/v1/invoices', body), 201, 'invoice')).data as Doc, (s) => s === 'sent');
    const paid = await walkTo(inv, (await expectStatus(await call('POST', '/api/v1/invoices', body), 201, 'invoice')).data as Doc, (s) => s === 'paid');

    // On its due date an invoice is not overdue yet.
    await host.scheduler.tick();
    expect(await overdueEvents(host, companyId, sent.id)).toBe(0);

    clock.advance(DAY);
    const seq = await mark();
    await host.scheduler.tick();
    await host.scheduler.tick();
    clock.advance(3 * DAY);
    await host.scheduler.tick();
    expect(await overdueEvents(host, companyId, sent.id)).toBe(1);
    expect(await overdueEvents(host, companyId, paid.id)).toBe(0);
    const ev = (await eventsSince(seq)).find((e) => e.topic === 'invoice.overdue' && e.data.id === sent.id)!;
    expect(ev.test).toBe(false);
    expect(validatorOf('invoice.overdue')(ev.data), ajv.errorsText(validatorOf('invoice.overdue').errors)).toBe(true);
    // 2 × 100.00 with 15 % VAT
    expect(ev.data).toMatchObject({ id: sent.id, state: 'sent', total: 230, dueDate: sent.dueDate });

    // A new due date is a new occurrence: it fires again, once.
    const paidLater = await walkTo(inv, (await expectStatus(await call('POST', '/api/v1/invoices', body), 201, 'invoice')).data as Doc, (s) => s === 'sent');
    clock.advance(DAY);
    await host.scheduler.tick();
    expect(await overdueEvents(host, companyId, paidLater.id)).toBe(1);
  }, 60_000);

  it('fires each (document, schedule, date) once when a second host, in another process, ticks the same database at the same time', async () => {
    // Two processes, as a deployment runs them: two hosts in one process cannot share a file (one
    // connection's busy wait on the write lock blocks the thread that holds the lock).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-schedule-'));
    // The SQLite file, or (the postgres project) one PostgreSQL database both processes open.
    const url = onPostgres() ? await testDatabaseUrl() : undefined;
    const file = url ?? path.join(dir, 'diwan.db');
    const buildHost = (opts: Parameters<typeof realBuildHost>[0]) => realBuildHost({ ...opts, ...(url ? { dbFile: undefined, databaseUrl: url } : {}) });
    const manifest = validManifest(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'manifests/invoicing.json'), 'utf8')));
    const sources: AppSource[] = [{ manifest, dir: path.join(REPO_ROOT, 'apps-installed', 'invoicing'), origin: 'first-party' }];
    const clockA = new ManualClock(START);
    const a = await buildHost({ dbFile: file, clock: clockA, sources, config: { dataDir: dir } });
    let child: ChildProcess | undefined;
    try {
      const { company } = await a.createCompany({ name: 'Two Hosts Co', apps: ['invoicing'] });
      const { key } = await a.keys.create({ companyId: company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: 'owner' });
      const h = { authorization: `Bearer ${key}`, 'x-company-id': company.id };
      const post = async (url: string, body?: Json) => {
        const res = await a.app.inject({ method: 'POST', url, headers: h, ...(body ? { payload: body } : {}) });
        expect(res.statusCode, res.body).toBeLessThan(300);
        return JSON.parse(res.body).data as Doc;
      };
      const customer = await post('/api/v1/customers', { name: 'Acme' });
      const ids: string[] = [];
      for (let i = 0; i < 100; i++) {
        const inv = await post('/api/v1/invoices', { customerId: customer.id, date: '2026-01-15', dueDate: '2026-01-15', lines: [{ description: 'Work', quantity: 1, unitPrice: 10 }] });
        await post(`/api/v1/invoices/${inv.id}/send`);
        ids.push(inv.id);
      }
      clockA.advance(2 * DAY);
      child = fork(path.join(REPO_ROOT, 'test/schedule-host-child.ts'), [file, dir, String(clockA.now())], {
        cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const next = () =>
        new Promise<{ ready?: boolean; fired?: number; error?: string }>((resolve, reject) => {
          child!.once('message', resolve);
          child!.once('exit', (code) => reject(new Error(`the second host exited (${code})`)));
        });
      expect(await next()).toEqual({ ready: true });
      // Both tick at the same instant, then each again.
      const together = async () => {
        const at = Date.now() + 300;
        const fromChild = next();
        child!.send({ tickAt: at });
        await new Promise((r) => setTimeout(r, at - Date.now()));
        return Promise.all([a.scheduler.tick(), fromChild]);
      };
      const [na, nb] = await together();
      const [ma, mb] = await together();
      expect(nb.error).toBeUndefined();
      expect(mb.error).toBeUndefined();
      console.log(`two hosts ticking at once fired ${na} + ${nb.fired} (then ${ma} + ${mb.fired}) of ${ids.length}`);
      expect(na + nb.fired! + ma + mb.fired!).toBe(ids.length);
      for (const id of ids) expect(await overdueEvents(a, company.id, id), id).toBe(1);
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.send({ close: true });
        await exited;
      }
      await a.close();
    }
    // A host started later (a restart) finds nothing left to fire.
    const c = await buildHost({ dbFile: file, clock: new ManualClock(START + 3 * DAY), sources, config: { dataDir: dir } });
    try {
      expect(await c.scheduler.tick()).toBe(0);
    } finally {
      await c.close();
      fs.rmSync(dir, { recursive: true, force: true });
      if (url) await dropTestDatabase(url);
    }
  }, 120_000);
});

// ---- app code and the audit trail ------------------------------------------------------------------

describe("app code's audit rows", () => {
  it('may record the writes of its document types and the actions of the permissions it declares, each an audit topic of the catalogue, and nothing else', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-audit-probe-'));
    const bi = (en: string, ar: string) => ({ en, ar });
    const manifest = {
      id: 'audit-probe', version: '1.0.0', host: '^0.1.0', name: bi('Audit probe', 'مسبار التدقيق'), description: bi('Records audit rows', 'يسجّل صفوف التدقيق'),
      strings: { en: { title: 'Probe' }, ar: { title: 'المسبار' } },
      permissions: [{ resource: 'probe-gadgets', action: 'inspect', role: 'Member', description: bi('Inspect a gadget', 'فحص أداة') }],
      documentTypes: [{ name: 'gadget', resource: 'probe-gadgets', idPrefix: 'pgd', label: bi('Gadget', 'أداة'), fields: [{ name: 'name', type: 'string', required: true, maxLength: 50, label: bi('Name', 'الاسم') }] }],
      eventFamilies: [{ family: 'audit probe', prefix: 'probe', label: bi('Probe', 'المسبار'), topics: [] }],
      server: 'server.mjs',
    };
    const record = (action: string) => `async handler(req, ctx) { await ctx.audit.record({ action: '${action}', resource: 'probe-gadgets', resourceId: req.params.id }); return { body: { data: {} } }; }`;
    const routeOf = (name: string, permission: string, action: string) =>
      `{ method: 'POST', url: '/probe-gadgets/:id/${name}', permission: '${permission}', summary: '${name}', schema: { params: { type: 'object', properties: { id: { type: 'string' } } }, response: { 200: { type: 'object' } } }, ${record(action)} }`;
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    fs.writeFileSync(
      path.join(dir, 'server.mjs'),
      `export default { id: 'audit-probe', routes: [${routeOf('inspect', 'probe-gadgets:inspect', 'inspect')}, ${routeOf('touch', 'probe-gadgets:update', 'update')}, ${routeOf('poke', 'probe-gadgets:update', 'probe.gadget.poked')}] };\n`,
    );
    const h = await buildHost({ dbFile: ':memory:', sources: [{ manifest: validManifest(manifest), dir, origin: 'package' }] });
    try {
      const { company } = await h.createCompany({ name: 'Probe Co', apps: ['audit-probe'] });
      const { key } = await h.keys.create({ companyId: company.id, actor: CLI_ACTOR, appId: 'core' }, { role: 'Owner', scopes: ['*'], name: 'owner' });
      const send = (url: string) => h.app.inject({ method: url.startsWith('GET') ? 'GET' : 'POST', url: url.replace(/^(GET|POST) /, ''), headers: { authorization: `Bearer ${key}`, 'x-company-id': company.id } });
      const cat = JSON.parse((await send('GET /api/v1/events/catalogue?family=audit')).body).data.families[0].topics.map((t: { topic: string }) => t.topic);
      expect(cat).toEqual(expect.arrayContaining(['audit.probe_gadgets.inspect', 'audit.probe_gadgets.update', 'audit.probe_gadgets.create']));
      expect((await send('POST /api/v1/probe-gadgets/pgd_1/inspect')).statusCode).toBe(200);
      expect((await send('POST /api/v1/probe-gadgets/pgd_1/touch')).statusCode).toBe(200);
      const refused = await send('POST /api/v1/probe-gadgets/pgd_1/poke');
      expect(refused.statusCode).toBe(500);
      expect(JSON.parse(refused.body).error).toMatchObject({ code: 'APP_ERROR', details: [{ app: 'audit-probe', rule: 'undeclared_audit_action', resource: 'probe-gadgets', action: 'probe.gadget.poked' }] });
      const topics = (await h.storage.db.all<{ topic: string }>('SELECT topic FROM outbox WHERE company_id = ? ORDER BY seq', [company.id])).map((r) => r.topic);
      expect(topics.filter((t) => t.startsWith('audit.probe_gadgets.'))).toEqual(['audit.probe_gadgets.inspect', 'audit.probe_gadgets.update']);
      expect(topics.filter((t) => !cat.includes(t) && t.startsWith('audit.'))).toEqual([]);
    } finally {
      await h.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
