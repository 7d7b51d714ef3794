// Small pieces every page uses: async loading, error and status messages, dialogs, the
// copy button, the pager, labelled fields.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { formatNumber } from './format.ts';
import { t } from './i18n.ts';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `fn` when `deps` change; the latest call wins. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => mine === seq.current && setState({ data, loading: false }),
      (error) => mine === seq.current && setState({ error, loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * An action started from a form or a button: `busy` while it runs, its failure kept in `error`
 * to show (cleared when it runs again). `run` answers whether the action succeeded.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (fn: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/** The API's message as it came, in the person's language, with its code. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : undefined;
  const message = e?.message ?? (error as Error)?.message ?? String(error);
  return (
    <div class="banner banner-error" role="alert">
      <p>{message}</p>
      {e && <p class="muted small">{t('error.code', { code: e.code, status: e.status })}</p>}
    </div>
  );
}

export function Notice({ children, kind = 'info' }: { children: ComponentChildren; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`banner banner-${kind}`} role="status">
      {children}
    </div>
  );
}

/** Field messages by JSON pointer (`/lines/0/quantity`), from a VALIDATION_ERROR's details. */
export function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(error instanceof ApiError)) return out;
  for (const d of error.details) if (typeof d.pointer === 'string' && d.pointer && !out[d.pointer]) out[d.pointer] = d.message ?? error.message;
  return out;
}

export const idOf = (pointer: string) => `f${pointer.replace(/[^a-zA-Z0-9]+/g, '-')}`;

/** A labelled control with its hint and its error next to it. `children` gets the id and aria props. */
export function Field(props: {
  pointer: string;
  label: string;
  required?: boolean;
  hint?: string;
  error?: string;
  children: (p: { id: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string }) => ComponentChildren;
}) {
  const id = idOf(props.pointer);
  const described = [props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label for={id}>
        {props.label}
        {props.required && (
          <span class="req" aria-hidden="true">
            {' '}*
          </span>
        )}
      </label>
      {props.children({ id, ...(props.error ? { 'aria-invalid': 'true' } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** A modal <dialog>: focus moves into it, Escape closes it, and focus returns where it was. */
export function Dialog(props: { open: boolean; title: string; onClose(): void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class={props.wide ? 'wide' : ''}
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      {props.open && (
        <div class="dialog-body">
          <h2 id="dialog-title">{props.title}</h2>
          {props.children}
        </div>
      )}
    </dialog>
  );
}

export function ConfirmDialog(props: { open: boolean; title: string; body?: ComponentChildren; confirmLabel: string; danger?: boolean; busy?: boolean; error?: unknown; onConfirm(): void; onCancel(): void }) {
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onCancel}>
      {props.body}
      <ErrorBanner error={props.error} />
      <div class="actions">
        <button type="button" class={props.danger ? 'danger' : 'primary'} disabled={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          {t('action.cancel')}
        </button>
      </div>
    </Dialog>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <span class="copy">
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setCopied(true);
          } catch {
            setCopied(false);
          }
        }}
      >
        {label ?? t('action.copy')}
      </button>
      <span role="status" class="muted small">
        {copied === true ? t('copy.done') : copied === false ? t('copy.failed') : ''}
      </span>
    </span>
  );
}

/** A secret shown this once: a read-only field, a copy button, and the warning that it will not be shown again. */
export function SecretOnce(props: { open: boolean; title: string; label: string; value: string; onDone(): void; note?: ComponentChildren }) {
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onDone} wide>
      <p class="banner banner-warning">{t('secret.once')}</p>
      {props.note}
      <label for="secret-value">{props.label}</label>
      <div class="secret">
        <input id="secret-value" class="mono" dir="ltr" readOnly value={props.value} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <CopyButton text={props.value} />
      </div>
      <div class="actions">
        <button type="button" class="primary" onClick={props.onDone}>
          {t('secret.stored')}
        </button>
      </div>
    </Dialog>
  );
}

export function Pager(props: { page: number; pageSize: number; total: number; onPage(page: number): void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  return (
    <nav class="pager" aria-label={t('pager.label')}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        {t('pager.previous')}
      </button>
      <span>{t('pager.status', { page: formatNumber(props.page), pages: formatNumber(pages), total: formatNumber(props.total), count: props.total })}</span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.onPage(props.page + 1)}>
        {t('pager.next')}
      </button>
    </nav>
  );
}

/** A filter form's buttons: apply (the form's submit) and clear. */
export function FilterActions({ onClear }: { onClear(): void }) {
  return (
    <div class="actions">
      <button type="submit" class="primary">
        {t('filter.apply')}
      </button>
      <button type="button" onClick={onClear}>
        {t('filter.clear')}
      </button>
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      {t('loading')}
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="page-header">
      <h1>{title}</h1>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}
