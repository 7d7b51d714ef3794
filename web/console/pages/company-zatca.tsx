// Settings → Company, its ZATCA part: whether the company is onboarded with ZATCA (the gateway,
// the certificate that stamps its documents), and for the Owner the form that onboards it with
// the OTP from the Fatoora portal (POST /company/zatca/onboard). Shown when the company has an
// app that serves GET /company/zatca (the invoicing app); nothing otherwise.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { formatDateTime } from '../format.ts';
import { t } from '../i18n.ts';
import type { StringKey } from '../strings.ts';
import { ErrorBanner, Field, Notice, fieldErrors, useAction, useAsync } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';

interface ZatcaState {
  onboarded: boolean;
  gateway?: string;
  onboardedAt?: string;
  certificate?: { serialNumber: string; validTo: string };
}

const GATEWAYS = ['simulation', 'production', 'sandbox'] as const;

export function ZatcaOnboarding() {
  const ws = useWorkspace();
  const state = useAsync(async () => {
    try {
      return (await api<{ data: ZatcaState }>('GET', '/api/v1/company/zatca')).data;
    } catch (err) {
      // No app of the company serves it: no ZATCA part.
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }, []);
  const [otp, setOtp] = useState('');
  const [gateway, setGateway] = useState<string>('simulation');
  const [done, setDone] = useState(false);
  const { busy, error, run } = useAction();
  if (state.data === null || (state.data === undefined && !state.error)) return null;
  const s = state.data;
  const errors = fieldErrors(error);
  const onboard = async (e: Event) => {
    e.preventDefault();
    setDone(false);
    if (await run(() => api('POST', '/api/v1/company/zatca/onboard', { otp: otp.trim(), gateway }))) {
      setDone(true);
      setOtp('');
      state.reload();
    }
  };
  return (
    <section class="panel" aria-labelledby="zatca-title">
      <h2 class="h3" id="zatca-title">
        {t('zatca.title')}
      </h2>
      <ErrorBanner error={state.error} />
      {s && (
        <p id="zatca-state">
          {s.onboarded
            ? t('zatca.onboarded', { date: formatDateTime(s.onboardedAt), gateway: t(`zatca.gateway.${s.gateway}` as StringKey) })
            : t('zatca.notOnboarded')}
          {s.certificate && ` ${t('zatca.certificate', { serial: s.certificate.serialNumber, date: formatDateTime(s.certificate.validTo) })}`}
        </p>
      )}
      {done && <Notice kind="success">{t('zatca.done')}</Notice>}
      {ws.can('zatca:onboard') ? (
        <form onSubmit={onboard} noValidate>
          <p class="muted">{t('zatca.intro')}</p>
          <ErrorBanner error={error} />
          <div class="grid">
            <Field pointer="/otp" label={t('zatca.otp')} hint={t('zatca.otpHint')} error={errors['/otp']} required>
              {(aria) => <input {...aria} name="otp" dir="ltr" inputMode="numeric" autoComplete="one-time-code" maxLength={10} value={otp} onInput={(e) => setOtp((e.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Field pointer="/gateway" label={t('zatca.gateway')} error={errors['/gateway']}>
              {(aria) => (
                <select {...aria} name="gateway" value={gateway} onChange={(e) => setGateway((e.currentTarget as HTMLSelectElement).value)}>
                  {GATEWAYS.map((g) => (
                    <option value={g}>{t(`zatca.gateway.${g}` as StringKey)}</option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {t(s?.onboarded ? 'zatca.onboardAgain' : 'zatca.onboard')}
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">{t('zatca.ownerOnly')}</p>
      )}
    </section>
  );
}
