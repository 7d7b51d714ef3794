// Data for bench/boot.ts: a data folder with N companies, each with every first-party app
// installed (host.createCompany with the default apps).
import { buildHost } from '../../core/host.ts';

export interface BootData {
  companies: number;
  apps: number;
  appIds: string[];
  installsPerCompany: number;
  refused: number;
  seconds: number;
  dbBytes: number;
}

export async function seedBootData(dataDir: string, companies: number, onProgress?: (done: number) => void): Promise<BootData> {
  const t0 = performance.now();
  const host = await buildHost({ config: { dataDir, rateLimitPerMinute: 0 }, logger: false });
  try {
    let installs = 0;
    for (let i = 0; i < companies; i++) {
      const { installed } = await host.createCompany({ name: `Company ${i + 1}`, currency: i % 2 ? 'SAR' : 'USD' });
      installs = installed.length;
      if (onProgress && (i + 1) % 10 === 0) onProgress(i + 1);
    }
    await host.storage.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const pages = (await host.storage.db.get<{ n: number }>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()'))!;
    const dbBytes = Number(pages.n);
    const appIds = host.runtime.list().map((a) => a.manifest.id);
    return {
      companies,
      apps: appIds.length,
      appIds,
      installsPerCompany: installs,
      refused: host.defaultApps.length - installs,
      seconds: (performance.now() - t0) / 1000,
      dbBytes,
    };
  } finally {
    await host.close();
  }
}
