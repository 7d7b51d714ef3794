// Settings → Developers → Webhooks: the company's endpoints with their health (healthy, failing
// since when, disabled by the host for failing or by hand), a notice counting those that need
// attention, and registering one with a topic picker fed by the event catalogue (families, events
// and their descriptions in the person's language). The signing secret is shown once.
import { useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, qs } from '../api.ts';
import { formatDateTime, formatNumber, formatRelative } from '../format.ts';
import { t } from '../i18n.ts';
import type { Page } from '../types.ts';
import { ErrorBanner, Field, Loading, PageHeader, Pager, SecretOnce, fieldErrors, useAsync, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { DevelopersNav } from './settings-nav.tsx';

export interface Endpoint {
  id: string;
  url: string;
  topics: string[];
  description: string | null;
  enabled: boolean;
  /** `failing`: the host disabled it after it failed without a success for too long; `gone`: the host did when it answered 410 Gone; `manual`: someone did. */
  disabledReason: 'failing' | 'gone' | 'manual' | null;
  disabledAt: string | null;
  /** What the host saw when it disabled the endpoint (a sentence in English), or null. */
  disabledDetail: string | null;
  /** The first failed attempt since the last success; null while healthy. */
  failingSince: string | null;
  maxInFlight: number | null;
  ratePerSecond: number | null;
  secretRotatedAt: string | null;
  /** Headers sent with every delivery (names in lower case). */
  headers: Record<string, string>;
  /** The ed25519 public key (Standard Webhooks `v1a`) when the endpoint signs with one too, else null. */
  publicKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export type Health = 'healthy' | 'failing' | 'disabled-failing' | 'disabled-manual';

export function healthOf(ep: Pick<Endpoint, 'enabled' | 'disabledReason' | 'failingSince'>): Health {
  // Disabled by the host: for failing too long, or (`gone`) on a 410 answer.
  if (!ep.enabled) return ep.disabledReason === 'failing' || ep.disabledReason === 'gone' ? 'disabled-failing' : 'disabled-manual';
  return ep.failingSince ? 'failing' : 'healthy';
}

const HEALTH_LABEL = {
  healthy: 'health.healthy',
  failing: 'health.failing',
  'disabled-failing': 'health.disabledFailing',
  'disabled-manual': 'health.disabledManual',
} as const;

/** An instant as a date and time with how long ago it was. */
export const when = (iso: string) => ({ date: formatDateTime(iso), ago: formatRelative(iso) });

/**
 * The endpoint's health as a badge, with since when (failing) or when it was disabled: the date
 * and how long ago, on lines of their own (`block`, in a table) or after the badge (`inline`).
 */
export function HealthBadge({ ep, detail = 'block' }: { ep: Endpoint; detail?: 'block' | 'inline' | 'none' }) {
  const h = healthOf(ep);
  const at = h === 'failing' ? ep.failingSince : h === 'healthy' ? null : ep.disabledAt;
  const date = at && t(h === 'failing' ? 'health.since' : 'health.on', { date: formatDateTime(at) });
  return (
    <>
      <span class={`badge health-${h}`}>
        {h === 'disabled-failing' && <span aria-hidden="true">⚠ </span>}
        {t(HEALTH_LABEL[h])}
      </span>
      {detail === 'block' && at && (
        <time class="health-when muted small" dateTime={at}>
          <span class="nowrap">{date}</span> <span class="nowrap">{formatRelative(at)}</span>
        </time>
      )}
      {detail === 'inline' && at && (
        <>
          {' '}
          <time class="muted small" dateTime={at}>
            <span class="nowrap">{date}</span> · <span class="nowrap">{formatRelative(at)}</span>
          </time>
        </>
      )}
    </>
  );
}

/** Every endpoint of the company (the list's page when it holds them all), for the notice. */
async function everyEndpoint(first: Page<Endpoint>): Promise<Endpoint[]> {
  if (first.page === 1 && first.total <= first.data.length) return first.data;
  const out: Endpoint[] = [];
  for (let page = 1; page <= 20; page++) {
    const r = await api<Page<Endpoint>>('GET', `/api/v1/webhook-endpoints${qs({ page, pageSize: 100 })}`);
    out.push(...r.data);
    if (r.data.length === 0 || out.length >= r.total) break;
  }
  return out;
}

/** Failing and host-disabled endpoints at a glance: how many, and links to them. */
function HealthNotice({ endpoints }: { endpoints: Endpoint[] }) {
  const failing = endpoints.filter((e) => healthOf(e) === 'failing');
  const disabled = endpoints.filter((e) => healthOf(e) === 'disabled-failing');
  if (failing.length === 0 && disabled.length === 0) return null;
  const shown = [...disabled, ...failing].slice(0, 5);
  return (
    <div class={`banner health-notice ${disabled.length ? 'banner-error' : 'banner-warning'}`} role="status">
      {disabled.length > 0 && <p>{t('health.alertDisabled', { count: disabled.length, n: formatNumber(disabled.length) })}</p>}
      {failing.length > 0 && <p>{t('health.alertFailing', { count: failing.length, n: formatNumber(failing.length) })}</p>}
      <ul aria-label={t('health.alertList')}>
        {shown.map((ep) => (
          <li>
            <a href={`/settings/developers/webhooks/${ep.id}`} class="mono break" dir="ltr">
              {ep.url}
            </a>{' '}
            <HealthBadge ep={ep} detail="inline" />
          </li>
        ))}
      </ul>
    </div>
  );
}

interface Catalogue {
  families: { family: string; prefix: string; label: string; installed: boolean; optIn: boolean; count: number; topics: { topic: string; description: string; optIn: boolean }[] }[];
}

export function Webhooks() {
  const ws = useWorkspace();
  const loc = useLocation();
  const page = Math.max(1, Number(loc.query.page) || 1);
  const list = useAsync(() => api<Page<Endpoint>>('GET', `/api/v1/webhook-endpoints${qs({ page, pageSize: 20 })}`), [page]);
  const all = useAsync(() => (list.data ? everyEndpoint(list.data) : Promise.resolve(undefined)), [list.data]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ secret: string; id: string } | null>(null);
  const manage = ws.can('webhooks:manage');

  return (
    <section>
      <PageHeader title={t('dev.title')}>
        {manage && !creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            {t('hooks.new')}
          </button>
        )}
      </PageHeader>
      <DevelopersNav />
      <h2>{t('dev.webhooks')}</h2>
      {creating && (
        <NewEndpoint
          onCancel={() => setCreating(false)}
          onCreated={(ep) => {
            setCreating(false);
            setSecret({ secret: ep.secret, id: ep.id });
            list.reload();
          }}
        />
      )}
      <ErrorBanner error={list.error} />
      {all.data && <HealthNotice endpoints={all.data} />}
      {list.loading && !list.data && <Loading />}
      {list.data &&
        (list.data.data.length === 0 ? (
          <p class="empty">{t('hooks.none')}</p>
        ) : (
          <>
            <div class="table-wrap">
              <table>
                <caption class="sr-only">{t('dev.webhooks')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('hooks.url')}</th>
                    <th scope="col">{t('hooks.topics')}</th>
                    <th scope="col">{t('health.title')}</th>
                    <th scope="col">{t('keys.created')}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.data.map((ep) => (
                    <tr class={`health-row-${healthOf(ep)}`} data-health={healthOf(ep)}>
                      <th scope="row">
                        <a href={`/settings/developers/webhooks/${ep.id}`} class="mono break">
                          {ep.url}
                        </a>
                        {ep.description && <div class="muted small">{ep.description}</div>}
                      </th>
                      <td class="mono">{ep.topics.join(', ')}</td>
                      <td class="health">
                        <HealthBadge ep={ep} />
                      </td>
                      <td class="nowrap">{formatDateTime(ep.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={list.data.page} pageSize={list.data.pageSize} total={list.data.total} onPage={(p) => loc.route(`/settings/developers/webhooks${qs({ page: p > 1 ? p : undefined })}`)} />
          </>
        ))}
      <SecretOnce
        open={secret !== null}
        title={t('hooks.createdTitle')}
        label={t('hooks.secret')}
        value={secret?.secret ?? ''}
        onDone={() => {
          const id = secret?.id;
          setSecret(null);
          if (id) loc.route(`/settings/developers/webhooks/${id}`);
        }}
      />
    </section>
  );
}

/**
 * Custom headers typed one `name: value` a line (blank lines skipped); the lines without a colon,
 * by number. The host checks the names and values themselves (endpoints.ts).
 */
export function parseHeaderLines(text: string): { headers: Record<string, string>; bad: number[] } {
  const headers: Record<string, string> = {};
  const bad: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const colon = line.indexOf(':');
    if (colon <= 0) bad.push(i + 1);
    else headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  });
  return { headers, bad };
}

function NewEndpoint(props: { onCancel(): void; onCreated(ep: Endpoint & { secret: string }): void }) {
  const [url, setUrl] = useState('https://');
  const [description, setDescription] = useState('');
  const [topics, setTopics] = useState<string[]>([]);
  const [headerLines, setHeaderLines] = useState('');
  const [asymmetric, setAsymmetric] = useState(false);
  const [badLines, setBadLines] = useState<number[]>([]);
  const { busy, error, run } = useAction();
  const errors = fieldErrors(error);
  const headersError = badLines.length
    ? t('hooks.headersBadLines', { lines: badLines.map((n) => formatNumber(n)).join(', ') })
    : (errors['/headers'] ?? Object.entries(errors).find(([k]) => k.startsWith('/headers/'))?.[1]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const { headers, bad } = parseHeaderLines(headerLines);
    setBadLines(bad);
    if (bad.length) return;
    await run(async () => {
      const r = await api<{ data: Endpoint & { secret: string } }>('POST', '/api/v1/webhook-endpoints', {
        url: url.trim(),
        topics,
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(asymmetric ? { asymmetric: true } : {}),
      });
      props.onCreated(r.data);
    });
  };
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby="new-endpoint-title">
      <h3 id="new-endpoint-title">{t('hooks.new')}</h3>
      <ErrorBanner error={error} />
      <Field pointer="/url" label={t('hooks.url')} required error={errors['/url']} hint={t('hooks.urlHint')}>
        {(aria) => <input {...aria} type="url" dir="ltr" value={url} onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)} />}
      </Field>
      <Field pointer="/description" label={t('hooks.description')} error={errors['/description']}>
        {(aria) => <input {...aria} type="text" maxLength={500} value={description} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} />}
      </Field>
      <TopicPicker value={topics} onChange={setTopics} error={errors['/topics'] ?? Object.entries(errors).find(([k]) => k.startsWith('/topics/'))?.[1]} />
      <Field pointer="/headers" label={t('hooks.headers')} error={headersError} hint={t('hooks.headersHint')}>
        {(aria) => (
          <textarea {...aria} dir="ltr" rows={3} class="mono" placeholder="x-team: billing" value={headerLines} onInput={(e) => setHeaderLines((e.currentTarget as HTMLTextAreaElement).value)} />
        )}
      </Field>
      <div class="field">
        <label class="check">
          <input id="f-asymmetric" type="checkbox" aria-describedby="f-asymmetric-hint" checked={asymmetric} onChange={(e) => setAsymmetric((e.currentTarget as HTMLInputElement).checked)} />{' '}
          {t('hooks.asymmetric')}
        </label>
        <p class="hint" id="f-asymmetric-hint">
          {t('hooks.asymmetricHint')}
        </p>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {t('hooks.create')}
        </button>
        <button type="button" onClick={props.onCancel}>
          {t('action.cancel')}
        </button>
      </div>
    </form>
  );
}

/** Families of the catalogue, each with a `<prefix>.*` choice and its events with their descriptions. */
export function TopicPicker(props: { value: string[]; onChange(v: string[]): void; error?: string }) {
  const cat = useAsync(() => api<{ data: Catalogue }>('GET', '/api/v1/events/catalogue'), []);
  const [search, setSearch] = useState('');
  const [installedOnly, setInstalledOnly] = useState(true);
  const chosen = new Set(props.value);
  const toggle = (p: string, on: boolean) => props.onChange(on ? [...props.value.filter((x) => x !== p), p] : props.value.filter((x) => x !== p));
  const families = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (cat.data?.data.families ?? [])
      .filter((f) => !installedOnly || f.installed)
      .map((f) => ({ ...f, shown: q ? f.topics.filter((x) => x.topic.toLowerCase().includes(q) || x.description.toLowerCase().includes(q)) : f.topics }))
      .filter((f) => !q || f.shown.length > 0 || f.label.toLowerCase().includes(q) || f.prefix.includes(q));
  }, [cat.data, search, installedOnly]);
  return (
    <fieldset class={`topics${props.error ? ' field-invalid' : ''}`} aria-describedby="topics-chosen">
      <legend>
        {t('hooks.topics')}
        <span class="req" aria-hidden="true">
          {' '}*
        </span>
      </legend>
      {props.error && <p class="field-error">{props.error}</p>}
      <p id="topics-chosen" class="hint">
        {props.value.length ? t('hooks.chosen', { topics: props.value.join(', ') }) : t('hooks.chooseSome')}
      </p>
      <div class="row">
        <label class="check">
          <input type="checkbox" checked={chosen.has('*')} onChange={(e) => toggle('*', (e.currentTarget as HTMLInputElement).checked)} /> {t('hooks.all')}
        </label>
        <label class="check">
          <input type="checkbox" checked={installedOnly} onChange={(e) => setInstalledOnly((e.currentTarget as HTMLInputElement).checked)} /> {t('hooks.installedOnly')}
        </label>
      </div>
      <label for="topic-search" class="sr-only">
        {t('hooks.searchTopics')}
      </label>
      <input id="topic-search" type="search" placeholder={t('hooks.searchTopics')} value={search} onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)} />
      <ErrorBanner error={cat.error} />
      {cat.loading && !cat.data && <Loading />}
      <div class="families">
        {families.map((f) => {
          const wildcard = `${f.prefix}.*`;
          const famOn = chosen.has(wildcard);
          return (
            <details open={!!search.trim() || f.topics.some((x) => chosen.has(x.topic))}>
              <summary>
                <span>{f.label}</span> <span class="muted small mono">{f.prefix}.*</span> <span class="muted small">({formatNumber(f.topics.length)})</span>
              </summary>
              <label class="check">
                <input type="checkbox" checked={famOn} onChange={(e) => toggle(wildcard, (e.currentTarget as HTMLInputElement).checked)} /> {t('hooks.family', { family: f.label })}
              </label>
              <ul class="topic-list">
                {f.shown.map((x) => (
                  <li>
                    <label class="check">
                      <input type="checkbox" disabled={famOn} checked={famOn || chosen.has(x.topic)} onChange={(e) => toggle(x.topic, (e.currentTarget as HTMLInputElement).checked)} />{' '}
                      <span class="mono">{x.topic}</span>
                      <span class="muted small block">{x.description}</span>
                    </label>
                  </li>
                ))}
              </ul>
            </details>
          );
        })}
      </div>
    </fieldset>
  );
}
