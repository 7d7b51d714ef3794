import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { manifestSchema } from '../../manifests/manifest.schema.ts';
import {
  PREFIX_RE,
  TOPIC_RE,
  familyOf,
  isAuditTopic,
  parsePattern,
  patternMatches,
  validatePatterns,
  type KnownTopics,
} from './patterns.ts';

const known: KnownTopics = {
  prefixes: new Set(['crm', 'invoice', 'auto-workshop', 'reportBuilder', 'app']),
  topics: new Set([
    'crm.lead.created',
    'crm.lead.lost',
    'invoice.created',
    'auto-workshop.job.ready',
    'reportBuilder.schedule.sent',
    'app.installed',
    'audit.invoices.create',
  ]),
};

describe('parsePattern', () => {
  it('reads the three forms', () => {
    expect(parsePattern('crm.lead.created')).toEqual({ kind: 'exact', topic: 'crm.lead.created' });
    expect(parsePattern('invoice.created')).toEqual({ kind: 'exact', topic: 'invoice.created' });
    expect(parsePattern('reportBuilder.schedule.sent')).toEqual({ kind: 'exact', topic: 'reportBuilder.schedule.sent' });
    expect(parsePattern('crm.*')).toEqual({ kind: 'family', prefix: 'crm' });
    expect(parsePattern('auto-workshop.*')).toEqual({ kind: 'family', prefix: 'auto-workshop' });
    expect(parsePattern('audit.*')).toEqual({ kind: 'family', prefix: 'audit' });
    expect(parsePattern('*')).toEqual({ kind: 'all' });
  });

  it.each([
    [42, 'type'],
    [null, 'type'],
    [['crm.*'], 'type'],
    ['', 'empty'],
    [' crm.*', 'whitespace'],
    ['crm.* ', 'whitespace'],
    ['crm .lead', 'whitespace'],
    ['crm.lead\t', 'whitespace'],
    ['**', 'grammar'],
    ['*.*', 'grammar'],
    ['*.created', 'grammar'],
    ['invoice.*.x', 'grammar'],
    ['invoice.**', 'grammar'],
    ['crm*', 'grammar'],
    ['crm.lead.*', 'grammar'],
    ['.*', 'grammar'],
    ['invoice.', 'grammar'],
    ['.x', 'grammar'],
    ['crm..lead', 'grammar'],
    ['crm', 'grammar'],
    ['crm.lead.1created', 'grammar'],
    ['crm/lead', 'grammar'],
    ['9crm.lead', 'grammar'],
    ['crm.lead!', 'grammar'],
    [`crm.${'a'.repeat(300)}`, 'grammar'],
  ])('refuses %j with rule %s', (p, rule) => {
    const r = parsePattern(p);
    expect(r).toMatchObject({ kind: 'invalid', rule });
    expect((r as { message: string }).message.length).toBeGreaterThan(0);
  });

  it('suggests the obvious fix', () => {
    expect(parsePattern('crm')).toMatchObject({ rule: 'grammar', suggestion: 'crm.*' });
    expect(parsePattern('crm.lead.*')).toMatchObject({ rule: 'grammar', suggestion: 'crm.*' });
    expect(parsePattern(' crm.* ')).toMatchObject({ rule: 'whitespace', suggestion: 'crm.*' });
  });

  it('keeps its segment grammar in step with the manifest schema', () => {
    const family = manifestSchema.properties.eventFamilies.items;
    expect(PREFIX_RE.source).toBe(family.properties.prefix.pattern);
    expect(TOPIC_RE.source).toBe(family.properties.topics.items.properties.topic.pattern);
  });
});

// The spec's catalogue, as the project keeps it in test/data.
const specCatalogue = new URL('../../test/data/event-catalogue.json', import.meta.url);

describe('the spec catalogue', () => {
  it('parses every listed topic as exact and every prefix as a family', () => {
    const spec = JSON.parse(readFileSync(specCatalogue, 'utf8')) as { catalogue: { prefix: string; listed: string[] }[] };
    expect(spec.catalogue).toHaveLength(80);
    for (const f of spec.catalogue) {
      expect(parsePattern(`${f.prefix}.*`)).toEqual({ kind: 'family', prefix: f.prefix });
      for (const t of f.listed) {
        expect(parsePattern(t)).toEqual({ kind: 'exact', topic: t });
        expect(familyOf(t)).toBe(f.prefix);
      }
    }
  });
});

describe('patternMatches', () => {
  const m = (p: string, t: string) => patternMatches(parsePattern(p) as never, t);
  it('exact, family and all', () => {
    expect(m('crm.lead.created', 'crm.lead.created')).toBe(true);
    expect(m('crm.lead.created', 'crm.lead.lost')).toBe(false);
    expect(m('crm.*', 'crm.lead.created')).toBe(true);
    expect(m('crm.*', 'crmx.lead.created')).toBe(false);
    expect(m('app.*', 'appointments.booked')).toBe(false);
    expect(m('*', 'crm.lead.created')).toBe(true);
  });
  it('keeps the audit trail opt-in', () => {
    expect(m('*', 'audit.invoices.create')).toBe(false);
    expect(m('audit.*', 'audit.invoices.create')).toBe(true);
    expect(m('audit.invoices.create', 'audit.invoices.create')).toBe(true);
    expect(m('*', 'auditing.x.y')).toBe(true);
    expect(isAuditTopic('audit.x.y')).toBe(true);
    expect(isAuditTopic('auditor.x')).toBe(false);
    expect(familyOf('crm.lead.created')).toBe('crm');
    expect(familyOf('crm')).toBe('crm');
  });
});

describe('validatePatterns', () => {
  it('accepts a good list', () => {
    expect(
      validatePatterns(['crm.lead.created', 'invoice.*', '*', 'audit.*', 'audit.invoices.create', 'app.installed'], known),
    ).toEqual([]);
  });

  it('refuses a list that is not a list, or empty', () => {
    expect(validatePatterns('crm.*', known)).toEqual([
      expect.objectContaining({ pointer: '/topics', pattern: 'crm.*', rule: 'type' }),
    ]);
    expect(validatePatterns(undefined, known)).toMatchObject([{ pointer: '/topics', rule: 'type' }]);
    expect(validatePatterns([], known)).toMatchObject([{ pointer: '/topics', rule: 'min_items' }]);
  });

  it('reports every problem with its pointer and rule', () => {
    const problems = validatePatterns(
      ['crm.*', 7, '', ' crm.*', 'invoice.*.x', 'nosuch.*', 'crm.lead.won', 'crm.*', 'nosuch.thing.done', 'audit.*', 'audit.x.y', '*'],
      known,
    );
    expect(problems.map(({ pointer, pattern, rule }) => ({ pointer, pattern, rule }))).toEqual([
      { pointer: '/topics/1', pattern: 7, rule: 'type' },
      { pointer: '/topics/2', pattern: '', rule: 'empty' },
      { pointer: '/topics/3', pattern: ' crm.*', rule: 'whitespace' },
      { pointer: '/topics/4', pattern: 'invoice.*.x', rule: 'grammar' },
      { pointer: '/topics/5', pattern: 'nosuch.*', rule: 'unknown_family' },
      { pointer: '/topics/6', pattern: 'crm.lead.won', rule: 'unknown_topic' },
      { pointer: '/topics/7', pattern: 'crm.*', rule: 'duplicate' },
      { pointer: '/topics/8', pattern: 'nosuch.thing.done', rule: 'unknown_topic' },
      { pointer: '/topics/10', pattern: 'audit.x.y', rule: 'unknown_topic' },
    ]);
    for (const p of problems) expect(typeof p.message).toBe('string');
  });

  it('reports a repeated bad pattern once as bad, then as duplicate', () => {
    expect(validatePatterns(['**', '**'], known).map((p) => p.rule)).toEqual(['grammar', 'duplicate']);
  });

  it('suggests near names', () => {
    expect(validatePatterns(['invoices.*'], known)[0]).toMatchObject({ rule: 'unknown_family', suggestion: 'invoice.*' });
    expect(validatePatterns(['audits.*'], known)[0]).toMatchObject({ rule: 'unknown_family', suggestion: 'audit.*' });
    expect(validatePatterns(['crm.lead.creatd'], known)[0]).toMatchObject({ rule: 'unknown_topic', suggestion: 'crm.lead.created' });
    expect(validatePatterns(['zzzzzz.*'], known)[0].suggestion).toBeUndefined();
  });

  it('knows the audit prefix without any app declaring it', () => {
    const empty: KnownTopics = { prefixes: new Set(), topics: new Set() };
    expect(validatePatterns(['audit.*'], empty)).toEqual([]);
    expect(validatePatterns(['audit.invoices.create'], empty)).toMatchObject([{ rule: 'unknown_topic' }]);
  });

  it('honours a pointer base and a list limit', () => {
    expect(validatePatterns(['crm.*', 'bad.*.x'], known, { pointer: '/endpoint/topics' })).toMatchObject([
      { pointer: '/endpoint/topics/1', rule: 'grammar' },
    ]);
    expect(validatePatterns(['crm.*', 'invoice.*', '*'], known, { maxItems: 2 })).toMatchObject([
      { pointer: '/topics', rule: 'max_items' },
    ]);
  });
});
