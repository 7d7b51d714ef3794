// The change feed of one process, with another process writing to the same database: a commit
// the feed is told of while it is already reading the versions is not lost with that read.
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../core/storage/changes.ts';
import { CacheVersionsRepo } from '../core/storage/repos/cache-versions.ts';
import { databases } from './db.ts';

describe.each(databases())('change feed ($name)', ({ location }) => {
  it('reads again when asked while a read taken before the commit is under way, and a caller not told waits for the read', async () => {
    const loc = await location();
    const writer = await loc.open();
    const reader = await loc.open();
    try {
      const real = new CacheVersionsRepo(reader.db);
      // The reader's versions, held after they were read (as a read in flight when the other process commits).
      let gate: Promise<void> | undefined;
      let read!: () => void;
      const hasRead = new Promise<void>((r) => (read = r));
      const versions = Object.assign(Object.create(real) as CacheVersionsRepo, {
        async all() {
          const rows = await real.all();
          const g = gate;
          if (g) {
            read();
            await g;
          }
          return rows;
        },
      });
      const feed = new ChangeFeed(reader.db, versions, { changed: () => true });
      await feed.poll();
      const heard: string[] = [];
      feed.on('keys', () => heard.push('keys'));

      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      const first = feed.poll();
      await hasRead;
      await writer.db.transaction(() => writer.changes.bump('keys'));
      gate = undefined;
      // Told of that commit now (the driver's signal), the feed is asked again while the first read waits.
      const second = feed.check();
      open();
      await Promise.all([first, second]);
      expect(heard).toEqual(['keys']);

      // A caller not told of anything waits for a read under way (it would otherwise go on with what that read drops).
      await writer.db.transaction(() => writer.changes.bump('keys'));
      let told = true;
      const once = new ChangeFeed(reader.db, versions, { changed: () => told && !(told = false) });
      await once.poll();
      once.on('keys', () => heard.push('keys again'));
      await writer.db.transaction(() => writer.changes.bump('keys'));
      const gated = new Promise<void>((r) => (open = r));
      gate = gated;
      const reading = once.check();
      let waited = false;
      const bystander = once.check()!.then(() => (waited = heard.includes('keys again')));
      await new Promise((r) => setImmediate(r));
      open();
      await Promise.all([reading, bystander]);
      expect(waited).toBe(true);
    } finally {
      await reader.close();
      await writer.close();
      await loc.drop();
    }
  });
});
