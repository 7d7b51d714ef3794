// Settings → Company: the seller's profile a tax invoice names (legal name in English and
// Arabic, VAT and CR numbers, national address, VAT rate). Every member reads it; the Owner
// changes it, and each problem the API finds is shown beside its field. Below it, the company's
// onboarding with ZATCA (company-zatca.tsx).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { t } from '../i18n.ts';
import type { StringKey } from '../strings.ts';
import { ErrorBanner, Field, Loading, Notice, PageHeader, fieldErrors, useAction, useAsync } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { ZatcaOnboarding } from './company-zatca.tsx';

interface Company {
  id: string;
  name: string;
  currency: string;
  legalName?: { en: string; ar: string };
  vatNumber?: string;
  crNumber?: string;
  address?: Record<string, string>;
  vatRate: number;
}

const ADDRESS = ['buildingNumber', 'street', 'district', 'city', 'postalCode', 'country'] as const;

/** The form's text values, flat: `legalName.en`, `address.city`, … */
type Values = Record<string, string>;

const toValues = (c: Company): Values => ({
  name: c.name,
  'legalName.en': c.legalName?.en ?? '',
  'legalName.ar': c.legalName?.ar ?? '',
  vatNumber: c.vatNumber ?? '',
  crNumber: c.crNumber ?? '',
  vatRate: String(c.vatRate),
  ...Object.fromEntries(ADDRESS.map((k) => [`address.${k}`, c.address?.[k] ?? ''])),
});

/** The PATCH body: an empty optional field clears it; the address and legal name go whole. */
function toPatch(v: Values): Record<string, unknown> {
  const opt = (s: string) => (s.trim() === '' ? null : s.trim());
  const address = Object.fromEntries(ADDRESS.filter((k) => v[`address.${k}`].trim()).map((k) => [k, v[`address.${k}`].trim()]));
  const en = v['legalName.en'].trim();
  const ar = v['legalName.ar'].trim();
  return {
    name: v.name.trim(),
    legalName: en || ar ? { en, ar } : null,
    vatNumber: opt(v.vatNumber),
    crNumber: opt(v.crNumber),
    address: Object.keys(address).length ? address : null,
    vatRate: Number(v.vatRate),
  };
}

export function CompanySettings() {
  const ws = useWorkspace();
  const company = useAsync(() => api<{ data: Company }>('GET', '/api/v1/company'), []);
  const [values, setValues] = useState<Values | null>(null);
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();
  const manage = ws.can('company:manage');
  useEffect(() => {
    if (company.data) setValues(toValues(company.data.data));
  }, [company.data]);
  if (company.error) return <ErrorBanner error={company.error} />;
  if (!values) return <Loading />;
  const errors = fieldErrors(error);

  const save = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if (await run(() => api('PATCH', '/api/v1/company', toPatch(values)))) {
      setSaved(true);
      company.reload();
    }
  };
  const input = (key: string, label: StringKey, opts: { dir?: 'ltr' | 'rtl'; hint?: StringKey; inputMode?: 'numeric' | 'decimal'; maxLength?: number } = {}) => {
    const pointer = `/${key.replace('.', '/')}`;
    return (
      <Field pointer={pointer} label={t(label)} hint={opts.hint && t(opts.hint)} error={errors[pointer]}>
        {(aria) => (
          <input
            {...aria}
            name={key}
            dir={opts.dir}
            inputMode={opts.inputMode}
            maxLength={opts.maxLength ?? 200}
            readOnly={!manage}
            value={values[key]}
            onInput={(e) => setValues({ ...values, [key]: (e.currentTarget as HTMLInputElement).value })}
          />
        )}
      </Field>
    );
  };

  return (
    <section>
      <PageHeader title={t('company.title')} />
      <p class="muted">{t(manage ? 'company.intro' : 'company.readOnly')}</p>
      {saved && <Notice kind="success">{t('company.saved')}</Notice>}
      <form class="panel" onSubmit={save} noValidate>
        <ErrorBanner error={error} />
        <div class="grid">
          {input('name', 'company.name')}
          {input('legalName.en', 'company.legalNameEn', { dir: 'ltr' })}
          {input('legalName.ar', 'company.legalNameAr', { dir: 'rtl' })}
          {input('vatNumber', 'company.vatNumber', { dir: 'ltr', inputMode: 'numeric', hint: 'company.vatNumberHint', maxLength: 40 })}
          {input('crNumber', 'company.crNumber', { dir: 'ltr', inputMode: 'numeric', hint: 'company.crNumberHint', maxLength: 40 })}
          {input('vatRate', 'company.vatRate', { dir: 'ltr', inputMode: 'decimal', hint: 'company.vatRateHint', maxLength: 6 })}
        </div>
        <h2 class="h3">{t('company.address')}</h2>
        <div class="grid">
          {ADDRESS.map((k) => input(`address.${k}`, `company.address.${k}` as StringKey, { dir: k === 'street' || k === 'district' || k === 'city' ? undefined : 'ltr' }))}
        </div>
        {manage && (
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {t('action.save')}
            </button>
          </div>
        )}
      </form>
      <ZatcaOnboarding />
    </section>
  );
}
