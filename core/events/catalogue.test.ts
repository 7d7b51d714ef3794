import { describe, expect, it } from 'vitest';
import type { EventFamilyDecl, TopicDecl } from '../../manifests/manifest.schema.ts';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import {
  buildCatalogue,
  catalogueProblems,
  knownTopics,
  ownerOfPrefix,
  prefixConflicts,
  type CatalogueInput,
  type CatalogueSource,
} from './catalogue.ts';
import { validatePatterns } from './patterns.ts';

const topic = (name: string): TopicDecl => ({
  topic: name,
  description: { en: `en:${name}`, ar: `ar:${name}` },
  source: { on: 'operation', operation: `emits ${name}` },
  payload: { type: 'object', properties: { id: { type: 'string' } } },
  example: { id: 'x_1' },
});

const family = (display: string, prefix: string, topics: string[]): EventFamilyDecl => ({
  family: display,
  prefix,
  label: { en: `EN ${display}`, ar: `AR ${display}` },
  topics: topics.map(topic),
});

const sources: CatalogueSource[] = [
  { appId: 'core', families: [family('apps', 'app', ['app.installed', 'app.enabled']), family('audit trail', 'audit', [])] },
  { appId: 'crm', families: [family('crm', 'crm', ['crm.lead.lost', 'crm.lead.created'])] },
  { appId: 'pos', families: [family('point of sale', 'pos', ['pos.sale', 'pos.refund'])] },
  { appId: 'invoicing', families: [family('invoicing', 'invoice', ['invoice.paid'])] },
];

const generated = {
  invoice: [topic('invoice.created'), topic('invoice.paid')],
  audit: [topic('audit.invoices.create'), topic('audit.customers.update')],
};

const input = (installed: string[] = ['crm', 'invoicing']): CatalogueInput => ({ sources, generated, installed });

const names = (c: ReturnType<typeof buildCatalogue>) => c.families.map((f) => [f.family, f.topics.map((t) => t.topic)]);

describe('buildCatalogue', () => {
  it('lists every family sorted by display name, topics by name, with owners and counts', () => {
    const c = buildCatalogue(input(), { lang: 'en' });
    expect(names(c)).toEqual([
      ['apps', ['app.enabled', 'app.installed']],
      ['audit trail', ['audit.customers.update', 'audit.invoices.create']],
      ['crm', ['crm.lead.created', 'crm.lead.lost']],
      ['invoicing', ['invoice.created', 'invoice.paid']],
      ['point of sale', ['pos.refund', 'pos.sale']],
    ]);
    expect(c.totals).toEqual({ families: 5, topics: 10 });
    const crm = c.families.find((f) => f.prefix === 'crm')!;
    expect(crm).toMatchObject({ family: 'crm', label: 'EN crm', owner: 'crm', installed: true, optIn: false, count: 2 });
    expect(crm.topics[0]).toEqual({
      topic: 'crm.lead.created',
      description: 'en:crm.lead.created',
      source: { on: 'operation', operation: 'emits crm.lead.created' },
      payload: { type: 'object', properties: { id: { type: 'string' } } },
      example: { id: 'x_1' },
      owner: 'crm',
      optIn: false,
    });
    expect(c.families.find((f) => f.prefix === 'pos')).toMatchObject({ owner: 'pos', installed: false });
    expect(c.families.find((f) => f.prefix === 'app')).toMatchObject({ owner: 'core', installed: true });
  });

  it('marks the audit trail opt-in, on the family and each topic', () => {
    const audit = buildCatalogue(input(), { lang: 'en' }).families.find((f) => f.prefix === 'audit')!;
    expect(audit.optIn).toBe(true);
    expect(audit.topics.every((t) => t.optIn && t.owner === 'core')).toBe(true);
  });

  it('speaks Arabic', () => {
    const c = buildCatalogue(input(), { lang: 'ar' });
    const pos = c.families.find((f) => f.prefix === 'pos')!;
    expect(pos.label).toBe('AR point of sale');
    expect(pos.topics[0].description).toBe('ar:pos.refund');
    // the sort stays on the display name, whatever the language
    expect(c.families.map((f) => f.prefix)).toEqual(['app', 'audit', 'crm', 'invoice', 'pos']);
  });

  it('keeps a topic the app declares over the generated one of the same name', () => {
    const paid = buildCatalogue(input(), { lang: 'en', family: 'invoice' }).families[0].topics.filter((t) => t.topic === 'invoice.paid');
    expect(paid).toHaveLength(1);
    expect(paid[0].owner).toBe('invoicing');
  });

  it('filters by family prefix or display name', () => {
    expect(names(buildCatalogue(input(), { lang: 'en', family: 'pos' }))).toEqual([['point of sale', ['pos.refund', 'pos.sale']]]);
    expect(names(buildCatalogue(input(), { lang: 'en', family: 'Point of Sale' }))).toEqual([['point of sale', ['pos.refund', 'pos.sale']]]);
    expect(buildCatalogue(input(), { lang: 'en', family: 'nosuch' })).toEqual({ families: [], totals: { families: 0, topics: 0 } });
  });

  it('filters to installed apps (the core is always installed)', () => {
    expect(buildCatalogue(input(['crm']), { lang: 'en', installedOnly: true }).families.map((f) => f.prefix)).toEqual([
      'app',
      'audit',
      'crm',
    ]);
    expect(buildCatalogue(input([]), { lang: 'en', installedOnly: true }).totals).toEqual({ families: 2, topics: 4 });
  });

  it('filters by pattern with subscription semantics', () => {
    const all = buildCatalogue(input(), { lang: 'en', pattern: '*' });
    expect(all.families.map((f) => f.prefix)).toEqual(['app', 'crm', 'invoice', 'pos']);
    expect(all.totals).toEqual({ families: 4, topics: 8 });
    expect(names(buildCatalogue(input(), { lang: 'en', pattern: 'audit.*' }))).toEqual([
      ['audit trail', ['audit.customers.update', 'audit.invoices.create']],
    ]);
    expect(names(buildCatalogue(input(), { lang: 'en', pattern: 'crm.lead.lost' }))).toEqual([['crm', ['crm.lead.lost']]]);
    expect(buildCatalogue(input(), { lang: 'en', pattern: 'crm.lead.won' }).totals).toEqual({ families: 0, topics: 0 });
    // an audit family with no topics yet is still reached by `audit.*`
    const bare = buildCatalogue({ sources, installed: [] }, { lang: 'en', pattern: 'audit.*' });
    expect(bare.families).toMatchObject([{ prefix: 'audit', count: 0, topics: [] }]);
    // filters combine
    expect(buildCatalogue(input(), { lang: 'en', pattern: '*', installedOnly: true, family: 'crm' }).totals).toEqual({
      families: 1,
      topics: 2,
    });
  });

  it('refuses a pattern that does not parse', () => {
    let err: unknown;
    try {
      buildCatalogue(input(), { lang: 'en', pattern: 'crm.*.x' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DiwanError);
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ pointer: '/pattern', rule: 'grammar' }] });
  });
});

describe('prefix ownership and integrity', () => {
  const clash: CatalogueSource[] = [
    ...sources,
    { appId: 'crm-pro', families: [family('crm pro', 'crm', ['crm.deal.won'])] },
    { appId: 'sales', families: [family('crm', 'sales', ['sales.order.placed', 'crm.lead.stolen', 'sales.order.placed'])] },
  ];

  it('names the owner of a prefix', () => {
    expect(ownerOfPrefix(sources, 'crm')).toBe('crm');
    expect(ownerOfPrefix(sources, 'audit')).toBe('core');
    expect(ownerOfPrefix(sources, 'nosuch')).toBeUndefined();
    expect(ownerOfPrefix(clash, 'crm')).toBe('crm');
  });

  it('lists prefixes claimed twice', () => {
    expect(prefixConflicts(sources)).toEqual([]);
    expect(prefixConflicts(clash)).toEqual([{ prefix: 'crm', owners: ['crm', 'crm-pro'] }]);
    const twice: CatalogueSource[] = [{ appId: 'x', families: [family('a', 'a', []), family('b', 'a', [])] }];
    expect(prefixConflicts(twice)).toEqual([{ prefix: 'a', owners: ['x', 'x'] }]);
  });

  it('reports every integrity problem and leaves the offending parts out', () => {
    const problems = catalogueProblems(clash, { ...generated, nosuch: [topic('nosuch.x')], pos: [topic('crm.lead.sneaky')] });
    expect(problems).toEqual([
      { rule: 'prefix_claimed', prefix: 'crm', owners: ['crm', 'crm-pro'] },
      { rule: 'topic_outside_prefix', topic: 'crm.lead.stolen', prefix: 'sales', owner: 'sales' },
      { rule: 'duplicate_topic', topic: 'sales.order.placed', owner: 'sales' },
      { rule: 'family_name_claimed', family: 'crm', prefixes: ['crm', 'sales'] },
      { rule: 'generated_without_family', prefix: 'nosuch', topics: ['nosuch.x'] },
      { rule: 'generated_outside_prefix', topic: 'crm.lead.sneaky', prefix: 'pos' },
    ]);
    expect(catalogueProblems(sources, generated)).toEqual([]);
    const c = buildCatalogue({ sources: clash, installed: ['crm-pro', 'sales'] }, { lang: 'en', pattern: 'crm.*' });
    expect(c.families).toMatchObject([{ prefix: 'crm', owner: 'crm', installed: false, count: 2 }]);
    const sales = buildCatalogue({ sources: clash, installed: [] }, { lang: 'en', family: 'sales' });
    expect(sales.families[0].topics.map((t) => t.topic)).toEqual(['sales.order.placed']);
  });

  it('gives validatePatterns what apps declare and generate', () => {
    const known = knownTopics(sources, new Map(Object.entries(generated)));
    expect([...known.prefixes].sort()).toEqual(['app', 'audit', 'crm', 'invoice', 'pos']);
    expect(known.topics.has('invoice.created')).toBe(true);
    expect(known.topics.has('audit.invoices.create')).toBe(true);
    expect(validatePatterns(['crm.*', 'invoice.created', 'audit.invoices.create', '*'], known)).toEqual([]);
    expect(validatePatterns(['hr.*', 'crm.deal.won'], known).map((p) => p.rule)).toEqual(['unknown_family', 'unknown_topic']);
    // the losing claimant's topics are not known
    expect(knownTopics(sources).topics.has('crm.deal.won')).toBe(false);
  });
});
