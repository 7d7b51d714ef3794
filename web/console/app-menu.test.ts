// An app's menu as the sidebar and the app's page show it, the app a console path belongs to,
// and the launcher's monograms.
import { describe, expect, it } from 'vitest';
import { appMenu, appOfPath } from './app-menu.tsx';
import { monogram } from './app-mark.tsx';
import type { DocTypeMeta, MenuItem } from './types.ts';

const type = (app: string, resource: string, labelPlural: string, read = true) =>
  ({ app, resource, name: resource, label: labelPlural, labelPlural, permissions: { read, create: true, update: true, delete: false } }) as unknown as DocTypeMeta;
const types = [type('forwarding', 'jobs', 'Jobs'), type('forwarding', 'declarations', 'Declarations'), type('forwarding', 'bonds', 'Bonds'), type('forwarding', 'rates', 'Rates'), type('forwarding', 'secret', 'Secret', false), type('crm', 'leads', 'Leads')];
const menu: MenuItem[] = [
  { app: 'forwarding', id: 'jobs', label: 'Jobs', order: 1, resource: 'jobs' },
  { app: 'forwarding', id: 'declarations', label: 'Customs declarations', order: 2, resource: 'declarations', group: 'Customs' },
  { app: 'forwarding', id: 'tracking', label: 'Tracking', order: 3, path: '/tracking' },
  { app: 'forwarding', id: 'bonds', label: 'Bonds', order: 4, resource: 'bonds', group: 'Customs' },
  { app: 'crm', id: 'leads', label: 'Pipeline', order: 5, resource: 'leads' },
];
const ws = { menu, types, byResource: new Map(types.map((d) => [d.resource, d])) };

describe('console app menus', () => {
  it("holds only the app's entries, ungrouped first, then each heading's, then readable types no entry opens", () => {
    const groups = appMenu(ws, 'forwarding').map((g) => [g.heading, g.entries.map((e) => e.href)]);
    expect(groups).toEqual([
      [null, ['/d/jobs', '/a/forwarding?page=%2Ftracking', '/d/rates']],
      ['Customs', ['/d/declarations', '/d/bonds']],
    ]);
    expect(appMenu(ws, 'crm').flatMap((g) => g.entries.map((e) => e.label))).toEqual(['Pipeline']);
  });

  it('knows the app of a page: its own pages and its document types', () => {
    expect(appOfPath(ws, '/a/forwarding')).toBe('forwarding');
    expect(appOfPath(ws, '/d/leads/led_1/edit')).toBe('crm');
    expect(appOfPath(ws, '/settings/apps')).toBeNull();
    expect(appOfPath(ws, '/d/unknown')).toBeNull();
  });

  it('draws monograms: initials, an acronym, an Arabic name without its article or a lone alef', () => {
    expect(monogram('Point of Sale')).toBe('PS');
    expect(monogram('Health, Safety & Environment')).toBe('HS');
    expect(monogram('Invoicing')).toBe('In');
    expect(monogram('CRM')).toBe('CR');
    expect(monogram('الموظفون')).toBe('م');
    expect(monogram('إدارة علاقات العملاء')).toBe('ع');
    expect(monogram('نقاط البيع')).toBe('ن');
  });
});
