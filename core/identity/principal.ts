import type { Actor } from '../kernel/actor.ts';
import type { Role } from './roles.ts';

/** Who a request acts as: an API key, or a signed-in person in one of their companies. Both meet the same permission check. */
export interface Principal {
  kind: 'key' | 'user';
  /** The key's id or the person's id. */
  id: string;
  companyId: string;
  role: Role;
  /** Resources it may touch; `*` for all (a person holds every resource their role reaches). */
  scopes: string[];
}

export const actorOf = (p: Principal): Actor => ({ type: p.kind, id: p.id });
