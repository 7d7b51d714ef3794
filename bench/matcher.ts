// Topic matching: the subscription index (`core/events/matcher.ts`) against a naive scan over
// every endpoint's patterns, in the same run, on the same endpoints and the same event stream.
// 10,000 endpoints with mixed patterns (mostly exact topics and family patterns over 80
// prefixes, a few `*`, a few `audit.*`); the stream includes audit events.
//
//   npx tsx bench/matcher.ts [--endpoints 10000] [--events 200000]
import { pathToFileURL } from 'node:url';
import { TopicMatcher } from '../core/events/matcher.ts';
import { prng } from './lib/util.ts';
import { parsePattern, patternMatches, type ParsedPattern } from '../core/events/patterns.ts';

export interface MatcherBenchOptions {
  endpoints?: number;
  events?: number;
  seed?: number;
}

export interface MatcherBenchResult {
  endpoints: number;
  patterns: number;
  events: number;
  /** Deliveries per event on average (both ways agree on it). */
  meanMatches: number;
  indexEventsPerSec: number;
  naiveEventsPerSec: number;
  ratio: number;
  agree: boolean;
}


export function runMatcherBench(options: MatcherBenchOptions = {}): MatcherBenchResult {
  const nEndpoints = options.endpoints ?? 10_000;
  const nEvents = options.events ?? 200_000;
  const rand = prng(options.seed ?? 42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

  // ~80 families of 3–12 topics (about the catalogue's 521), plus the audit trail.
  const prefixes = Array.from({ length: 80 }, (_, i) => `fam${i}`);
  const topicsOf = new Map<string, string[]>();
  for (const p of prefixes) {
    const n = 3 + Math.floor(rand() * 10);
    topicsOf.set(p, Array.from({ length: n }, (_, j) => `${p}.thing${j % 4}.verb${j}`));
  }
  topicsOf.set('audit', Array.from({ length: 40 }, (_, j) => `audit.resource${j % 10}.action${j}`));
  const businessTopics = prefixes.flatMap((p) => topicsOf.get(p)!);
  const auditTopics = topicsOf.get('audit')!;

  const endpointPatterns: string[][] = [];
  for (let i = 0; i < nEndpoints; i++) {
    const r = rand();
    let ps: string[];
    if (r < 0.005) ps = ['*'];
    else if (r < 0.008) ps = ['audit.*'];
    else if (r < 0.01) ps = ['*', 'audit.*'];
    else {
      const n = 1 + Math.floor(rand() * 4);
      ps = Array.from({ length: n }, () => (rand() < 0.6 ? pick(businessTopics) : `${pick(prefixes)}.*`));
    }
    endpointPatterns.push([...new Set(ps)]);
  }
  const nPatterns = endpointPatterns.reduce((n, ps) => n + ps.length, 0);

  // 5% of the stream is audit trail, as a busy company's would be.
  const stream = Array.from({ length: nEvents }, () => (rand() < 0.05 ? pick(auditTopics) : pick(businessTopics)));

  const index = new TopicMatcher<number>();
  endpointPatterns.forEach((ps, i) => index.add(i, ps));
  const parsed: ParsedPattern[][] = endpointPatterns.map((ps) => ps.map((p) => parsePattern(p) as ParsedPattern));
  // The reference semantics, pattern by pattern (used to check both below).
  const reference = (topic: string): number[] =>
    parsed.flatMap((ps, i) => (ps.some((p) => patternMatches(p, topic)) ? [i] : []));
  // The baseline: a scan over every endpoint's patterns, as tight as a scan gets (the topic's
  // family worked out once per event, no allocation per pattern).
  const naive = (topic: string): number[] => {
    const out: number[] = [];
    const dot = topic.indexOf('.');
    const fam = dot < 0 ? topic : topic.slice(0, dot);
    const audit = fam === 'audit';
    for (let i = 0; i < parsed.length; i++) {
      const ps = parsed[i];
      for (let j = 0; j < ps.length; j++) {
        const p = ps[j];
        const hit = p.kind === 'exact' ? p.topic === topic : p.kind === 'family' ? dot > 0 && p.prefix === fam : !audit;
        if (hit) {
          out.push(i);
          break;
        }
      }
    }
    return out;
  };

  // Same answers, checked untimed on a slice of the stream covering every topic.
  let agree = true;
  for (const topic of new Set([...businessTopics, ...auditTopics, ...stream.slice(0, 500)])) {
    const a = index.match(topic).sort((x, y) => x - y);
    const b = naive(topic);
    const c = reference(topic);
    const same = (x: number[], y: number[]) => x.length === y.length && x.every((v, k) => v === y[k]);
    if (!same(a, c) || !same(b, c)) {
      agree = false;
      console.error(`disagree on ${topic}: index ${a.length}, naive ${b.length}, reference ${c.length}`);
      break;
    }
  }

  const time = (fn: (t: string) => number[], events: readonly string[]) => {
    let sink = 0;
    const t0 = performance.now();
    for (const t of events) sink += fn(t).length;
    return { ms: performance.now() - t0, sink };
  };
  const indexFn = (t: string) => index.match(t);
  // The naive scan is ~100x slower: time it on a slice of the stream so the run stays short.
  const naiveEvents = stream.slice(0, Math.max(1000, Math.floor(nEvents / 50)));
  time(indexFn, stream.slice(0, 5000)); // warm-up
  time(naive, naiveEvents.slice(0, 200));
  const idx = time(indexFn, stream);
  const nv = time(naive, naiveEvents);
  const idxPerSec = (stream.length / idx.ms) * 1000;
  const nvPerSec = (naiveEvents.length / nv.ms) * 1000;
  return {
    endpoints: nEndpoints,
    patterns: nPatterns,
    events: nEvents,
    meanMatches: idx.sink / stream.length,
    indexEventsPerSec: idxPerSec,
    naiveEventsPerSec: nvPerSec,
    ratio: idxPerSec / nvPerSec,
    agree,
  };
}

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = runMatcherBench({ endpoints: arg('endpoints'), events: arg('events') });
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`matcher: ${fmt(r.endpoints)} endpoints, ${fmt(r.patterns)} patterns, ${fmt(r.events)} events, ${r.meanMatches.toFixed(1)} matches/event`);
  console.log(`  index: ${fmt(r.indexEventsPerSec)} events/s`);
  console.log(`  naive: ${fmt(r.naiveEventsPerSec)} events/s`);
  console.log(`  ratio: ${r.ratio.toFixed(1)}x   same answers: ${r.agree ? 'yes' : 'NO'}`);
  if (!r.agree) process.exitCode = 1;
}
