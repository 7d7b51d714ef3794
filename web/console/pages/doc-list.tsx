// A document type's list: filters from its filterable fields and state, sort, paging, and the
// create button when the person may create.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, qs } from '../api.ts';
import { FieldInput, Value, isNumeric, type Values } from '../fields.tsx';
import { formatDateTime } from '../format.ts';
import { t } from '../i18n.ts';
import type { Doc, DocTypeMeta, FieldMeta, Page } from '../types.ts';
import { ErrorBanner, Field, FilterActions, Loading, PageHeader, Pager, useAsync } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { StateBadge } from '../state-label.tsx';
import { NotFound } from './not-found.tsx';

/** The columns a list shows: a few writable scalar fields, then the last computed amount. */
export function listColumns(meta: DocTypeMeta): FieldMeta[] {
  const shown = meta.fields.filter((f) => !f.readOnly && f.type !== 'lines' && !(f.type === 'string' && (f.maxLength ?? 0) > 500)).slice(0, 4);
  const computed = meta.fields.filter((f) => f.readOnly && f.type === 'money').slice(-1);
  return [...shown, ...computed];
}

export { StateBadge };

export function DocList({ resource }: { resource: string }) {
  const ws = useWorkspace();
  const meta = ws.byResource.get(resource);
  const loc = useLocation();
  const q = loc.query;
  const page = Math.max(1, Number(q.page) || 1);
  const sort = q.sort && meta?.sort.includes(q.sort) ? q.sort : '-createdAt';
  const filterFields = meta?.fields.filter((f) => f.filterable && f.type !== 'lines') ?? [];
  const active: Values = {};
  for (const f of filterFields) if (q[f.name] !== undefined) active[f.name] = f.type === 'boolean' ? q[f.name] === 'true' : isNumeric(f) ? Number(q[f.name]) : q[f.name];
  if (q.state) active.state = q.state;
  const [draft, setDraft] = useState<Values>(active);

  const list = useAsync(
    () => (meta ? api<Page<Doc>>('GET', `/api/v1/${resource}${qs({ page, pageSize: 20, sort, ...(active as Record<string, string>) })}`) : Promise.resolve(undefined)),
    [resource, loc.url],
  );
  if (!meta) return <NotFound />;

  const go = (params: Record<string, unknown>) => {
    const next = { sort: sort === '-createdAt' ? undefined : sort, ...active, page: undefined, ...params } as Record<string, string | undefined>;
    loc.route(`/d/${resource}${qs(next)}`);
  };
  const columns = listColumns(meta);
  const sortLabel = (s: string) => {
    const name = s.replace(/^-/, '');
    const label = name === 'createdAt' ? t('sort.created') : name === 'state' ? t('doc.state') : (meta.fields.find((f) => f.name === name)?.label ?? name);
    return t(s.startsWith('-') ? 'sort.desc' : 'sort.asc', { field: label });
  };
  const stateField: FieldMeta = { name: 'state', type: 'enum', label: t('doc.state'), required: false, readOnly: false, filterable: true, options: meta.states.map((s) => ({ value: s.name, label: s.label })) };

  return (
    <section>
      <PageHeader title={meta.labelPlural}>
        {meta.permissions.create && (
          <a class="button primary" href={`/d/${resource}/new`}>
            {t('doc.new', { type: meta.label })}
          </a>
        )}
      </PageHeader>

      {(filterFields.length > 0 || meta.states.length > 0 || meta.sort.length > 2) && (
        <details class="filters" open={Object.keys(active).length > 0}>
          <summary>{t('filter.title')}</summary>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const clean = Object.fromEntries(Object.entries(draft).filter(([, v]) => v !== undefined && v !== ''));
              loc.route(`/d/${resource}${qs({ sort: sort === '-createdAt' ? undefined : sort, ...(clean as Record<string, string>) })}`);
            }}
          >
            <div class="grid">
              {filterFields.map((f) => (
                <FieldInput field={f} pointer={`/filter/${f.name}`} filter value={draft[f.name]} currency={ws.company.currency} errors={{}} onChange={(v) => setDraft({ ...draft, [f.name]: v })} />
              ))}
              {meta.states.length > 0 && (
                <FieldInput field={stateField} pointer="/filter/state" filter value={draft.state} currency={ws.company.currency} errors={{}} onChange={(v) => setDraft({ ...draft, state: v })} />
              )}
              <Field pointer="/sort" label={t('sort.label')}>
                {(aria) => (
                  <select {...aria} value={sort} onChange={(e) => go({ sort: (e.currentTarget as HTMLSelectElement).value })}>
                    {['-createdAt', 'createdAt', ...meta.sort.filter((s) => !/^-?createdAt$/.test(s))].map((s) => (
                      <option value={s}>{sortLabel(s)}</option>
                    ))}
                  </select>
                )}
              </Field>
            </div>
            <FilterActions
              onClear={() => {
                setDraft({});
                loc.route(`/d/${resource}`);
              }}
            />
          </form>
        </details>
      )}

      <ErrorBanner error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <>
          {list.data.data.length === 0 ? (
            <p class="empty">{t('doc.none', { types: meta.labelPlural })}</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="sr-only">{meta.labelPlural}</caption>
                <thead>
                  <tr>
                    <th scope="col">{meta.label}</th>
                    {columns.filter((c) => c.name !== meta.titleField).map((c) => (
                      <th scope="col" class={isNumeric(c) ? 'num' : ''}>
                        {c.label}
                      </th>
                    ))}
                    {meta.states.length > 0 && <th scope="col">{t('doc.state')}</th>}
                    <th scope="col">{t('doc.created')}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.data.map((d) => (
                    <tr>
                      <th scope="row">
                        <a href={`/d/${resource}/${d.id}`}>{meta.titleField && d[meta.titleField] ? String(d[meta.titleField]) : <span class="mono">{d.id}</span>}</a>
                      </th>
                      {columns.filter((c) => c.name !== meta.titleField).map((c) => (
                        <td class={isNumeric(c) ? 'num' : ''} data-label={c.label}>
                          <Value field={c} value={d[c.name]} currency={String(d.currency ?? ws.company.currency)} />
                        </td>
                      ))}
                      {meta.states.length > 0 && (
                        <td data-label={t('doc.state')}>
                          <StateBadge meta={meta} state={d.state} />
                        </td>
                      )}
                      <td class="nowrap" data-label={t('doc.created')}>{formatDateTime(d.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager page={list.data.page} pageSize={list.data.pageSize} total={list.data.total} onPage={(p) => go({ page: p > 1 ? String(p) : undefined })} />
        </>
      )}
    </section>
  );
}
