// What the CLI prints. With `--json`: exactly one JSON document on stdout — the data on
// success, `{ error: { code, message, details } }` on failure. Without it: text and tables.
// Errors are the host's own DiwanErrors, their message in the `--lang` language.
import { DiwanError } from '../core/kernel/errors/diwan-error.ts';
import { errorCodes } from '../core/kernel/errors/codes.ts';
import type { Lang, Translator } from '../core/kernel/i18n/i18n.ts';
import { heading, type Header } from './headers.ts';

/**
 * A mistake in how the command was called (unknown option, missing argument): exit code 2.
 * Told apart by its own flag: `instanceof` on DiwanError subclasses checks the shared brand,
 * so every DiwanError would pass `instanceof UsageError`.
 */
export class UsageError extends DiwanError {
  readonly usage = true;
  /** Whether the text output is the message alone: its details only repeat it (the JSON keeps them). */
  readonly brief: boolean;
  constructor(pointer: string, rule: string, message: string, extra: Record<string, unknown> = {}, opts: { brief?: boolean } = {}) {
    super('VALIDATION_ERROR', [{ in: 'argv', pointer, rule, message, ...extra }], { summary: message });
    this.brief = opts.brief === true;
  }
}

export const isUsageError = (err: unknown): err is UsageError => (err as { usage?: unknown } | null)?.usage === true;

/** The CLI's own sentences, in both languages. `{{x}}` is replaced from params. */
const strings = {
  en: {
    'usage.required': '{{name}} is required',
    'usage.argument': 'the argument <{{name}}> is required',
    'usage.unknownCommand': 'unknown command "{{name}}"',
    'usage.choice': '{{name}} must be one of: {{values}}',
    'usage.integer': '{{name}} must be a positive integer',
    'usage.json': '{{name}} must be JSON',
    'usage.extra': 'unexpected argument "{{name}}"',
    'usage.parse': '{{message}}',
    'usage.unknownOption': 'unknown option {{name}}',
    'usage.optionValue': 'option {{name}} needs a value',
    'data.missingFound': 'no Diwan database in {{dir}}: run the command where the server runs, or name its data folder with --data-dir <dir> (or DIWAN_DATA_DIR)',
    'data.missingNamed': 'no Diwan database in {{dir}}: name the data folder of the server with --data-dir <dir>, or create one there with diwan migrate --data-dir {{dir}}',
    'data.created': 'New data folder: {{dir}} (its database created there).',
    'companies.created': 'Company {{name}} created: {{id}} ({{currency}}); apps installed: {{apps}}',
    'companies.none': 'No companies yet. Create one with: diwan companies create --name <name>',
    'companies.updated': 'Company {{name}} ({{id}}) updated: VAT number {{vatNumber}}, VAT rate {{vatRate}} %',
    'keys.created': 'API key {{id}} created for {{company}} ({{role}}). This is the only time the full key is shown:',
    'keys.revoked': 'API key {{id}} revoked at {{at}}.',
    'keys.alreadyRevoked': 'API key {{id}} was already revoked (at {{at}}); nothing changed.',
    'keys.none': 'No API keys in this company.',
    'apps.installed': 'Installed in {{company}}: {{apps}}',
    'apps.packaged': 'Package {{id}} {{version}} is now available on this host ({{hash}}){{replaced}}.',
    'apps.replacedNote': ', replacing the previous version',
    'apps.liveNote': 'A server running on this data folder loads it within a second.',
    'apps.upgradeNote': '{{id}} is installed in {{company}} at {{installed}}; see the plan with: diwan apps upgrade {{id}} --company {{company}}',
    'apps.state': '{{id}} is now {{state}} in {{company}}.',
    'apps.purged': '{{id}} purged from {{company}}: {{count}} documents removed.',
    'apps.plan': 'Upgrade plan for {{id}}: {{from}} → {{to}}',
    'apps.planApplied': 'Upgrade applied: {{id}} is now at {{to}}.',
    'apps.planConfirm': 'Nothing changed. Apply it with --yes.',
    'apps.nothing': '(no changes)',
    'apps.versionOnly': '(no changes beyond the version number)',
    'apps.nothingToApply': 'Nothing to apply: {{id}} is installed at the available version.',
    'audit.page': 'Page {{page}} of {{pages}} ({{total}} entries)',
    'author.created': 'App {{id}} created in {{dir}}',
    'author.valid': '{{dir}} is a valid app.',
    'author.packed': 'Packed {{id}} {{version}} into {{file}} (sha256 {{hash}})',
    'author.next': 'Next: cd {{dir}} && npm install && npm test',
    'author.diwanFormat': '{{name}} must be a diwan folder, a packed diwan .tgz or a version range, not "{{value}}"',
    'author.diwanMissing': '{{name}}: {{path}} does not exist',
    'author.diwanNotDiwan': '{{name}}: {{path}} is not diwan (a folder or .tgz whose package.json is named "diwan")',
    'author.tested': 'All {{passed}} tests of {{id}} passed.',
    'author.testsFailed': '{{failed}} of {{total}} tests failed',
    'author.noTests': 'no test file (*.test.ts) in {{dir}}',
    'author.noFolder': '{{path}} is not a folder',
    'author.runFailed': 'the test run failed; see its report',
    'start.listening': 'Diwan is listening on {{url}} (data in {{dataDir}})',
    'serve.listening': 'The Diwan API is listening on {{url}} (database {{database}}, data in {{dataDir}})',
    'worker.listening': 'The Diwan worker runs fan-out, delivery, the scheduler and the jobs of apps; health and metrics on {{url}} (database {{database}})',
    'migrate.applied': 'Applied to {{database}}: {{what}}.',
    'migrate.nothing': 'The schema of {{database}} is current; nothing to apply.',
    'migrate.current': 'The schema of {{database}} is current.',
    'migrate.behind': 'The schema of {{database}} is not current; it lacks {{what}}. Apply it with: diwan migrate',
    'migrate.tables': 'tables {{names}}',
    'migrate.columns': 'columns {{names}}',
    'migrate.indexes': 'indexes {{names}}',
    'migrate.steps': 'data steps {{names}}',
  },
  ar: {
    'usage.required': 'الخيار {{name}} مطلوب',
    'usage.argument': 'الوسيط <{{name}}> مطلوب',
    'usage.unknownCommand': 'الأمر "{{name}}" غير معروف',
    'usage.choice': 'يجب أن تكون قيمة {{name}} إحدى: {{values}}',
    'usage.integer': 'يجب أن تكون قيمة {{name}} عددًا صحيحًا موجبًا',
    'usage.json': 'يجب أن تكون قيمة {{name}} بصيغة JSON',
    'usage.extra': 'وسيط غير متوقع "{{name}}"',
    'usage.parse': '{{message}}',
    'usage.unknownOption': 'الخيار {{name}} غير معروف',
    'usage.optionValue': 'الخيار {{name}} يحتاج إلى قيمة',
    'data.missingFound': 'لا توجد قاعدة بيانات ديوان في {{dir}}: شغّل الأمر حيث يعمل الخادم، أو سمِّ مجلد بياناته بالخيار --data-dir <dir> (أو DIWAN_DATA_DIR)',
    'data.missingNamed': 'لا توجد قاعدة بيانات ديوان في {{dir}}: سمِّ مجلد بيانات الخادم بالخيار --data-dir <dir>، أو أنشئ قاعدة فيه بالأمر diwan migrate --data-dir {{dir}}',
    'data.created': 'مجلد بيانات جديد: {{dir}} (أُنشئت قاعدة بياناته فيه).',
    'companies.created': 'أُنشئت الشركة {{name}}: {{id}} ({{currency}})؛ التطبيقات المثبتة: {{apps}}',
    'companies.none': 'لا توجد شركات بعد. أنشئ واحدة بالأمر: diwan companies create --name <name>',
    'companies.updated': 'حُدّثت الشركة {{name}} ({{id}}): الرقم الضريبي {{vatNumber}}، نسبة الضريبة {{vatRate}} %',
    'keys.created': 'أُنشئ المفتاح {{id}} للشركة {{company}} ({{role}}). هذه هي المرة الوحيدة التي يظهر فيها المفتاح كاملًا:',
    'keys.revoked': 'أُلغي المفتاح {{id}} في {{at}}.',
    'keys.alreadyRevoked': 'المفتاح {{id}} ملغى من قبل (في {{at}})؛ لم يتغير شيء.',
    'keys.none': 'لا توجد مفاتيح في هذه الشركة.',
    'apps.installed': 'ثُبّت في {{company}}: {{apps}}',
    'apps.packaged': 'الحزمة {{id}} {{version}} متاحة الآن على هذا الخادم ({{hash}}){{replaced}}.',
    'apps.replacedNote': '، بدلًا من الإصدار السابق',
    'apps.liveNote': 'يحمّلها الخادم العامل على مجلد البيانات هذا خلال ثانية.',
    'apps.upgradeNote': '{{id}} مثبت في {{company}} بالإصدار {{installed}}؛ اعرض خطة الترقية بالأمر: diwan apps upgrade {{id}} --company {{company}}',
    'apps.state': 'أصبحت حالة {{id}} في {{company}}: {{state}}.',
    'apps.purged': 'حُذفت بيانات {{id}} من {{company}}: {{count}} مستندًا.',
    'apps.plan': 'خطة ترقية {{id}}: {{from}} ← {{to}}',
    'apps.planApplied': 'طُبّقت الترقية: {{id}} الآن بالإصدار {{to}}.',
    'apps.planConfirm': 'لم يتغير شيء. طبّقها بالخيار --yes.',
    'apps.nothing': '(لا تغييرات)',
    'apps.versionOnly': '(لا تغييرات سوى رقم الإصدار)',
    'apps.nothingToApply': 'لا شيء لتطبيقه: {{id}} مثبت بالإصدار المتاح.',
    'audit.page': 'الصفحة {{page}} من {{pages}} ({{total}} قيدًا)',
    'author.created': 'أُنشئ التطبيق {{id}} في {{dir}}',
    'author.valid': '{{dir}} تطبيق صالح.',
    'author.packed': 'حُزم {{id}} {{version}} في {{file}} (sha256 {{hash}})',
    'author.next': 'التالي: cd {{dir}} && npm install && npm test',
    'author.diwanFormat': 'يجب أن تكون قيمة {{name}} مجلد ديوان أو حزمة ديوان ‎.tgz أو نطاق إصدارات، لا "{{value}}"',
    'author.diwanMissing': '{{name}}: المسار {{path}} غير موجود',
    'author.diwanNotDiwan': '{{name}}: المسار {{path}} ليس ديوان (مجلد أو ملف ‎.tgz اسم الحزمة في package.json فيه "diwan")',
    'author.tested': 'نجحت اختبارات {{id}} كلها ({{passed}}).',
    'author.testsFailed': 'أخفق {{failed}} من {{total}} اختبارًا',
    'author.noTests': 'لا يوجد ملف اختبار (*.test.ts) في {{dir}}',
    'author.noFolder': '{{path}} ليس مجلدًا',
    'author.runFailed': 'أخفق تشغيل الاختبارات؛ راجع تقريره',
    'start.listening': 'ديوان يستمع على {{url}} (البيانات في {{dataDir}})',
    'serve.listening': 'واجهة ديوان البرمجية تستمع على {{url}} (قاعدة البيانات {{database}}، البيانات في {{dataDir}})',
    'worker.listening': 'عامل ديوان يشغّل التوزيع والتسليم والجدولة ومهام التطبيقات؛ الصحة والمقاييس على {{url}} (قاعدة البيانات {{database}})',
    'migrate.applied': 'طُبّق على {{database}}: {{what}}.',
    'migrate.nothing': 'مخطط {{database}} محدَّث؛ لا شيء لتطبيقه.',
    'migrate.current': 'مخطط {{database}} محدَّث.',
    'migrate.behind': 'مخطط {{database}} غير محدَّث؛ ينقصه {{what}}. طبّقه بالأمر: diwan migrate',
    'migrate.tables': 'الجداول {{names}}',
    'migrate.columns': 'الأعمدة {{names}}',
    'migrate.indexes': 'الفهارس {{names}}',
    'migrate.steps': 'خطوات البيانات {{names}}',
  },
} as const satisfies Record<Lang, Record<string, string>>;

export type CliString = keyof (typeof strings)['en'];

export function say(lang: Lang, key: CliString, params: Record<string, unknown> = {}): string {
  return strings[lang][key].replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));
}

/** The error envelope the API answers, for anything thrown; unknown faults become INTERNAL. */
export function envelope(err: unknown, lang: Lang, tr: Translator) {
  const de = err instanceof DiwanError ? err : new DiwanError('INTERNAL', [{ message: err instanceof Error ? err.message : String(err) }]);
  const params = { ...de.params };
  if (de.code === 'VALIDATION_ERROR' && params.summary === undefined) params.summary = '';
  let message = tr.t(lang, `error.${de.code}`, params);
  if (!message || message === `error.${de.code}`) message = errorCodes[de.code][lang];
  return { error: { code: de.code, message, details: de.details } };
}

export const exitCodeOf = (err: unknown) => (isUsageError(err) ? 2 : 1);

/** Writes the whole text and resolves once it has been handed to the OS. */
export function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (!text) return resolve();
    stream.write(text.endsWith('\n') ? text : `${text}\n`, () => resolve());
  });
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Display width, counting combining marks (Arabic harakat) as zero. */
const width = (s: string) => [...s.replace(/[\u0300-\u036f\u064b-\u065f\u0670]/g, '')].length;

/** A plain text table: a header row in `lang`, a rule, then the rows; long cells are not cut. */
export function table(rows: Record<string, unknown>[], columns: { key: string; label: Header }[], lang: Lang): string {
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') || '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const body = rows.map((r) => columns.map((c) => cell(r[c.key])));
  const labels = columns.map((c) => heading(lang, c.label));
  const widths = columns.map((c, i) => Math.max(width(labels[i]), ...body.map((b) => width(b[i]))));
  const line = (cells: string[]) => cells.map((c, i) => c + ' '.repeat(widths[i] - width(c))).join('  ').trimEnd();
  return [line(labels), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** `key: value` lines for one record. */
export function record(obj: Record<string, unknown>, keys = Object.keys(obj)): string {
  const w = Math.max(...keys.map((k) => k.length));
  return keys
    .map((k) => {
      const v = obj[k];
      const text = v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(', ') || '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return `${k.padEnd(w)}  ${text}`;
    })
    .join('\n');
}
