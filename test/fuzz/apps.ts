// Two code-less apps the fuzz host serves beside invoicing, so the document has generated routes
// of every field type (enum, integer, boolean, date, self-reference, lines, a read-only field no
// hook computes) and an app a company can still install:
// - widgets: installed in every fuzz company;
// - gizmos: available on the host, installed in none (its routes answer APP_NOT_ENABLED until
//   POST /api/v1/apps installs it).
import os from 'node:os';
import { validManifest, type AppSource } from '../../core/apps/app-source.ts';

const t = (en: string, ar: string) => ({ en, ar });

const widgets = {
  id: 'widgets',
  version: '1.0.0',
  host: '^0.1.0',
  name: t('Widgets', 'القطع'),
  description: t('A test app with every field type.', 'تطبيق اختبار بكل أنواع الحقول.'),
  strings: {
    en: { title: 'Widgets', 'state.new': 'New', 'state.approved': 'Approved', 'state.retired': 'Retired' },
    ar: { title: 'القطع', 'state.new': 'جديدة', 'state.approved': 'معتمدة', 'state.retired': 'موقوفة' },
  },
  documentTypes: [
    {
      name: 'widget',
      resource: 'widgets',
      idPrefix: 'wid',
      label: t('Widget', 'قطعة'),
      labelPlural: t('Widgets', 'القطع'),
      fields: [
        { name: 'title', type: 'string', required: true, minLength: 1, maxLength: 80, filterable: true, label: t('Title', 'العنوان') },
        { name: 'kind', type: 'enum', values: ['small', 'large', 'كبير'], filterable: true, label: t('Kind', 'النوع') },
        { name: 'count', type: 'integer', minimum: 0, maximum: 1000, filterable: true, label: t('Count', 'العدد') },
        { name: 'weight', type: 'number', label: t('Weight', 'الوزن') },
        { name: 'price', type: 'money', required: true, label: t('Price', 'السعر') },
        { name: 'active', type: 'boolean', filterable: true, label: t('Active', 'نشط') },
        { name: 'madeOn', type: 'date', filterable: true, label: t('Made on', 'تاريخ الصنع') },
        { name: 'parentId', type: 'reference', to: 'widget', label: t('Parent', 'الأصل') },
        { name: 'score', type: 'number', readOnly: true, label: t('Score', 'النتيجة') },
        {
          name: 'parts',
          type: 'lines',
          label: t('Parts', 'الأجزاء'),
          maxItems: 20,
          fields: [
            { name: 'label', type: 'string', required: true, maxLength: 40, label: t('Label', 'الوصف') },
            { name: 'qty', type: 'integer', minimum: 1, label: t('Quantity', 'الكمية') },
            { name: 'total', type: 'money', readOnly: true, label: t('Total', 'الإجمالي') },
          ],
        },
      ],
      states: ['new', 'approved', 'retired'],
      initialState: 'new',
      transitions: [
        { name: 'approve', label: t('Approve', 'اعتماد'), from: ['new'], to: 'approved' },
        { name: 'retire', label: t('Retire', 'إيقاف'), from: ['new', 'approved'], to: 'retired' },
      ],
    },
  ],
  eventFamilies: [{
    family: 'widgets', prefix: 'widget', label: t('Widgets', 'القطع'),
    topics: [
      { topic: 'widget.widget.created', description: t('A widget was made.', 'صُنعت قطعة.'), source: { on: 'create', type: 'widget' } },
      { topic: 'widget.widget.approved', description: t('A widget was approved.', 'اعتُمدت قطعة.'), source: { on: 'transition', type: 'widget', transition: 'approve' } },
      { topic: 'widget.widget.retired', description: t('A widget was retired.', 'أُوقفت قطعة.'), source: { on: 'transition', type: 'widget', transition: 'retire' } },
    ],
  }],
};

const gizmos = {
  id: 'gizmos',
  version: '1.0.0',
  host: '^0.1.0',
  name: t('Gizmos', 'الأدوات'),
  description: t('A test app no company has installed.', 'تطبيق اختبار لم تثبته أي شركة.'),
  strings: { en: { title: 'Gizmos' }, ar: { title: 'الأدوات' } },
  documentTypes: [
    {
      name: 'gizmo',
      resource: 'gizmos',
      idPrefix: 'giz',
      label: t('Gizmo', 'أداة'),
      fields: [{ name: 'name', type: 'string', required: true, maxLength: 50, label: t('Name', 'الاسم') }],
    },
  ],
  eventFamilies: [{ family: 'gizmos', prefix: 'gizmo', label: t('Gizmos', 'الأدوات'), topics: [] }],
};

export function fuzzAppSources(): AppSource[] {
  return [widgets, gizmos].map((m) => ({ manifest: validManifest(m), dir: os.tmpdir(), origin: 'package' as const }));
}

/** Apps every fuzz company has. */
export const FUZZ_COMPANY_APPS = ['invoicing', 'widgets'];
