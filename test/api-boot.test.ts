// The first-party invoicing app, exactly as shipped, loads under the test runner. Every other
// e2e test goes through test/helpers.ts, which works around the bug this test catches (see
// `invoicingSources` there): core/apps/app-source.ts imports the bundle as
// `server.ts?v=1.0.0`, and Vite takes `.0` for the file's extension and parses TypeScript as
// JavaScript, so the app is refused at boot in any vitest run.
import { describe, expect, it } from 'vitest';
import { firstPartySources, loadDefinition } from '../core/apps/app-source.ts';

describe('boot', () => {
  it('loads the invoicing server bundle with its shipped version', async () => {
    const sources = firstPartySources().filter((s) => s.manifest.id === 'invoicing');
    expect(sources).toHaveLength(1);
    expect(sources[0].manifest.version).toBe('1.0.0');
    const def = await loadDefinition(sources[0]);
    expect(def.id).toBe('invoicing');
  });
});
