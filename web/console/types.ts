// Shapes the console reads from the API (see the OpenAPI document for the full ones).

export interface FieldMeta {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'enum' | 'money' | 'reference' | 'lines';
  label: string;
  required: boolean;
  readOnly: boolean;
  /** Computed by the host from the document on every write (read-only). */
  computed?: boolean;
  /** States in which an update cannot change it. */
  lockedIn?: string[];
  /** What it holds, or how it is computed. */
  description?: string;
  filterable: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  values?: string[];
  options?: { value: string; label: string }[];
  target?: { app: string; type: string; resource: string; idPrefix: string; titleField: string | null };
  minItems?: number;
  maxItems?: number;
  fields?: FieldMeta[];
}

export interface DocTypeMeta {
  app: string;
  name: string;
  resource: string;
  idPrefix: string;
  label: string;
  labelPlural: string;
  titleField: string | null;
  fields: FieldMeta[];
  states: { name: string; label: string }[];
  initialState: string | null;
  /** States in which a document is not updated or deleted (only its transitions change it). */
  lockedIn?: string[];
  /** `input`: the body the transition takes (a lost reason), described as fields are. */
  transitions: { name: string; label: string; from: string[]; to: string; permission: string; allowed: boolean; guarded?: boolean; description?: string; input?: FieldMeta[] }[];
  /** The document's files (its PDF): `/api/v1/<resource>/<id>/<name>`, offered once the document has `offeredWhen`. */
  downloads: { name: string; mediaType: string; summary: string; offeredWhen?: string }[];
  sort: string[];
  permissions: { read: boolean; create: boolean; update: boolean; delete: boolean };
}

export interface MenuItem {
  app: string;
  id: string;
  label: string;
  order: number;
  documentType?: string;
  resource?: string;
  path?: string;
  permission?: string;
  /** The heading the entry sits under in its app's menu. */
  group?: string;
}

export interface Company {
  id: string;
  name: string;
  currency: string;
}

export interface AppInfo {
  id: string;
  name: string;
  description: string;
  version: string;
  installedVersion: string | null;
  state: 'enabled' | 'disabled' | 'uninstalled' | 'not_installed';
  upgradeAvailable?: boolean;
  web?: boolean;
  dependencies?: Record<string, string>;
  /** The manifest's catalogue category (`sales`, `hr`, …). */
  category?: string;
  /** The manifest's launcher mark (an emoji or a letter or two). */
  icon?: string;
}

/** A document as the launcher and the palette list it (GET /api/v1/home, /api/v1/search). */
export interface DocHit {
  app: string;
  resource: string;
  id: string;
  title: string | null;
  state?: string;
  createdAt: string;
}

export interface PermissionInfo {
  permission: string;
  owner: string;
  lowestRole: string;
  description?: string;
  held?: boolean;
}

export type Doc = { id: string; state?: string; createdAt: string; updatedAt: string } & Record<string, unknown>;

export interface Page<T> {
  data: T[];
  total: number;
  page: number;
  pageSize: number;
}
