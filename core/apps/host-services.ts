import type { Storage } from '../db/connection.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Outbox } from '../events/outbox.ts';
import type { Translator } from '../i18n/i18n.ts';
import type { PermissionRegistry } from '../identity/permissions.ts';
import type { Companies } from '../tenancy/companies.ts';
import type { Clock } from '../clock.ts';

/** What the app runtime needs of the host; passed in, never reached for globally. */
export interface HostServices {
  storage: Storage;
  audit: AuditLog;
  outbox: Outbox;
  tr: Translator;
  permissions: PermissionRegistry;
  companies: Companies;
  clock: Clock;
}
