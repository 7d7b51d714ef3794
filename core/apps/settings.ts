// An app's settings in a company: what its manifest declares (`settings`, each typed like a
// scalar field with a default) overlaid with what the company set. Apps read them through
// `ctx.settings.get()`; an Admin changes them over the API, audited as `apps:settings`.
import type { Manifest, SettingDecl } from '../../manifests/manifest.schema.ts';
import type { InstallsRepo } from '../storage/repos/installs.ts';
import type { UnitOfWork, WriteScope } from '../audit/unit-of-work.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Lang, Translator } from '../kernel/i18n/i18n.ts';
import { isoNow } from '../kernel/ids.ts';
import type { ValidateFunction } from 'ajv';
import { check, compileFor } from '../kernel/validation.ts';
import { MONEY_BOUND } from './doc-schemas.ts';

type Schema = Record<string, unknown>;

function settingSchema(s: SettingDecl): Schema {
  const out: Schema = { description: s.description?.en ?? s.label.en };
  switch (s.type) {
    case 'string':
      return Object.assign(out, { type: 'string', maxLength: s.maxLength ?? 1000 }, s.minLength !== undefined ? { minLength: s.minLength } : {});
    case 'number':
    case 'integer':
    case 'money':
      return Object.assign(out, { type: s.type === 'integer' ? 'integer' : 'number', minimum: s.minimum ?? -MONEY_BOUND, maximum: s.maximum ?? MONEY_BOUND });
    case 'boolean':
      return Object.assign(out, { type: 'boolean' });
    case 'date':
      return Object.assign(out, { type: 'string', format: 'date' });
    case 'enum':
      return Object.assign(out, { type: 'string', enum: s.values });
  }
}

/** The settings as a JSON Schema: every one present when read, any of them when changed. */
export function settingsSchemas(m: Manifest): { read: Schema; patch: Schema } {
  const properties = Object.fromEntries((m.settings ?? []).map((s) => [s.name, { ...settingSchema(s), default: s.default }]));
  const names = Object.keys(properties);
  return {
    read: { type: 'object', additionalProperties: false, required: names, properties },
    patch: { type: 'object', additionalProperties: false, properties },
  };
}

/** A declared setting's default that its own type refuses (a manifest problem). */
export function settingDefaultProblems(m: Manifest): { pointer: string; rule: string; message: string }[] {
  const problems: { pointer: string; rule: string; message: string }[] = [];
  const seen = new Set<string>();
  (m.settings ?? []).forEach((s, i) => {
    if (seen.has(s.name)) problems.push({ pointer: `/settings/${i}/name`, rule: 'duplicate', message: `setting ${s.name} is declared twice` });
    seen.add(s.name);
    if (s.type === 'enum' && !s.values) problems.push({ pointer: `/settings/${i}/values`, rule: 'required', message: 'an enum setting needs values' });
    const d = s.default;
    const ok =
      s.type === 'boolean' ? typeof d === 'boolean'
      : s.type === 'number' || s.type === 'money' ? typeof d === 'number' && d >= (s.minimum ?? -Infinity) && d <= (s.maximum ?? Infinity)
      : s.type === 'integer' ? Number.isInteger(d) && (d as number) >= (s.minimum ?? -Infinity) && (d as number) <= (s.maximum ?? Infinity)
      : s.type === 'date' ? typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d)
      : s.type === 'enum' ? typeof d === 'string' && (s.values ?? []).includes(d)
      : typeof d === 'string' && d.length >= (s.minLength ?? 0) && d.length <= (s.maxLength ?? 1000);
    if (!ok) problems.push({ pointer: `/settings/${i}/default`, rule: 'default', message: `the default of ${s.name} is not a valid ${s.type}` });
  });
  return problems;
}

/** Each declared setting: the company's value, else its default (values of settings no longer declared are left out). */
function withDefaults(m: Manifest, set: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of m.settings ?? []) out[s.name] = s.name in set ? set[s.name] : s.default;
  return out;
}

export class AppSettings {
  /** The patch validator of each manifest version, compiled once. */
  private validators = new WeakMap<Manifest, ValidateFunction>();

  constructor(private deps: { installs: InstallsRepo; uow: UnitOfWork; clock: Clock; tr: Translator }) {}

  /** The declared defaults, overlaid with what the company set of the settings still declared. */
  async get(m: Manifest, companyId: string): Promise<Record<string, unknown>> {
    if (!m.settings?.length) return {};
    return withDefaults(m, await this.deps.installs.settings(companyId, m.id));
  }

  /** Changes some settings (checked against their types, every problem at once), audited in the scope's unit of work. */
  async update(scope: WriteScope, m: Manifest, patch: Record<string, unknown>, lang: Lang): Promise<Record<string, unknown>> {
    let validate = this.validators.get(m);
    if (!validate) this.validators.set(m, (validate = compileFor('body', settingsSchemas(m).patch)));
    check(validate, patch, 'body', lang, this.deps.tr);
    return this.deps.uow.run(scope, async (w) => {
      const stored = await this.deps.installs.settings(scope.companyId, m.id);
      const next: Record<string, unknown> = {};
      for (const s of m.settings ?? []) if (s.name in patch || s.name in stored) next[s.name] = s.name in patch ? patch[s.name] : stored[s.name];
      await this.deps.installs.putSettings(scope.companyId, m.id, next, isoNow(this.deps.clock.now()));
      const before = withDefaults(m, stored);
      const after = withDefaults(m, next);
      await w.audit({ action: 'settings', resource: 'apps', resourceId: m.id, before, after });
      return after;
    });
  }
}
