// Several hosts on one fresh PostgreSQL database, as several processes behind a load balancer
// run: each host has its own data folder, pool and change feed; what they share is the
// database. Closing closes every host, then drops the database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildHost, type Host, type HostOptions } from '../core/host.ts';
import { dropTestDatabase, testDatabaseUrl } from './db.ts';

export interface PgHosts {
  url: string;
  hosts: Host[];
  close(): Promise<void>;
}

/** `count` hosts on one fresh database, built one after another (the first migrates), each with `opts` (or `opts(i)`). */
export async function pgHosts(count: number, options: HostOptions | ((i: number) => HostOptions) = {}): Promise<PgHosts> {
  const url = await testDatabaseUrl();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-pg-hosts-'));
  const hosts: Host[] = [];
  const close = async () => {
    for (const h of hosts.reverse()) await h.close().catch(() => {});
    await dropTestDatabase(url).catch(() => {});
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < count; i++) {
      const opts = typeof options === 'function' ? options(i) : options;
      hosts.push(await buildHost({ ...opts, databaseUrl: url, config: { ...opts.config, dataDir: path.join(root, `host-${i}`) } }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { url, hosts: [...hosts], close };
}
