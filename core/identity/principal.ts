import type { Role } from './roles.ts';

/** Who is calling: an API key, the operator's CLI, or the host itself. */
export interface Actor {
  type: 'key' | 'cli' | 'system';
  id: string;
}

/** An authenticated API key, bound to its company. */
export interface Principal {
  keyId: string;
  companyId: string;
  role: Role;
  /** Resources the key may touch; `*` for all. */
  scopes: string[];
}

export const actorOf = (p: Principal): Actor => ({ type: 'key', id: p.keyId });
