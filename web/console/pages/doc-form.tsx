// Create and edit forms built from a document type's fields. Errors come from the API, in the
// person's language, each placed next to its field by its JSON pointer.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError } from '../api.ts';
import { FieldInput, Value, forgetTitles, writable, type Values } from '../fields.tsx';
import { t } from '../i18n.ts';
import type { Doc, DocTypeMeta, FieldMeta } from '../types.ts';
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

/** How long typing pauses before the form asks the host what it would compute. */
const PREVIEW_DELAY_MS = 350;

/**
 * What the host would store for the values typed so far (`?dryRun=true`: computed fields, and
 * the rules the values break), asked for once typing pauses. Only types with read-only fields
 * ask: a form of plain fields has nothing to show.
 */
function usePreview(meta: DocTypeMeta | undefined, values: Values | undefined, id: string | undefined) {
  const [preview, setPreview] = useState<{ doc?: Doc; errors: Record<string, string> }>({ errors: {} });
  const asks = !!meta?.fields.some((f) => f.readOnly);
  useEffect(() => {
    if (!meta || !values || !asks) return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const body = writable(meta.fields, values, id !== undefined);
        const path = `/api/v1/${meta.resource}${id === undefined ? '' : `/${encodeURIComponent(id)}`}?dryRun=true`;
        const r = await api<{ data: Doc }>(id === undefined ? 'POST' : 'PATCH', path, body);
        if (live) setPreview({ doc: r.data, errors: {} });
      } catch (e) {
        // Beside the fields: the manifest's rules and what could not be computed. "Required" and
        // the like wait for the person to submit, not shown while they are still typing.
        if (!live || !(e instanceof ApiError)) return;
        const errors: Record<string, string> = {};
        for (const d of e.details) if ((d.rule === 'validation' || d.computed === true) && typeof d.pointer === 'string' && !errors[d.pointer]) errors[d.pointer] = String(d.message ?? e.message);
        setPreview((p) => ({ doc: p.doc, errors }));
      }
    }, PREVIEW_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [meta?.resource, id, values]);
  return preview;
}

export function DocForm({ resource, id }: { resource: string; id?: string }) {
  const ws = useWorkspace();
  const meta = ws.byResource.get(resource);
  const loc = useLocation();
  const editing = id !== undefined;
  const [values, setValues] = useState<Values | undefined>(editing ? undefined : meta && blank(meta.fields));
  const { busy, error, setError, run } = useAction();
  const preview = usePreview(meta, values, id);

  useEffect(() => {
    if (!editing || !meta) return;
    api<{ data: Doc }>('GET', `/api/v1/${resource}/${encodeURIComponent(id)}`).then((r) => setValues(r.data), setError);
  }, [resource, id]);

  if (!meta) return <NotFound />;
  // What the last submit answered wins over what the preview found.
  const errors = { ...preview.errors, ...fieldErrors(error) };
  const state = editing ? (values?.state as string | undefined) : undefined;
  const stateLabel = state && (meta.states.find((x) => x.name === state)?.label ?? state);
  const computed = meta.fields.filter((f) => f.readOnly && f.type !== 'lines');
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
              <FieldInput
                field={f}
                pointer={`/${f.name}`}
                value={values[f.name]}
                currency={ws.company.currency}
                errors={errors}
                locked={state && f.lockedIn?.includes(state) ? t('field.locked', { state: stateLabel }) : undefined}
                onChange={(v) => setValues({ ...values, [f.name]: v })}
              />
            ))}
          {computed.length > 0 && (
            <section class="computed" aria-live="polite" aria-label={t('doc.computed')}>
              <h2>{t('doc.computed')}</h2>
              <dl class="fields">
                {computed.map((f) => (
                  <div id={`computed-${f.name}`} class={errors[`/${f.name}`] ? 'field-invalid' : ''}>
                    <dt title={f.description}>{f.label}</dt>
                    <dd>
                      <Value field={f} value={(preview.doc ?? values)[f.name]} currency={ws.company.currency} />
                      {errors[`/${f.name}`] && <p class="field-error">{errors[`/${f.name}`]}</p>}
                    </dd>
                  </div>
                ))}
              </dl>
            </section>
          )}
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
