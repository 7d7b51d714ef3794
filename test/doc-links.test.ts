// Every relative link in README.md and docs/*.md leads somewhere in a clone of this repository:
// the file or folder exists inside it, and a `#anchor` names a heading of the target (GitHub's
// slugs). A file path quoted in code (`docs/x.md`, `core/kernel/config.ts`) is held to the same:
// a reader looks for it. Links to the web are not followed (the suite works offline).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..');
const DOCUMENTS = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The document's lines outside fenced code blocks, with their 1-based numbers. */
function prose(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((l, i) => {
    const m = /^\s*(```+|~~~+)/.exec(l);
    if (m) {
      if (!fence) fence = m[1];
      else if (m[1].startsWith(fence)) fence = undefined;
      return;
    }
    if (!fence) out.push({ line: i + 1, text: l });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, _ and - kept), spaces to hyphens. */
export function slug(heading: string): string {
  const plain = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link reads as its text
    .replace(/<[^>]+>/g, '');
  return plain.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors a Markdown file offers: one per heading, repeats numbered -1, -2… as GitHub does, and each HTML `id`/`name`. */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  anchorCache.set(file, anchors);
  for (const { text } of prose(fs.readFileSync(file, 'utf8'))) {
    for (const m of text.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1].toLowerCase());
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

interface Link {
  doc: string;
  line: number;
  target: string;
}

/** Inline links and images `[x](target)` and reference definitions `[x]: target`, outside code. */
function linksOf(doc: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of prose(fs.readFileSync(path.join(REPO, doc), 'utf8'))) {
    const noCode = text.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ doc, line, target: m[1] });
    const ref = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(noCode);
    if (ref) links.push({ doc, line, target: ref[1] });
  }
  return links;
}

/** Repository paths quoted in code spans: `docs/x.md`, `../shared/y.md`, `core/kernel/config.ts`. */
function quotedPathsOf(doc: string): Link[] {
  const out: Link[] = [];
  for (const { line, text } of prose(fs.readFileSync(path.join(REPO, doc), 'utf8'))) {
    for (const m of text.matchAll(/`([^`\s]+)`/g)) {
      const p = m[1];
      // A path of this repository: folders and a file name with its extension, no placeholder or pattern.
      if (!/^(\.\.?\/)?[\w.-]+(\/[\w.-]+)+\.(md|ts|tsx|js|cjs|json)$/.test(p) || /[<>…*{}]/.test(p)) continue;
      out.push({ doc, line, target: p });
    }
  }
  return out;
}

const isExternal = (t: string) => /^[a-z][a-z0-9+.-]*:/i.test(t) || t.startsWith('//');

/** What is wrong with a link, or undefined when it resolves. */
function problem(link: Link, from: 'document' | 'repository'): string | undefined {
  const [quoted, anchor] = link.target.split('#', 2) as [string, string | undefined];
  // `node_modules/diwan/sdk/…` in an app's project is this repository's `sdk/…`.
  const rawPath = quoted.replace(/^node_modules\/diwan\//, '');
  const file = rawPath === '' ? path.join(REPO, link.doc) : path.resolve(from === 'document' ? path.dirname(path.join(REPO, link.doc)) : REPO, decodeURIComponent(rawPath));
  const rel = path.relative(REPO, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return `${link.target} leads outside the repository (${file}), which a clone does not have`;
  if (!fs.existsSync(file)) return `${link.target}: no such file or folder (${rel})`;
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(decodeURIComponent(anchor).toLowerCase())) return `${link.target}: ${rel} has no heading whose anchor is #${anchor}`;
  return undefined;
}

describe('the links of README.md and docs/ (issue 29: every doc true)', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('What several processes share, and how')).toBe('what-several-processes-share-and-how');
    expect(slug('Stripe-style verifiers work unchanged')).toBe('stripe-style-verifiers-work-unchanged');
    expect(slug('`DIWAN_ROLES` and the [worker](x.md)')).toBe('diwan_roles-and-the-worker');
    expect(slug('For REST and webhook consumers')).toBe('for-rest-and-webhook-consumers');
  });

  it('finds a missing file, a missing anchor and a link leaving the repository', () => {
    const at = (target: string) => problem({ doc: 'docs/webhooks.md', line: 1, target }, 'document');
    expect(at('configuration.md')).toBeUndefined();
    expect(at('operations.md#what-several-processes-share-and-how')).toBeUndefined();
    expect(at('nope.md')).toMatch(/no such file/);
    expect(at('operations.md#no-such-heading')).toMatch(/no heading whose anchor is #no-such-heading/);
    expect(at('../../shared/design.md')).toMatch(/outside the repository/);
  });

  it.each(DOCUMENTS)('%s: every relative link resolves inside the repository, anchors included', (doc) => {
    const links = linksOf(doc).filter((l) => !isExternal(l.target));
    const problems = links.map((l) => ({ at: `${l.doc}:${l.line}`, problem: problem(l, 'document') })).filter((p) => p.problem);
    expect(problems).toEqual([]);
  });

  it.each(DOCUMENTS)('%s: every repository path quoted in code exists', (doc) => {
    // Quoted paths name files from the repository's root (`core/kernel/config.ts`) or, starting with ./ or ../, from the document.
    const problems = quotedPathsOf(doc)
      .map((l) => ({ at: `${l.doc}:${l.line}`, problem: problem(l, l.target.startsWith('.') ? 'document' : 'repository') }))
      .filter((p) => p.problem);
    expect(problems).toEqual([]);
  });
});
