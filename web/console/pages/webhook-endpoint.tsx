// One webhook endpoint: its health (failing since when; disabled by the host with what it saw,
// or by hand) and enabling it again after saying what that does to its deliveries, its limits
// (attempts at once, deliveries per second) and changing them, rotate its secret (shown once),
// disable it, send a test event, its delivery log with every attempt, retry one delivery, and
// recover the failed ones since a time after a preview of how many.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, qs } from '../api.ts';
import { formatDateTime, formatNumber, localInputToIso } from '../format.ts';
import { t } from '../i18n.ts';
import type { Page } from '../types.ts';
import { ConfirmDialog, ErrorBanner, Field, Loading, Notice, PageHeader, Pager, SecretOnce, fieldErrors, useAsync, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { DevelopersNav } from './settings-nav.tsx';
import { HealthBadge, healthOf, when, type Endpoint } from './webhooks.tsx';

interface Delivery {
  id: string;
  eventId: string;
  topic: string;
  state: 'pending' | 'in_flight' | 'delivered' | 'dead';
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastFailure: string | null;
  createdAt: string;
  deliveredAt: string | null;
}
interface Attempt {
  attempt: number;
  at: string;
  durationMs: number;
  status: number | null;
  failure: string | null;
  detail?: string | null;
  responseExcerpt: string;
  responseBytes: number;
}
interface Recover {
  since: string;
  count: number;
  dead: number;
  retrying: number;
}

const FILTERS = ['', 'delivered', 'pending', 'retrying', 'dead', 'failed'] as const;

/** The API's bounds of the per-endpoint limits (PATCH …/webhook-endpoints/{id}). */
const LIMITS = { maxInFlight: 1000, ratePerSecond: 10_000 } as const;
/** DIWAN_WEBHOOK_DISABLE_AFTER's default, in days: what the page can say without knowing the host's setting. */
const DEFAULT_DISABLE_AFTER_DAYS = 5;

export function WebhookEndpoint({ id }: { id: string }) {
  const ws = useWorkspace();
  const loc = useLocation();
  const manage = ws.can('webhooks:manage');
  const base = `/api/v1/webhook-endpoints/${encodeURIComponent(id)}`;
  const [filter, setFilter] = useState<string>('');
  const [page, setPage] = useState(1);
  const [tick, setTick] = useState(0);
  // The health moves with the deliveries: read again with the log.
  const ep = useAsync(() => api<{ data: Endpoint }>('GET', base), [id, tick]);
  const log = useAsync(() => api<Page<Delivery>>('GET', `${base}/deliveries${qs({ page, pageSize: 20, state: filter })}`), [id, filter, page, tick]);
  const [open, setOpen] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const [notice, setNotice] = useState<string>();
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | 'enable' | null>(null);
  const [editingLimits, setEditingLimits] = useState(false);
  const limitsButton = useRef<HTMLButtonElement>(null);
  const closeLimits = () => {
    setEditingLimits(false);
    // Back to the button that opened the form (it is rendered again after this update).
    setTimeout(() => limitsButton.current?.focus());
  };
  const [testTopic, setTestTopic] = useState('');
  const [since, setSince] = useState('');
  const [preview, setPreview] = useState<Recover | null>(null);

  // Deliveries move on their own: look again while the page is open, every second for a while
  // after something was sent or retried, every five seconds otherwise.
  const [busyUntil, setBusyUntil] = useState(0);
  useEffect(() => {
    const every = Date.now() < busyUntil ? 1000 : 5000;
    const timer = setTimeout(() => {
      if (document.visibilityState === 'visible') setTick((n) => n + 1);
    }, every);
    return () => clearTimeout(timer);
  }, [tick, busyUntil]);

  const act = async (fn: () => Promise<string | void>) => {
    setNotice(undefined);
    await run(async () => {
      const msg = await fn();
      setBusyUntil(Date.now() + 20_000);
      if (msg) setNotice(msg);
    });
  };
  const endpoint = ep.data?.data;

  return (
    <section>
      <PageHeader title={t('dev.title')} />
      <DevelopersNav />
      <p class="crumbs">
        <a href="/settings/developers/webhooks">{t('dev.webhooks')}</a>
      </p>
      <ErrorBanner error={ep.error} />
      {!endpoint && ep.loading && <Loading />}
      {endpoint && (
        <>
          <h2 class="mono break">{endpoint.url}</h2>
          <HealthPanel ep={endpoint} manage={manage} busy={busy} onEnable={() => setConfirm('enable')} />
          <dl class="fields">
            <div>
              <dt>{t('hooks.topics')}</dt>
              <dd class="mono">{endpoint.topics.join(', ')}</dd>
            </div>
            {endpoint.description && (
              <div>
                <dt>{t('hooks.description')}</dt>
                <dd>{endpoint.description}</dd>
              </div>
            )}
            <div>
              <dt>{t('hooks.headers')}</dt>
              <dd class="endpoint-headers">
                {Object.keys(endpoint.headers).length ? (
                  <ul class="plain mono" dir="ltr">
                    {Object.entries(endpoint.headers).map(([name, value]) => (
                      <li>
                        {name}: {value}
                      </li>
                    ))}
                  </ul>
                ) : (
                  t('hooks.noHeaders')
                )}
              </dd>
            </div>
            <div>
              <dt>{t('hooks.publicKey')}</dt>
              <dd class="endpoint-public-key">{endpoint.publicKey ? <code class="break" dir="ltr">{endpoint.publicKey}</code> : t('hooks.noPublicKey')}</dd>
            </div>
            <div>
              <dt>{t('hooks.rotated')}</dt>
              <dd>{endpoint.secretRotatedAt ? formatDateTime(endpoint.secretRotatedAt) : t('keys.never')}</dd>
            </div>
            <div>
              <dt>{t('keys.created')}</dt>
              <dd>{formatDateTime(endpoint.createdAt)}</dd>
            </div>
            <div>
              <dt>{t('limits.maxInFlight')}</dt>
              <dd class="limit-maxInFlight">{endpoint.maxInFlight !== null ? formatNumber(endpoint.maxInFlight) : t('limits.hostDefault')}</dd>
            </div>
            <div>
              <dt>{t('limits.ratePerSecond')}</dt>
              <dd class="limit-ratePerSecond">{endpoint.ratePerSecond !== null ? formatNumber(endpoint.ratePerSecond) : t('limits.noLimit')}</dd>
            </div>
          </dl>
          {notice && <Notice kind="success">{notice}</Notice>}
          <ErrorBanner error={error} />
          {editingLimits && (
            <LimitsForm
              base={base}
              ep={endpoint}
              onCancel={closeLimits}
              onSaved={() => {
                closeLimits();
                setError(undefined);
                setNotice(t('limits.saved'));
                ep.reload();
              }}
            />
          )}
          {manage && (
            <div class="toolbar">
              <form
                class="inline"
                onSubmit={(e) => {
                  e.preventDefault();
                  void act(async () => {
                    const r = await api<{ data: { topic: string } }>('POST', `${base}/test`, testTopic.trim() ? { topic: testTopic.trim() } : {});
                    setTick((n) => n + 1);
                    return t('hooks.testSent', { topic: r.data.topic });
                  });
                }}
              >
                <label for="test-topic">{t('hooks.testTopic')}</label>
                <input id="test-topic" type="text" class="mono" dir="ltr" placeholder={t('hooks.testTopicHint')} value={testTopic} onInput={(e) => setTestTopic((e.currentTarget as HTMLInputElement).value)} />
                <button type="submit" class="primary" disabled={busy}>
                  {t('hooks.sendTest')}
                </button>
              </form>
              {endpoint.enabled && (
                <button
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    act(async () => {
                      await api('PATCH', base, { enabled: false });
                      ep.reload();
                      return t('hooks.nowDisabled');
                    })
                  }
                >
                  {t('hooks.disable')}
                </button>
              )}
              {!editingLimits && (
                <button type="button" ref={limitsButton} disabled={busy} onClick={() => setEditingLimits(true)}>
                  {t('limits.edit')}
                </button>
              )}
              <button type="button" disabled={busy} onClick={() => setConfirm('rotate')}>
                {t('hooks.rotate')}
              </button>
              <button type="button" class="danger" disabled={busy} onClick={() => setConfirm('delete')}>
                {t('action.delete')}
              </button>
            </div>
          )}
        </>
      )}

      <h2 id="log-title">{t('hooks.log')}</h2>
      <div class="row">
        <Field pointer="/deliveries/state" label={t('hooks.filterState')}>
          {(aria) => (
            <select
              {...aria}
              value={filter}
              onChange={(e) => {
                setFilter((e.currentTarget as HTMLSelectElement).value);
                setPage(1);
              }}
            >
              {FILTERS.map((f) => (
                <option value={f}>{f ? t(`delivery.${f}` as 'delivery.delivered') : t('filter.any')}</option>
              ))}
            </select>
          )}
        </Field>
        <button type="button" onClick={() => setTick((n) => n + 1)}>
          {t('action.refresh')}
        </button>
      </div>
      <ErrorBanner error={log.error} />
      {log.data &&
        (log.data.data.length === 0 ? (
          <p class="empty">{t('hooks.noDeliveries')}</p>
        ) : (
          <>
            <div class="table-wrap">
              <table aria-labelledby="log-title">
                <thead>
                  <tr>
                    <th scope="col">{t('hooks.topic')}</th>
                    <th scope="col">{t('hooks.deliveryState')}</th>
                    <th scope="col" class="num">{t('hooks.attempts')}</th>
                    <th scope="col" class="num">{t('hooks.lastStatus')}</th>
                    <th scope="col">{t('keys.created')}</th>
                    <th scope="col"><span class="sr-only">{t('keys.actions')}</span></th>
                  </tr>
                </thead>
                <tbody>
                  {log.data.data.map((d) => (
                    <>
                      <tr class="delivery" data-state={d.state}>
                        <th scope="row" class="mono">{d.topic}</th>
                        <td>
                          <span class={`badge delivery-${d.state}`}>{t(`delivery.${d.state}` as 'delivery.delivered')}</span>
                          {d.state === 'pending' && d.attemptCount > 0 && d.nextAttemptAt && <div class="muted small">{t('hooks.nextAttempt', { at: formatDateTime(d.nextAttemptAt) })}</div>}
                        </td>
                        <td class="num">{formatNumber(d.attemptCount)}</td>
                        <td class="num">{d.lastStatus !== null ? formatNumber(d.lastStatus) : d.lastFailure ?? '—'}</td>
                        <td class="nowrap">{formatDateTime(d.createdAt)}</td>
                        <td class="nowrap">
                          <button type="button" class="small" aria-expanded={open === d.id ? 'true' : 'false'} aria-controls={`attempts-${d.id}`} onClick={() => setOpen(open === d.id ? null : d.id)}>
                            {t('hooks.attemptsShow')}
                          </button>{' '}
                          {manage && d.state !== 'in_flight' && (
                            <button
                              type="button"
                              class="small"
                              disabled={busy}
                              onClick={() =>
                                act(async () => {
                                  await api('POST', `${base}/deliveries/${encodeURIComponent(d.id)}/retry`);
                                  setTick((n) => n + 1);
                                  return t('hooks.retried');
                                })
                              }
                            >
                              {t('hooks.retry')}
                            </button>
                          )}
                        </td>
                      </tr>
                      {open === d.id && (
                        <tr id={`attempts-${d.id}`}>
                          <td colSpan={6}>
                            <Attempts url={`${base}/deliveries/${encodeURIComponent(d.id)}`} tick={tick} />
                          </td>
                        </tr>
                      )}
                    </>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={log.data.page} pageSize={log.data.pageSize} total={log.data.total} onPage={setPage} />
          </>
        ))}

      {manage && (
        <>
          <h2>{t('hooks.recover')}</h2>
          <p class="hint">{t('hooks.recoverHint')}</p>
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => {
                const iso = localInputToIso(since) ?? since;
                setPreview((await api<{ data: Recover }>('GET', `${base}/recover${qs({ since: iso })}`)).data);
              });
            }}
          >
            <label for="recover-since">{t('hooks.since')}</label>
            <input id="recover-since" type="datetime-local" value={since} onInput={(e) => setSince((e.currentTarget as HTMLInputElement).value)} />
            <button type="submit" disabled={busy || !since}>
              {t('hooks.preview')}
            </button>
          </form>
          {preview && (
            <div class="panel" role="status">
              <p>{t('hooks.previewCount', { count: preview.count, n: formatNumber(preview.count), dead: formatNumber(preview.dead), retrying: formatNumber(preview.retrying), since: formatDateTime(preview.since) })}</p>
              <div class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={busy || preview.count === 0}
                  onClick={() =>
                    act(async () => {
                      const r = await api<{ data: Recover }>('POST', `${base}/recover`, { since: preview.since });
                      setPreview(null);
                      setTick((n) => n + 1);
                      return t('hooks.recovered', { count: r.data.count, n: formatNumber(r.data.count) });
                    })
                  }
                >
                  {t('hooks.recoverConfirm')}
                </button>
                <button type="button" onClick={() => setPreview(null)}>
                  {t('action.cancel')}
                </button>
              </div>
            </div>
          )}
        </>
      )}

      <SecretOnce open={secret !== null} title={t('hooks.rotatedTitle')} label={t('hooks.secret')} value={secret ?? ''} onDone={() => setSecret(null)} />
      <ConfirmDialog
        open={confirm === 'enable'}
        title={t('health.enableTitle')}
        body={<EnableExplained base={base} open={confirm === 'enable'} />}
        confirmLabel={t('health.enableAgain')}
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() =>
          act(async () => {
            // POST …/enable wakes the delivery worker at once; PATCH would do the same change.
            await api('POST', `${base}/enable`);
            setConfirm(null);
            setTick((n) => n + 1);
            return t('health.enabledAgain');
          })
        }
      />
      <ConfirmDialog
        open={confirm === 'rotate'}
        title={t('hooks.rotate')}
        body={<p>{t('hooks.rotateBody')}</p>}
        confirmLabel={t('hooks.rotate')}
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() =>
          act(async () => {
            const r = await api<{ data: { secret: string } }>('POST', `${base}/rotate-secret`);
            setConfirm(null);
            setSecret(r.data.secret);
            ep.reload();
          })
        }
      />
      <ConfirmDialog
        open={confirm === 'delete'}
        title={t('hooks.deleteTitle')}
        body={<p>{t('hooks.deleteBody')}</p>}
        confirmLabel={t('action.delete')}
        danger
        busy={busy}
        onCancel={() => setConfirm(null)}
        onConfirm={() =>
          act(async () => {
            await api('DELETE', base);
            setConfirm(null);
            loc.route('/settings/developers/webhooks');
          })
        }
      />
    </section>
  );
}

function Attempts({ url, tick }: { url: string; tick: number }) {
  const d = useAsync(() => api<{ data: Delivery & { attempts: Attempt[] } }>('GET', url), [url, tick]);
  if (d.error) return <ErrorBanner error={d.error} />;
  if (!d.data) return <Loading />;
  const attempts = d.data.data.attempts;
  if (attempts.length === 0) return <p class="muted">{t('hooks.noAttempts')}</p>;
  return (
    <table class="attempts">
      <caption>{t('hooks.attemptsOf', { topic: d.data.data.topic })}</caption>
      <thead>
        <tr>
          <th scope="col" class="num">#</th>
          <th scope="col">{t('hooks.at')}</th>
          <th scope="col" class="num">{t('hooks.httpStatus')}</th>
          <th scope="col" class="num">{t('hooks.duration')}</th>
          <th scope="col">{t('hooks.failure')}</th>
          <th scope="col">{t('hooks.response')}</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((a) => (
          <tr>
            <td class="num">{formatNumber(a.attempt)}</td>
            <td class="nowrap">{formatDateTime(a.at)}</td>
            <td class="num">{a.status !== null ? formatNumber(a.status) : '—'}</td>
            <td class="num nowrap">{t('hooks.ms', { ms: formatNumber(a.durationMs) })}</td>
            <td>{a.failure ? `${a.failure}${a.detail ? ` (${a.detail})` : ''}` : '—'}</td>
            <td>
              <code class="excerpt" dir="ltr">{a.responseExcerpt || '—'}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Healthy, failing since when, or disabled (by the host, with what it saw; or by hand) with "Enable again". */
function HealthPanel({ ep, manage, busy, onEnable }: { ep: Endpoint; manage: boolean; busy: boolean; onEnable(): void }) {
  const h = healthOf(ep);
  const kind = h === 'disabled-failing' ? 'banner-error' : h === 'failing' ? 'banner-warning' : h === 'disabled-manual' ? 'banner-info' : 'banner-success';
  return (
    <section class={`banner health-panel ${kind}`} aria-labelledby="health-title" data-health={h}>
      <h3 id="health-title" class="h4">
        {t('health.title')}: <HealthBadge ep={ep} detail="none" />
      </h3>
      {h === 'healthy' && <p>{t('health.healthyText')}</p>}
      {h === 'failing' && ep.failingSince && <p>{t('health.failingText', { ...when(ep.failingSince), days: formatNumber(DEFAULT_DISABLE_AFTER_DAYS) })}</p>}
      {/* A 410 answer: the detail below (worded by the host in the person's language) says it all. */}
      {h === 'disabled-failing' && ep.disabledAt && ep.disabledReason !== 'gone' && (
        <p>
          {ep.failingSince
            ? t('health.disabledFailingText', { ...when(ep.disabledAt), since: formatDateTime(ep.failingSince) })
            : t('health.disabledFailingTextNoSince', when(ep.disabledAt))}
        </p>
      )}
      {h === 'disabled-failing' && ep.disabledDetail && (
        <dl class="host-saw">
          <dt>{t('health.detail')}</dt>
          <dd>
            <q class="disabled-detail">
              {ep.disabledDetail}
            </q>
          </dd>
        </dl>
      )}
      {h === 'disabled-manual' && ep.disabledAt && <p>{t('health.disabledManualText', when(ep.disabledAt))}</p>}
      {manage && !ep.enabled && (
        <div class="actions">
          <button type="button" class="primary enable-again" disabled={busy} onClick={onEnable}>
            {t('health.enableAgain')}
          </button>
        </div>
      )}
    </section>
  );
}

/** What enabling again does, with the deliveries still waiting and the dead ones counted. */
function EnableExplained({ base, open }: { base: string; open: boolean }) {
  const counts = useAsync(async () => {
    if (!open) return undefined;
    const [pending, dead] = await Promise.all(
      (['pending', 'dead'] as const).map((state) => api<Page<Delivery>>('GET', `${base}/deliveries${qs({ state, page: 1, pageSize: 1 })}`)),
    );
    return { pending: pending.total, dead: dead.total };
  }, [base, open]);
  const c = counts.data;
  return (
    <div class="enable-explained">
      <p>{t('health.resume')}</p>
      {c && c.pending > 0 && <p class="pending-count">{t('health.pending', { count: c.pending, n: formatNumber(c.pending) })}</p>}
      {c && c.dead > 0 && <p>{t('health.dead', { count: c.dead, n: formatNumber(c.dead) })}</p>}
      <p>{t('health.afresh')}</p>
      <ErrorBanner error={counts.error} />
    </div>
  );
}

/** The limits: a number each, or empty for the default; the API's refusals next to the fields. */
function LimitsForm({ base, ep, onCancel, onSaved }: { base: string; ep: Endpoint; onCancel(): void; onSaved(): void }) {
  const [maxInFlight, setMaxInFlight] = useState(ep.maxInFlight === null ? '' : String(ep.maxInFlight));
  const [rate, setRate] = useState(ep.ratePerSecond === null ? '' : String(ep.ratePerSecond));
  const { busy, error, run } = useAction();
  const errors = fieldErrors(error);
  useEffect(() => document.getElementById('f-maxInFlight')?.focus(), []);
  // Empty is the default (null); anything else goes as typed, a number when it is one, and the API says what is wrong with it.
  const value = (s: string) => {
    const v = s.trim().replace(/[\u0660-\u0669]/g, (d) => String(d.charCodeAt(0) - 0x0660));
    return v === '' ? null : Number.isFinite(Number(v)) ? Number(v) : v;
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      await api('PATCH', base, { maxInFlight: value(maxInFlight), ratePerSecond: value(rate) });
      onSaved();
    });
  };
  return (
    <form class="panel limits" onSubmit={submit} noValidate aria-labelledby="limits-title">
      <h3 id="limits-title">{t('limits.title')}</h3>
      <ErrorBanner error={error} />
      <div class="grid">
        <Field pointer="/maxInFlight" label={t('limits.maxInFlight')} error={errors['/maxInFlight']} hint={t('limits.maxInFlightHint', { min: formatNumber(1), max: formatNumber(LIMITS.maxInFlight) })}>
          {(aria) => <input {...aria} type="number" inputMode="numeric" step="1" min={1} max={LIMITS.maxInFlight} value={maxInFlight} onInput={(e) => setMaxInFlight((e.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <Field pointer="/ratePerSecond" label={t('limits.ratePerSecond')} error={errors['/ratePerSecond']} hint={t('limits.ratePerSecondHint', { min: formatNumber(1), max: formatNumber(LIMITS.ratePerSecond) })}>
          {(aria) => <input {...aria} type="number" inputMode="numeric" step="1" min={1} max={LIMITS.ratePerSecond} value={rate} onInput={(e) => setRate((e.currentTarget as HTMLInputElement).value)} />}
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {t('action.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('action.cancel')}
        </button>
      </div>
    </form>
  );
}
