// The console speaks both languages fully: the same keys in English and Arabic (plural forms
// aside), every key the pages ask for exists, and the Arabic plural forms are all there.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { strings } from '../web/console/strings.ts';

const PLURAL = /_(zero|one|two|few|many|other)$/;
const base = (table: Record<string, string>) => new Set(Object.keys(table).map((k) => k.replace(PLURAL, '')));

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

describe('console strings', () => {
  it('has the same keys in English and Arabic, each non-empty', () => {
    expect([...base(strings.ar)].sort()).toEqual([...base(strings.en)].sort());
    for (const [lang, table] of Object.entries(strings)) for (const [k, v] of Object.entries(table)) expect(v.trim(), `${lang} ${k}`).not.toBe('');
  });

  it('gives every counted string all six Arabic plural forms and the two English ones', () => {
    const counted = [...new Set(Object.keys(strings.en).filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, '')))];
    expect(counted.length).toBeGreaterThan(0);
    for (const k of counted) {
      for (const f of ['one', 'other']) expect(strings.en[`${k}_${f}`], `en ${k}_${f}`).toBeTruthy();
      for (const f of ['zero', 'one', 'two', 'few', 'many', 'other']) expect(strings.ar[`${k}_${f}`], `ar ${k}_${f}`).toBeTruthy();
    }
  });

  it('has every key the pages use', () => {
    const keys = base(strings.en);
    const used = new Set<string>();
    for (const file of sources(path.resolve(import.meta.dirname, '../web/console'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bt\(\s*'([^']+)'/g)) used.add(m[1]);
      // Keys built from a value (`role.${r}`): every value they can take must be present.
      for (const m of text.matchAll(/\bt\(\s*`([a-zA-Z.]+)\.\$\{/g)) expect([...keys].some((k) => k.startsWith(`${m[1]}.`)), `${file}: ${m[1]}.*`).toBe(true);
    }
    for (const k of used) expect(keys.has(k), k).toBe(true);
    for (const prefix of ['role.Viewer', 'role.Member', 'role.Manager', 'role.Admin', 'role.Owner', 'delivery.delivered', 'delivery.pending', 'delivery.in_flight', 'delivery.dead', 'delivery.retrying', 'delivery.failed', 'apps.state.not_installed', 'apps.confirm.purge', 'apps.done.purge', 'apps.explain.enable', 'actor.system']) {
      expect(keys.has(prefix), prefix).toBe(true);
    }
  });
});
