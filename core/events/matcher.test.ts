import { describe, expect, it } from 'vitest';
import { TopicMatcher } from './matcher.ts';
import { parsePattern, patternMatches, type ParsedPattern } from './patterns.ts';

const sorted = <T>(xs: T[]) => [...xs].sort();

describe('TopicMatcher', () => {
  it('matches exact topics', () => {
    const m = new TopicMatcher<string>();
    m.add('a', ['crm.lead.created']);
    m.add('b', ['crm.lead.lost']);
    expect(m.match('crm.lead.created')).toEqual(['a']);
    expect(m.match('crm.lead.lost')).toEqual(['b']);
    expect(m.match('crm.lead.won')).toEqual([]);
    expect(m.size).toBe(2);
  });

  it('matches family patterns on the part before the first dot', () => {
    const m = new TopicMatcher<string>();
    m.add('crm', ['crm.*']);
    m.add('app', ['app.*']);
    expect(m.match('crm.lead.created')).toEqual(['crm']);
    expect(m.match('crm.activity.done')).toEqual(['crm']);
    expect(m.match('app.installed')).toEqual(['app']);
    expect(m.match('appointments.booked')).toEqual([]);
    expect(m.match('crmx.lead.created')).toEqual([]);
    expect(m.match('crm')).toEqual([]);
  });

  it('matches `*` against every topic but the audit trail', () => {
    const m = new TopicMatcher<string>();
    m.add('all', ['*']);
    expect(m.match('crm.lead.created')).toEqual(['all']);
    expect(m.match('auditor.report.filed')).toEqual(['all']);
    expect(m.match('audit.invoices.create')).toEqual([]);
  });

  it('delivers the audit trail only to those who opt in', () => {
    const m = new TopicMatcher<string>();
    m.add('all', ['*']);
    m.add('audit', ['audit.*']);
    m.add('one', ['audit.invoices.create']);
    m.add('both', ['*', 'audit.*']);
    expect(sorted(m.match('audit.invoices.create'))).toEqual(['audit', 'both', 'one']);
    expect(sorted(m.match('audit.customers.update'))).toEqual(['audit', 'both']);
    // and opting in to the audit trail does not subscribe to anything else
    expect(sorted(m.match('invoice.created'))).toEqual(['all', 'both']);
  });

  it('returns each key once even when several of its patterns match', () => {
    const m = new TopicMatcher<number>();
    m.add(1, ['crm.lead.created', 'crm.*', '*']);
    m.add(2, ['crm.*', 'crm.*']);
    m.add(3, ['*', 'invoice.*']);
    expect(sorted(m.match('crm.lead.created'))).toEqual([1, 2, 3]);
    expect(sorted(m.match('crm.lead.created'))).toEqual([1, 2, 3]);
    expect(m.patternsOf(2)).toEqual(['crm.*']);
  });

  it('adds to, removes and replaces a key', () => {
    const m = new TopicMatcher<string>();
    m.add('k', ['crm.*']);
    m.add('k', ['invoice.created']);
    expect(m.patternsOf('k')).toEqual(['crm.*', 'invoice.created']);
    expect(m.match('invoice.created')).toEqual(['k']);
    m.replace('k', ['helpdesk.*']);
    expect(m.match('crm.lead.created')).toEqual([]);
    expect(m.match('invoice.created')).toEqual([]);
    expect(m.match('helpdesk.ticket.created')).toEqual(['k']);
    expect(m.size).toBe(1);
    expect(m.remove('k')).toBe(true);
    expect(m.remove('k')).toBe(false);
    expect(m.match('helpdesk.ticket.created')).toEqual([]);
    expect(m.size).toBe(0);
    m.replace('k', ['*']);
    expect(m.match('x.y')).toEqual(['k']);
    m.replace('k', []);
    expect(m.has('k')).toBe(false);
    m.add('k', []);
    expect(m.size).toBe(0);
  });

  it('refuses an invalid pattern without changing anything', () => {
    const m = new TopicMatcher<string>();
    m.add('k', ['crm.*']);
    expect(() => m.add('k', ['invoice.*', 'invoice.*.x'])).toThrow(TypeError);
    expect(() => m.replace('k', ['**'])).toThrow(TypeError);
    expect(m.patternsOf('k')).toEqual(['crm.*']);
    expect(m.match('invoice.created')).toEqual([]);
    expect(m.match('crm.lead.created')).toEqual(['k']);
  });

  it('agrees with a naive scan on random subscriptions and churn', () => {
    // Seeded PRNG (mulberry32) so a failure reproduces.
    let seed = 0x5eed;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const prefixes = ['crm', 'invoice', 'app', 'appointments', 'audit', 'auditor', 'pos', 'auto-workshop'];
    const topics = prefixes.flatMap((p) => [`${p}.created`, `${p}.thing.done`, `${p}.thing.other.moved`]);
    const randomPattern = () => {
      const r = rand();
      if (r < 0.05) return '*';
      if (r < 0.1) return 'audit.*';
      if (r < 0.45) return `${pick(prefixes)}.*`;
      return pick(topics);
    };

    const m = new TopicMatcher<number>();
    const model = new Map<number, ParsedPattern[]>();
    const setModel = (k: number, ps: string[]) => {
      const parsed = ps.map((p) => parsePattern(p) as ParsedPattern);
      if (parsed.length === 0) model.delete(k);
      else model.set(k, parsed);
    };
    let hits = 0;
    for (let step = 0; step < 3000; step++) {
      const k = Math.floor(rand() * 300);
      const op = rand();
      if (op < 0.6) {
        const ps = Array.from({ length: 1 + Math.floor(rand() * 4) }, randomPattern);
        m.add(k, ps);
        setModel(k, [...new Set([...(model.get(k) ?? []).map(toText), ...ps])]);
      } else if (op < 0.8) {
        const ps = Array.from({ length: Math.floor(rand() * 3) }, randomPattern);
        m.replace(k, ps);
        setModel(k, ps);
      } else {
        m.remove(k);
        model.delete(k);
      }
      if (step % 10 === 0) {
        expect(m.size).toBe(model.size);
        for (const topic of [...topics, 'crm', 'audit']) {
          const got = m.match(topic);
          expect(new Set(got).size).toBe(got.length);
          const want = [...model].filter(([, ps]) => ps.some((p) => patternMatches(p, topic))).map(([key]) => key);
          expect(sorted(got)).toEqual(sorted(want));
          hits += want.length;
        }
      }
    }
    // the comparison is not vacuous: many matches, audit events included
    expect(hits).toBeGreaterThan(10_000);
    expect(m.match('audit.thing.done').length).toBeGreaterThan(0);
  });
});

function toText(p: ParsedPattern): string {
  return p.kind === 'all' ? '*' : p.kind === 'family' ? `${p.prefix}.*` : p.topic;
}
