// The browser suite's harness: Debian's Chromium driven by playwright-core (never a downloaded
// browser), and a real host listening on a loopback port with a temporary DATA_DIR. People sign
// in to the console with their email and password; the session cookie is `Secure`, which
// Chromium accepts on plain HTTP from loopback (a secure context), so the host serves HTTP on
// 127.0.0.1. Without Chromium the suite is skipped, and says so.
import { CLI_ACTOR } from '../../core/kernel/actor.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildHost, type Host } from '../../core/host.ts';
import { ROLES, type Role } from '../../core/identity/roles.ts';
import { invoicingSources } from '../helpers.ts';
import { consoleBundle } from '../../core/http/console-bundle.ts';
import type { AppSource } from '../../core/apps/app-source.ts';
import type { Clock } from '../../core/kernel/clock.ts';
import type { HostConfig } from '../../core/kernel/config.ts';

/** Debian's Chromium, or the one DIWAN_CHROMIUM names (`none` skips the suite on purpose). */
export const CHROMIUM =
  process.env.DIWAN_CHROMIUM === 'none' ? undefined : [process.env.DIWAN_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && fs.existsSync(p));

/** `describe`, or a loud skip when no Chromium is installed. */
export function describeBrowser(name: string, fn: () => void): void {
  // Bounded: each journey and each hook stops by itself after a minute (a busy 2-core machine
  // runs them in a few seconds); the browser and the host are closed in afterAll.
  if (CHROMIUM) {
    describe(name, { timeout: 60_000 }, fn);
    return;
  }
  const why = process.env.DIWAN_CHROMIUM === 'none' ? 'DIWAN_CHROMIUM=none' : 'no Chromium at /usr/bin/chromium (install the Debian package: apt-get install -y chromium)';
  console.warn(`\n*** SKIPPED browser suite "${name}": ${why} ***\n`);
  describe.skip(`${name} — SKIPPED: ${why}`, fn);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
}

export interface ConsoleHost {
  host: Host;
  url: string;
  dataDir: string;
  companyId: string;
  currency: string;
  /** A `*`-scoped key per role (for seeding data and calling the API from the test). */
  keys: Record<Role, string>;
  /** A new person, a member of the company (or `companyId`) with the role, their password set. */
  person(role: Role, opts?: { companyId?: string; name?: string; email?: string }): Promise<TestPerson>;
  /** A one-time invitation into the company (or `companyId`) with the role: its link's path, `/invite#<token>`. */
  invite(email: string, role: Role, companyId?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestPerson {
  id: string;
  email: string;
  name: string;
  password: string;
}

export const PASSWORD = 'a long test password';
let people = 0;

/** A host with the invoicing app, on 127.0.0.1 and a free port, its data in a fresh temporary folder. */
export async function startConsoleHost(
  opts: {
    allowLoopbackWebhooks?: boolean;
    currency?: string;
    sources?: AppSource[];
    /** The host's clock (a test that drives time, e.g. to see an endpoint fail for days). */
    clock?: Clock;
    /** Settings of this host, over the defaults (e.g. `sessionIdleSeconds`). */
    config?: Partial<Omit<HostConfig, 'webhooks'>>;
  } = {},
): Promise<ConsoleHost> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-browser-'));
  const host = await buildHost({
    sources: [...invoicingSources(), ...(opts.sources ?? [])],
    clock: opts.clock,
    // DIWAN_WEBHOOK_ALLOW_LOOPBACK=1 for this host only; a fast ladder so a retry is visible.
    config: { ...opts.config, dataDir, host: '127.0.0.1', port: 0, webhooks: { allowLoopback: !!opts.allowLoopbackWebhooks, timeoutMs: 3000 } as Host['config']['webhooks'] },
  });
  const address = await host.app.listen({ port: 0, host: '127.0.0.1' });
  // As `npm start` does: bundle the console now rather than on the first page load.
  await consoleBundle();
  const currency = opts.currency ?? 'SAR';
  const { company } = await host.createCompany({ name: 'Noura Trading Co', currency, apps: ['invoicing', ...(opts.sources ?? []).map((x) => x.manifest.id)] });
  const scope = { companyId: company.id, actor: CLI_ACTOR, appId: 'core' };
  const keys = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, (await host.keys.create(scope, { role, scopes: ['*'], name: `${role} key` })).key]))) as Record<Role, string>;
  const scopeIn = (companyId = company.id) => ({ companyId, actor: CLI_ACTOR, appId: 'core' });
  return {
    host,
    url: address.replace('localhost', '127.0.0.1'),
    dataDir,
    companyId: company.id,
    currency,
    keys,
    async person(role, o = {}) {
      const n = ++people;
      const email = o.email ?? `${role.toLowerCase()}-${n}@people.example`;
      const name = o.name ?? `${role} ${n}`;
      // As `diwan users create` does, then the person's own first use of the link.
      const { token, person } = await host.people.createWithLink(scopeIn(o.companyId), { email, name, role });
      await host.sessions.signInWithLink({ token, password: PASSWORD });
      return { id: person.id, email, name, password: PASSWORD };
    },
    async invite(email, role, companyId) {
      const { token } = await host.people.invite(scopeIn(companyId), { email, role }, undefined);
      return `/invite#${token}`;
    },
    async close() {
      await host.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type Lang = 'en' | 'ar';

/** A fresh context (its own storage) speaking `lang`, at a desktop or a phone's width. */
export async function openPage(browser: Browser, lang: Lang, opts: { width?: number; clipboard?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const width = opts.width ?? 1280;
  const context = await browser.newContext({
    locale: lang === 'ar' ? 'ar-SA' : 'en-GB',
    viewport: { width, height: width < 600 ? 780 : 860 },
    deviceScaleFactor: 1,
    reducedMotion: 'reduce',
  });
  if (opts.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  return { context, page };
}

/** Signs a person in through the sign-in page, on the way to `next`. */
export async function signIn(page: Page, h: ConsoleHost, who: Pick<TestPerson, 'email' | 'password'>, next = '/'): Promise<void> {
  await page.goto(`${h.url}${next}`);
  await page.locator('input[name="email"]').fill(who.email);
  await page.locator('input[name="password"]').fill(who.password);
  await page.locator('form button[type="submit"]').click();
  await page.locator('header.topbar').waitFor();
}

/** The value of the context's session cookie (for calling the API from the test as the person). */
export async function sessionCookie(context: BrowserContext): Promise<string> {
  const c = (await context.cookies()).find((x) => x.name === '__Host-diwan-session');
  if (!c) throw new Error('no session cookie in the browser');
  return `${c.name}=${c.value}`;
}

export const SHOTS = process.env.DIWAN_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;

/** Keeps a screenshot in docs/screenshots/ when DIWAN_SCREENSHOTS=1. */
export async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}
