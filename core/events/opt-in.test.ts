// The opt-in families (issue 12): the audit trail and the webhook operations are reached only by
// naming them (`<prefix>.*` or an exact topic), never by `*`, in the reference semantics, the
// matcher index, the catalogue and the events API's SQL filter alike. One set, not one special
// case per family.
import { describe, expect, it } from 'vitest';
import { OPT_IN_PREFIXES, isOptInTopic, parsePattern, patternMatches, validatePatterns, type ParsedPattern } from './patterns.ts';
import { TopicMatcher } from './matcher.ts';
import { buildCatalogue } from './catalogue.ts';
import { decodeCursor, encodeCursor, topicFilter } from './event-log.ts';

const parsed = (p: string) => parsePattern(p) as ParsedPattern;
const known = { prefixes: new Set(['crm', 'webhook', 'audit']), topics: new Set(['crm.lead.created', 'webhook.delivery.dead', 'webhook.endpoint.disabled', 'audit.x.create']) };

describe('opt-in families', () => {
  it('are the audit trail and the webhook operations', () => {
    expect([...OPT_IN_PREFIXES].sort()).toEqual(['audit', 'webhook']);
    expect(isOptInTopic('webhook.delivery.dead')).toBe(true);
    expect(isOptInTopic('audit.invoices.create')).toBe(true);
    expect(isOptInTopic('webhooks.x')).toBe(false);
    expect(isOptInTopic('crm.lead.created')).toBe(false);
  });

  it('are not matched by `*`, but by their family pattern or an exact topic', () => {
    for (const topic of ['webhook.delivery.dead', 'webhook.endpoint.disabled', 'audit.x.create']) {
      expect(patternMatches(parsed('*'), topic), topic).toBe(false);
      expect(patternMatches(parsed(`${topic.split('.')[0]}.*`), topic), topic).toBe(true);
      expect(patternMatches(parsed(topic), topic), topic).toBe(true);
    }
    expect(patternMatches(parsed('*'), 'crm.lead.created')).toBe(true);
  });

  it('agree in the matcher index', () => {
    const m = new TopicMatcher<string>();
    m.add('star', ['*']);
    m.add('ops', ['webhook.*']);
    m.add('dead', ['webhook.delivery.dead']);
    m.add('audit', ['audit.*']);
    expect(m.match('webhook.delivery.dead').sort()).toEqual(['dead', 'ops']);
    expect(m.match('webhook.endpoint.disabled')).toEqual(['ops']);
    expect(m.match('audit.x.create')).toEqual(['audit']);
    expect(m.match('crm.lead.created')).toEqual(['star']);
  });

  it('are marked optIn in the catalogue and left out of `*`', () => {
    const sources = [
      { appId: 'core', families: [{ family: 'webhook operations', prefix: 'webhook', label: { en: 'W', ar: 'و' }, topics: [{ topic: 'webhook.delivery.dead', description: { en: 'd', ar: 'د' }, source: { on: 'operation' as const, operation: 'x' } }] }] },
      { appId: 'crm', families: [{ family: 'crm', prefix: 'crm', label: { en: 'C', ar: 'ع' }, topics: [{ topic: 'crm.lead.created', description: { en: 'c', ar: 'ع' }, source: { on: 'operation' as const, operation: 'x' } }] }] },
    ];
    const all = buildCatalogue({ sources, installed: ['crm'] }, { lang: 'en' });
    expect(all.families.find((f) => f.prefix === 'webhook')).toMatchObject({ optIn: true, owner: 'core' });
    expect(all.families.find((f) => f.prefix === 'crm')).toMatchObject({ optIn: false });
    expect(buildCatalogue({ sources, installed: ['crm'] }, { lang: 'en', pattern: '*' }).families.map((f) => f.prefix)).toEqual(['crm']);
    expect(buildCatalogue({ sources, installed: ['crm'] }, { lang: 'en', pattern: 'webhook.*' }).families.map((f) => f.prefix)).toEqual(['webhook']);
  });

  it('are accepted in subscriptions when known, and kept out of `*` in the events API filter', () => {
    expect(validatePatterns(['webhook.*', 'webhook.endpoint.disabled'], known)).toEqual([]);
    expect(topicFilter(['*'], known)).toEqual({ topics: [], prefixes: [], all: true, allExcept: ['audit', 'webhook'] });
    expect(topicFilter(['webhook.*', 'crm.lead.created'], known)).toMatchObject({ topics: ['crm.lead.created'], prefixes: ['webhook'], all: false });
  });
});

describe('event cursors', () => {
  it('round-trip the event and its time, and refuse anything else', () => {
    const c = encodeCursor({ id: 'evt_0123456789abcdefghij', createdAt: '2026-01-01T00:00:00.000Z' });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual({ id: 'evt_0123456789abcdefghij', at: Date.UTC(2026, 0, 1) });
    for (const bad of ['', 'x', 'evt_0123456789abcdefghij', Buffer.from('{"e":"whe_x","t":1}').toString('base64url'), Buffer.from('{"e":"evt_0123456789abcdefghij"}').toString('base64url'), 'a'.repeat(300)]) {
      expect(decodeCursor(bad), bad).toBeUndefined();
    }
  });
});
