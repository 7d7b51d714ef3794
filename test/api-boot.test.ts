// The first-party invoicing app, exactly as shipped, loads under the test runner. Every other
// e2e test goes through test/helpers.ts (see `invoicingSources` there). The bug this test
// catches: core/apps/app-source.ts imported the bundle as `server.ts?v=1.0.0`, Vite took `.0`
// for the file's extension and parsed TypeScript as JavaScript, so the app was refused at boot
// in any vitest run (the version tag now has no dots).
import { describe, expect, it } from 'vitest';
import { firstPartySources, loadDefinition } from '../core/apps/app-source.ts';

describe('boot', () => {
  it('loads the invoicing server bundle with its shipped version', async () => {
    const sources = firstPartySources().filter((s) => s.manifest.id === 'invoicing');
    expect(sources).toHaveLength(1);
    // First-party manifests are v2 since the restructure (issue 9): invoicing ships as 2.0.0.
    expect(sources[0].manifest.version).toBe('2.0.0');
    const def = await loadDefinition(sources[0]);
    expect(def.id).toBe('invoicing');
  });
});
