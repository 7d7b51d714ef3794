// Create and edit forms built from a document type's fields. Errors come from the API, in the
// person's language, each placed next to its field by its JSON pointer.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.ts';
import { FieldInput, forgetTitles, writable, type Values } from '../fields.tsx';
import { t } from '../i18n.ts';
import type { Doc, FieldMeta } from '../types.ts';
import { ErrorBanner, Loading, PageHeader, fieldErrors, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { NotFound } from './not-found.tsx';

const today = () => new Date().toISOString().slice(0, 10);

function blank(fields: FieldMeta[]): Values {
  const v: Values = {};
  for (const f of fields) {
    if (f.type === 'lines') v[f.name] = Array.from({ length: Math.max(1, f.minItems ?? 0) }, () => ({}));
    if (f.type === 'boolean' && !f.readOnly) v[f.name] = false;
    if (f.type === 'date' && f.required && f.name === 'date') v[f.name] = today();
  }
  return v;
}

export function DocForm({ resource, id }: { resource: string; id?: string }) {
  const ws = useWorkspace();
  const meta = ws.byResource.get(resource);
  const loc = useLocation();
  const editing = id !== undefined;
  const [values, setValues] = useState<Values | undefined>(editing ? undefined : meta && blank(meta.fields));
  const { busy, error, setError, run } = useAction();

  useEffect(() => {
    if (!editing || !meta) return;
    api<{ data: Doc }>('GET', `/api/v1/${resource}/${encodeURIComponent(id)}`).then((r) => setValues(r.data), setError);
  }, [resource, id]);

  if (!meta) return <NotFound />;
  const errors = fieldErrors(error);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!values) return;
    const saved = await run(async () => {
      const body = writable(meta.fields, values, editing);
      const r = editing
        ? await api<{ data: Doc }>('PATCH', `/api/v1/${resource}/${encodeURIComponent(id)}`, body)
        : await api<{ data: Doc }>('POST', `/api/v1/${resource}`, body);
      forgetTitles();
      loc.route(`/d/${resource}/${r.data.id}?saved=1`);
    });
    // The message is announced by the alert; move focus to the first field in error, if any.
    if (!saved) setTimeout(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus(), 0);
  };
  const title = editing ? t('doc.editTitle', { type: meta.label }) : t('doc.newTitle', { type: meta.label });

  return (
    <section>
      <p class="crumbs">
        <a href={`/d/${resource}`}>{meta.labelPlural}</a>
      </p>
      <PageHeader title={title} />
      <ErrorBanner error={error} />
      {!values ? (
        <Loading />
      ) : (
        <form class="doc-form" onSubmit={submit} noValidate>
          {meta.fields
            .filter((f) => !f.readOnly)
            .map((f) => (
              <FieldInput field={f} pointer={`/${f.name}`} value={values[f.name]} currency={ws.company.currency} errors={errors} onChange={(v) => setValues({ ...values, [f.name]: v })} />
            ))}
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {editing ? t('action.save') : t('action.create')}
            </button>
            <a class="button" href={editing ? `/d/${resource}/${encodeURIComponent(id)}` : `/d/${resource}`}>
              {t('action.cancel')}
            </a>
          </div>
        </form>
      )}
    </section>
  );
}
