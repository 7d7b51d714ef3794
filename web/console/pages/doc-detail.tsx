// One document: every field, its state, the transitions the person may run from that state,
// edit and delete.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, download } from '../api.ts';
import { FieldInput, Value, forgetTitles, writable, type Values } from '../fields.tsx';
import { formatDateTime } from '../format.ts';
import { t } from '../i18n.ts';
import type { Doc, DocTypeMeta } from '../types.ts';
import { ConfirmDialog, Dialog, ErrorBanner, Loading, Notice, PageHeader, fieldErrors, useAsync, useAction } from '../ui.tsx';
import { useWorkspace } from '../workspace.tsx';
import { StateBadge } from './doc-list.tsx';
import { NotFound } from './not-found.tsx';

export function DocDetail({ resource, id }: { resource: string; id: string }) {
  const ws = useWorkspace();
  const meta = ws.byResource.get(resource);
  const loc = useLocation();
  const [doc, setDoc] = useState<Doc | undefined>();
  const loaded = useAsync(async () => {
    const r = await api<{ data: Doc }>('GET', `/api/v1/${resource}/${encodeURIComponent(id)}`);
    setDoc(r.data);
    return r.data;
  }, [resource, id]);
  const { busy, error, run } = useAction();
  const [done, setDone] = useState<string | undefined>(loc.query.saved ? t('doc.saved') : undefined);
  const [confirmDelete, setConfirmDelete] = useState(false);
  // A transition that takes input (a lost reason) asks for it in a dialog first.
  const [asking, setAsking] = useState<Transition | undefined>();
  const [input, setInput] = useState<Values>({});
  const current = doc ?? loaded.data;
  // A transition with a condition shows only when a dry run says it would run now (one that
  // asks for input it was not given would: the dialog asks for it).
  const [blocked, setBlocked] = useState<Set<string>>(new Set());
  useEffect(() => {
    if (!meta || !current) return;
    let live = true;
    const guarded = meta.transitions.filter((x) => x.guarded && x.allowed && current.state !== undefined && x.from.includes(current.state));
    void Promise.all(
      guarded.map((x) =>
        api('POST', `/api/v1/${resource}/${encodeURIComponent(id)}/${x.name}?dryRun=true`, {}).then(
          () => undefined,
          (e) => (e instanceof ApiError && e.status === 409 ? x.name : undefined),
        ),
      ),
    ).then((names) => live && setBlocked(new Set(names.filter((n): n is string => !!n))));
    return () => {
      live = false;
    };
  }, [resource, id, current?.updatedAt, current?.state]);
  if (!meta) return <NotFound />;

  const transition = async (x: Transition, body?: Values) => {
    setDone(undefined);
    const ok = await run(async () => {
      const r = await api<{ data: Doc }>('POST', `/api/v1/${resource}/${encodeURIComponent(id)}/${x.name}`, body);
      setDoc(r.data);
      setDone(t('doc.transitioned', { action: x.label }));
    });
    if (ok) setAsking(undefined);
  };
  const start = (x: Transition) => {
    if (!x.input?.length) return void transition(x);
    setInput({});
    setAsking(x);
  };
  const fetchFile = (name: string, ext: string) => run(() => download(`/api/v1/${resource}/${encodeURIComponent(id)}/${name}`, `${id}.${ext}`));
  const remove = async () => {
    const removed = await run(async () => {
      await api('DELETE', `/api/v1/${resource}/${encodeURIComponent(id)}`);
      forgetTitles();
      loc.route(`/d/${resource}`);
    });
    if (!removed) setConfirmDelete(false);
  };

  const title = current && meta.titleField && current[meta.titleField] ? String(current[meta.titleField]) : `${meta.label} ${id}`;
  const possible = current ? meta.transitions.filter((x) => x.allowed && current.state !== undefined && x.from.includes(current.state)) : [];
  const transitions = possible.filter((x) => !blocked.has(x.name));
  const currency = String(current?.currency ?? ws.company.currency);
  // A document in a locked state changes only through its transitions: no edit, no delete.
  const locked = current?.state !== undefined && !!meta.lockedIn?.includes(current.state);

  return (
    <section>
      <p class="crumbs">
        <a href={`/d/${resource}`}>{meta.labelPlural}</a>
      </p>
      <PageHeader title={title}>
        {current && transitions.map((x) => (
          <button type="button" class="primary" disabled={busy} title={x.description} onClick={() => start(x)}>
            {x.label}
          </button>
        ))}
        {current &&
          meta.downloads
            .filter((f) => !f.offeredWhen || (current[f.offeredWhen] !== undefined && current[f.offeredWhen] !== null))
            .map((f) => {
              const ext = f.mediaType.split('/')[1]?.split(/[+;]/)[0] ?? f.name;
              return (
                <button type="button" disabled={busy} data-download={f.name} onClick={() => void fetchFile(f.name, ext)}>
                  {t('doc.download', { format: ext.toUpperCase() })}
                </button>
              );
            })}
        {current && !locked && meta.permissions.update && (
          <a class="button" href={`/d/${resource}/${encodeURIComponent(id)}/edit`}>
            {t('action.edit')}
          </a>
        )}
        {current && !locked && meta.permissions.delete && (
          <button type="button" class="danger" disabled={busy} onClick={() => setConfirmDelete(true)}>
            {t('action.delete')}
          </button>
        )}
      </PageHeader>
      {done && <Notice kind="success">{done}</Notice>}
      <ErrorBanner error={error ?? loaded.error} />
      {!current && loaded.loading && <Loading />}
      {current && (
        <dl class="fields">
          <div>
            <dt>{t('doc.id')}</dt>
            <dd class="mono">{current.id}</dd>
          </div>
          {current.state !== undefined && (
            <div>
              <dt>{t('doc.state')}</dt>
              <dd>
                <StateBadge meta={meta} state={current.state} />
              </dd>
            </div>
          )}
          {meta.fields.map((f) => (
            <div class={f.type === 'lines' ? 'wide' : ''}>
              <dt title={f.description}>{f.label}</dt>
              <dd>
                <Value field={f} value={current[f.name]} currency={currency} />
              </dd>
            </div>
          ))}
          <div>
            <dt>{t('doc.created')}</dt>
            <dd>{formatDateTime(current.createdAt)}</dd>
          </div>
          <div>
            <dt>{t('doc.updated')}</dt>
            <dd>{formatDateTime(current.updatedAt)}</dd>
          </div>
        </dl>
      )}
      <ConfirmDialog
        open={confirmDelete}
        title={t('doc.deleteTitle', { type: meta.label })}
        body={<p>{t('doc.deleteBody', { title })}</p>}
        confirmLabel={t('action.delete')}
        danger
        busy={busy}
        onConfirm={remove}
        onCancel={() => setConfirmDelete(false)}
      />
      <Dialog open={!!asking} title={asking?.label ?? ''} onClose={() => setAsking(undefined)}>
        {asking && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void transition(asking, writable(asking.input!, input, false));
            }}
          >
            {asking.description && <p>{asking.description}</p>}
            {asking.input!.map((f) => (
              <FieldInput field={f} pointer={`/${f.name}`} value={input[f.name]} currency={currency} errors={fieldErrors(error)} onChange={(v) => setInput({ ...input, [f.name]: v })} />
            ))}
            <ErrorBanner error={error} />
            <div class="actions">
              <button type="submit" class="primary" disabled={busy}>
                {asking.label}
              </button>
              <button type="button" onClick={() => setAsking(undefined)}>
                {t('action.cancel')}
              </button>
            </div>
          </form>
        )}
      </Dialog>
    </section>
  );
}

type Transition = DocTypeMeta['transitions'][number];
