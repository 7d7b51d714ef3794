// Every package the lockfile installs accepts the Node it runs on (npm install used to warn
// `EBADENGINE cookie@2.0.2 requires node >=22` on Node 20: light-my-request, Fastify's inject,
// pulls cookie; package.json pins cookie 1.1.1 under it). And inject, cookies included, works.
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/apps/app-source.ts';

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
}

describe('dependencies', () => {
  it("accept this Node version (package-lock.json's engines)", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    const refused = Object.entries(lock.packages)
      .filter(([name, e]) => name !== '' && e.engines && !Array.isArray(e.engines) && e.engines.node)
      .filter(([, e]) => !semver.satisfies(process.versions.node, (e.engines as { node: string }).node, { includePrerelease: true }))
      .map(([name, e]) => `${name}@${e.version} needs node ${(e.engines as { node: string }).node}`);
    expect(refused, `running node ${process.versions.node}`).toEqual([]);
  });

  it('inject, which uses cookie to encode request cookies, still sends them', async () => {
    const app = Fastify();
    app.get('/', async (req) => ({ cookie: req.headers.cookie ?? null }));
    try {
      const res = await app.inject({ method: 'GET', url: '/', cookies: { a: '1', b: 'x y' } });
      expect(res.json()).toEqual({ cookie: 'a=1; b=x%20y' });
    } finally {
      await app.close();
    }
  });
});
