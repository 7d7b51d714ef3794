// `ctx.docs(type).all()`: every document the filters match, read a page at a time, with the
// query's filters and order kept on every page.
import { describe, expect, it } from 'vitest';
import { docHandle } from './app-context.ts';
import type { Caller, DocType } from './doc-type.ts';

describe('a document handle', () => {
  it('reads every page of what the filters match, in order', async () => {
    const stored = Array.from({ length: 205 }, (_, i) => ({ id: `d${i}`, createdAt: '', updatedAt: '', runId: i % 2 ? 'r1' : 'r2' }));
    const asked: unknown[] = [];
    const dt = {
      async list(companyId: string, q: { page: number; pageSize: number; filters: Record<string, string>; sort?: string }) {
        asked.push({ companyId, ...q });
        const matching = stored.filter((d) => d.runId === q.filters.runId);
        return { data: matching.slice((q.page - 1) * q.pageSize, q.page * q.pageSize), total: matching.length, page: q.page, pageSize: q.pageSize };
      },
    } as unknown as DocType;
    const caller = { company: { id: 'co_1' } } as Caller;
    const docs = await docHandle(dt, caller, 'payroll').all({ filters: { runId: 'r2' }, sort: '-createdAt' });
    expect(docs.map((d) => d.id)).toEqual(stored.filter((d) => d.runId === 'r2').map((d) => d.id));
    expect(docs).toHaveLength(103);
    expect(asked).toEqual([1, 2].map((page) => ({ companyId: 'co_1', filters: { runId: 'r2' }, sort: '-createdAt', page, pageSize: 100 })));
    expect(await docHandle(dt, caller, 'payroll').all({ filters: { runId: 'none' } })).toEqual([]);
  });
});
