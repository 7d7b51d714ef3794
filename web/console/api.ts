// The console's one door to the API, and the only module that knows how a person is
// authenticated: a server-side session in an HttpOnly cookie (`__Host-diwan-session`, which no
// script here can read), the session's CSRF token sent as `X-CSRF-Token` on every write, and
// the company the person acts in sent as `X-Company-Id`, chosen among their companies and
// switched from the shell. A person never handles an API key to use the console.

export interface ErrorDetail {
  pointer?: string;
  message?: string;
  rule?: string;
  [k: string]: unknown;
}

/** An API failure as the API describes it: code, message in the person's language, details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export const ROLES = ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] as const;
export type Role = (typeof ROLES)[number];

/** The roles up to `role` (what a person may grant), lowest first. */
export const rolesUpTo = (role: string): Role[] => ROLES.slice(0, ROLES.indexOf(role as Role) + 1);

export interface Person {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  hasPassword: boolean;
}

export interface Membership {
  id: string;
  name: string;
  currency: string;
  role: Role;
}

/** The signed-in person, their companies, and the one they act in now. */
export interface Session {
  person: Person;
  companies: Membership[];
  /** Null when the person belongs to no company (any more). */
  company: Membership | null;
  expiresAt: string;
}

interface SessionAnswer {
  person: Person;
  companies: Membership[];
  csrfToken: string;
  expiresAt: string;
}

// The company last chosen in this browser (not a secret: an id the person may act in or not).
const COMPANY = 'diwan.company';

let language = () => 'en';
let onSignedOut: () => void = () => {};
let state: (SessionAnswer & { companyId: string | null }) | null = null;

/** The language sent as Accept-Language, and what to do when the API stops accepting the session. */
export function configureApi(opts: { language: () => string; onSignedOut: () => void }): void {
  language = opts.language;
  onSignedOut = opts.onSignedOut;
}

function remembered(): string | null {
  try {
    return window.localStorage.getItem(COMPANY);
  } catch {
    return null;
  }
}

function remember(companyId: string | null): void {
  try {
    if (companyId) window.localStorage.setItem(COMPANY, companyId);
  } catch {
    /* not remembered: the choice holds for this page */
  }
}

/** Keeps a session answer, acting in `prefer` if the person belongs to it, else the remembered company, else their first. */
function keep(answer: SessionAnswer, prefer?: string | null): Session {
  const ids = answer.companies.map((c) => c.id);
  const companyId = [prefer, state?.companyId, remembered()].find((c): c is string => !!c && ids.includes(c)) ?? ids[0] ?? null;
  state = { ...answer, companyId };
  remember(companyId);
  return currentSession()!;
}

/** The current session, or null when nobody is signed in (as far as this page knows). */
export function currentSession(): Session | null {
  if (!state) return null;
  return { person: state.person, companies: state.companies, company: state.companies.find((c) => c.id === state!.companyId) ?? null, expiresAt: state.expiresAt };
}

/** The session's CSRF token, for an app's own page mounted in the shell (it cannot read the cookie). */
export function csrfToken(): string | null {
  return state?.csrfToken ?? null;
}

async function send<T>(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const h: Record<string, string> = { accept: 'application/json', 'accept-language': language(), ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', (err as Error).message || 'network error');
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) throw failure(res, json);
  return json as T;
}

/** A refusal as the API's envelope gives it. */
function failure(res: Response, json: unknown): ApiError {
  const e = (json as { error?: { code?: string; message?: string; details?: ErrorDetail[] } } | undefined)?.error;
  return new ApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? res.statusText, Array.isArray(e?.details) ? e.details : []);
}

/**
 * Fetches a file the API answers (a document's PDF) as the signed-in person, in their company,
 * and saves it under the name its Content-Disposition gives, else `fallbackName`.
 */
export async function download(path: string, fallbackName: string): Promise<void> {
  const headers: Record<string, string> = { 'accept-language': language() };
  if (state?.companyId) headers['x-company-id'] = state.companyId;
  let res: Response;
  try {
    res = await fetch(path, { headers, credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', (err as Error).message || 'network error');
  }
  if (!res.ok) {
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    throw failure(res, json);
  }
  const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = named ?? fallbackName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Asks the server who is signed in (the cookie, if any); null when nobody is. The route answers
 * null rather than 401 without a session, so the sign-in page logs no failed request.
 */
export async function loadSession(): Promise<Session | null> {
  const answer = (await send<{ data: SessionAnswer | null }>('GET', '/api/v1/session/current', undefined)).data;
  if (!answer) {
    state = null;
    return null;
  }
  return keep(answer);
}

/** Email and password; the server sets the session cookie. */
export async function signIn(c: { email: string; password: string }): Promise<Session> {
  return keep((await send<{ data: SessionAnswer }>('POST', '/api/v1/session', { email: c.email.trim(), password: c.password })).data);
}

/** A one-time sign-in link's token (from `diwan users create`), with the password the person sets. */
export async function signInWithLink(token: string, password?: string): Promise<Session> {
  return keep((await send<{ data: SessionAnswer }>('POST', '/api/v1/session/link', { token, ...(password !== undefined ? { password } : {}) })).data);
}

/**
 * Joins a company with an invitation's token: a new person gives a name and a password, a
 * person with an account their password. Signs them in, acting in the company they joined.
 */
export async function acceptInvitation(token: string, input: { name?: string; password: string }): Promise<Session> {
  const before = new Set((state?.companies ?? []).map((c) => c.id));
  const answer = (await send<{ data: SessionAnswer }>('POST', '/api/v1/invitations/accept', { token, ...(input.name?.trim() ? { name: input.name.trim() } : {}), password: input.password })).data;
  const joined = before.size ? answer.companies.find((c) => !before.has(c.id))?.id : undefined;
  return keep(answer, joined);
}

/** Ends the session on the server (the cookie is cleared) and here. */
export async function signOut(): Promise<void> {
  const token = state?.csrfToken;
  state = null;
  if (!token) return;
  try {
    await send('DELETE', '/api/v1/session', undefined, { 'x-csrf-token': token });
  } catch (err) {
    // Already ended (401) is what was wanted; anything else is worth showing.
    if (!(err instanceof ApiError && err.status === 401)) throw err;
  }
}

/** Changes the person's password (their other sessions end; this one stays). */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  await api('POST', '/api/v1/session/password', { currentPassword, newPassword });
}

/** Acts in another of the person's companies from now on. */
export function switchCompany(companyId: string): Session {
  if (!state) throw new Error('not signed in');
  if (!state.companies.some((c) => c.id === companyId)) throw new Error(`not a member of ${companyId}`);
  state = { ...state, companyId };
  remember(companyId);
  return currentSession()!;
}

/** Asks the server again for the person's companies and roles (after a 403 for a company, say). */
export async function refreshSession(): Promise<Session | null> {
  return loadSession();
}

/** Calls the API as the signed-in person, in their current company. A refused session (401) signs the person out. */
export async function api<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = {};
  if (state?.companyId) headers['x-company-id'] = state.companyId;
  if (method !== 'GET' && state) headers['x-csrf-token'] = state.csrfToken;
  try {
    return await send<T>(method, path, body, headers);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && state) {
      state = null;
      onSignedOut();
    }
    // The cookie changed under this page (signed in again in another tab): the same person
    // goes on with the new session's token; anyone else starts from the sign-in page.
    if (err instanceof ApiError && err.status === 403 && err.details.some((d) => d.reason === 'csrf') && state && !retried) {
      const was = state.person.id;
      const now = await loadSession().catch(() => null);
      if (now?.person.id === was) return api<T>(method, path, body, true);
      state = null;
      onSignedOut();
    }
    throw err;
  }
}

/** Query string from the defined, non-empty values of an object. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}
