// The subscription index: which endpoints (keys) does one event reach? Matching costs in
// proportion to the keys that match, not to the number of keys: one lookup in the exact-topic
// map, one in the family map (the family of a topic is the part before its first dot), and the
// `*` list — skipped for the opt-in families (the audit trail, the webhook operations), which only
// `<prefix>.*` or an exact topic reaches (spec section 6). Semantics are those of `patternMatches` in `patterns.ts`.
import { OPT_IN_PREFIXES, parsePattern, type ParsedPattern } from './patterns.ts';

interface Entry<K> {
  key: K;
  /** The pattern strings this key holds, as given (deduplicated), parsed. */
  patterns: Map<string, ParsedPattern>;
  /** The `match` call that last emitted this key: de-duplicates without a per-call Set. */
  mark: number;
}

export class TopicMatcher<K> {
  private entries = new Map<K, Entry<K>>();
  private exact = new Map<string, Set<Entry<K>>>();
  private family = new Map<string, Set<Entry<K>>>();
  private all = new Set<Entry<K>>();
  private epoch = 0;

  /** Number of keys that hold at least one pattern. */
  get size(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** The patterns a key holds, in the order first added. */
  patternsOf(key: K): string[] {
    return [...(this.entries.get(key)?.patterns.keys() ?? [])];
  }

  /**
   * Adds patterns to a key (to those it already holds). All patterns are parsed first: an
   * invalid one throws a `TypeError` and leaves the index unchanged. Adding no patterns to an
   * unknown key registers nothing.
   */
  add(key: K, patterns: readonly string[]): void {
    const parsed = patterns.map((p) => {
      const r = parsePattern(p);
      if (r.kind === 'invalid') throw new TypeError(`invalid topic pattern ${JSON.stringify(p)}: ${r.message}`);
      return [p, r] as const;
    });
    if (parsed.length === 0) return;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { key, patterns: new Map(), mark: 0 };
      this.entries.set(key, entry);
    }
    for (const [text, pattern] of parsed) {
      if (entry.patterns.has(text)) continue;
      entry.patterns.set(text, pattern);
      this.link(entry, pattern);
    }
  }

  /** Removes a key and all its patterns; true if it was there. */
  remove(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    for (const pattern of entry.patterns.values()) this.unlink(entry, pattern);
    this.entries.delete(key);
    return true;
  }

  /** Sets a key's patterns to exactly these; validated before anything changes. */
  replace(key: K, patterns: readonly string[]): void {
    for (const p of patterns) {
      const r = parsePattern(p);
      if (r.kind === 'invalid') throw new TypeError(`invalid topic pattern ${JSON.stringify(p)}: ${r.message}`);
    }
    this.remove(key);
    this.add(key, patterns);
  }

  clear(): void {
    this.entries.clear();
    this.exact.clear();
    this.family.clear();
    this.all.clear();
  }

  /** The keys one of whose patterns matches the topic, each once: exact, then family, then `*` matches. */
  match(topic: string): K[] {
    const out: K[] = [];
    const mark = ++this.epoch;
    const exact = this.exact.get(topic);
    if (exact) {
      for (const e of exact) {
        if (e.mark !== mark) {
          e.mark = mark;
          out.push(e.key);
        }
      }
    }
    const dot = topic.indexOf('.');
    const fam = dot < 0 ? topic : topic.slice(0, dot);
    if (dot > 0) {
      const family = this.family.get(fam);
      if (family) {
        for (const e of family) {
          if (e.mark !== mark) {
            e.mark = mark;
            out.push(e.key);
          }
        }
      }
    }
    if (!OPT_IN_PREFIXES.has(fam)) {
      for (const e of this.all) {
        if (e.mark !== mark) {
          e.mark = mark;
          out.push(e.key);
        }
      }
    }
    return out;
  }

  private link(entry: Entry<K>, pattern: ParsedPattern): void {
    if (pattern.kind === 'all') {
      this.all.add(entry);
      return;
    }
    const [map, slot] = pattern.kind === 'exact' ? [this.exact, pattern.topic] : [this.family, pattern.prefix];
    let set = map.get(slot);
    if (!set) {
      set = new Set();
      map.set(slot, set);
    }
    set.add(entry);
  }

  private unlink(entry: Entry<K>, pattern: ParsedPattern): void {
    if (pattern.kind === 'all') {
      this.all.delete(entry);
      return;
    }
    const [map, slot] = pattern.kind === 'exact' ? [this.exact, pattern.topic] : [this.family, pattern.prefix];
    const set = map.get(slot);
    if (!set) return;
    set.delete(entry);
    if (set.size === 0) map.delete(slot);
  }
}
