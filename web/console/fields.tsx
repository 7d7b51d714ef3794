// Inputs and displays for a document type's fields, by type: text, numbers, money in the
// company's currency, dates, enums, yes/no, references (a picker searching the target's list)
// and lines (editable rows).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, qs } from './api.ts';
import { currencyDigits, formatDate, formatMoney, formatNumber } from './format.ts';
import { t } from './i18n.ts';
import type { Doc, FieldMeta, Page } from './types.ts';
import { Field, idOf } from './ui.tsx';

export type Values = Record<string, unknown>;

// ---- display ------------------------------------------------------------------------------

/** Titles of referenced documents, fetched once per id and kept for the page's life. */
const titles = new Map<string, Promise<string>>();
export function refTitle(target: NonNullable<FieldMeta['target']>, id: string): Promise<string> {
  const k = `${target.resource}/${id}`;
  let p = titles.get(k);
  if (!p) {
    p = api<{ data: Doc }>('GET', `/api/v1/${target.resource}/${encodeURIComponent(id)}`).then(
      (r) => (target.titleField ? String(r.data[target.titleField] ?? id) : id),
      () => id,
    );
    titles.set(k, p);
  }
  return p;
}
export const forgetTitles = () => titles.clear();

export function RefLink({ field, id }: { field: FieldMeta; id: string }) {
  const [title, setTitle] = useState<string>(id);
  useEffect(() => {
    let live = true;
    if (field.target) void refTitle(field.target, id).then((x) => live && setTitle(x));
    return () => {
      live = false;
    };
  }, [field.target?.resource, id]);
  return field.target ? <a href={`/d/${field.target.resource}/${encodeURIComponent(id)}`}>{title}</a> : <span class="mono">{id}</span>;
}

export function Value({ field, value, currency }: { field: FieldMeta; value: unknown; currency: string }) {
  if (value === undefined || value === null || value === '') return <span class="muted">—</span>;
  switch (field.type) {
    case 'money':
      return <span class="num">{formatMoney(Number(value), currency)}</span>;
    case 'number':
    case 'integer':
      return <span class="num">{formatNumber(Number(value))}</span>;
    case 'date':
      return <span>{formatDate(String(value))}</span>;
    case 'boolean':
      return <span>{value ? t('yes') : t('no')}</span>;
    case 'enum':
      return <span>{field.options?.find((o) => o.value === value)?.label ?? String(value)}</span>;
    case 'reference':
      return <RefLink field={field} id={String(value)} />;
    case 'lines':
      return <LinesTable field={field} rows={(value as Values[]) ?? []} currency={currency} />;
    default:
      // A long text (an XML document) folds away until asked for.
      return String(value).length > LONG_TEXT ? (
        <details>
          <summary>{t('doc.showText')}</summary>
          <span class="pre">{String(value)}</span>
        </details>
      ) : (
        <span class="pre">{String(value)}</span>
      );
  }
}

const LONG_TEXT = 500;

export function LinesTable({ field, rows, currency }: { field: FieldMeta; rows: Values[]; currency: string }) {
  const cols = field.fields ?? [];
  return (
    // A region the keyboard reaches: a wide table (a VAT breakdown in Arabic) scrolls inside it.
    <div class="table-wrap" role="region" aria-label={field.label} tabIndex={0}>
      <table>
        <caption class="sr-only">{field.label}</caption>
        <thead>
          <tr>
            {cols.map((c) => (
              <th scope="col" class={isNumeric(c) ? 'num' : ''}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              {cols.map((c) => (
                <td class={isNumeric(c) ? 'num' : ''}>
                  <Value field={c} value={r[c.name]} currency={currency} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export const isNumeric = (f: FieldMeta) => f.type === 'money' || f.type === 'number' || f.type === 'integer';

// ---- input ---------------------------------------------------------------------------------

interface InputProps {
  field: FieldMeta;
  pointer: string;
  value: unknown;
  currency: string;
  errors: Record<string, string>;
  onChange(v: unknown): void;
  /** Filters: every field is optional and enums offer "any". */
  filter?: boolean;
  /** Shown but not editable (a field locked in the document's state), with why. */
  locked?: string;
}

/** The control for one field with its label and its error. */
export function FieldInput(p: InputProps) {
  const f = p.field;
  if (f.type === 'lines') return <LinesEditor {...p} />;
  // The manifest's own words on the field (what it holds) come first; filters keep to the label.
  const hint = p.locked ?? ((!p.filter && f.description) || (f.type === 'money' ? t('field.moneyHint', { currency: p.currency }) : undefined));
  return (
    <Field pointer={p.pointer} label={f.label} required={!p.filter && f.required} hint={hint} error={p.errors[p.pointer]}>
      {(aria) => <Control {...p} aria={p.locked ? { ...aria, disabled: 'true' } : aria} />}
    </Field>
  );
}

function Control(p: InputProps & { aria: Record<string, string | undefined> & { id: string } }) {
  const f = p.field;
  const v = p.value;
  const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s));
  switch (f.type) {
    case 'number':
    case 'integer':
    case 'money':
      return (
        <input
          {...p.aria}
          type="number"
          inputMode={f.type === 'integer' ? 'numeric' : 'decimal'}
          step={f.type === 'integer' ? '1' : 'any'}
          min={f.minimum}
          max={f.maximum}
          value={v === undefined || v === null ? '' : String(v)}
          onInput={(e) => p.onChange(num(text(e)))}
        />
      );
    case 'date':
      return <input {...p.aria} type="date" value={(v as string) ?? ''} onInput={(e) => p.onChange(text(e) || undefined)} />;
    case 'boolean':
      if (p.filter) {
        return (
          <select {...p.aria} value={v === undefined ? '' : String(v)} onChange={(e) => p.onChange(text(e) === '' ? undefined : text(e) === 'true')}>
            <option value="">{t('filter.any')}</option>
            <option value="true">{t('yes')}</option>
            <option value="false">{t('no')}</option>
          </select>
        );
      }
      return (
        <span class="check">
          <input {...p.aria} type="checkbox" checked={!!v} onChange={(e) => p.onChange((e.currentTarget as HTMLInputElement).checked)} />
        </span>
      );
    case 'enum':
      return (
        <select {...p.aria} value={(v as string) ?? ''} onChange={(e) => p.onChange(text(e) || undefined)}>
          <option value="">{p.filter ? t('filter.any') : t('field.choose')}</option>
          {(f.options ?? (f.values ?? []).map((x) => ({ value: x, label: x }))).map((o) => (
            <option value={o.value}>{o.label}</option>
          ))}
        </select>
      );
    case 'reference':
      return <ReferencePicker field={f} id={p.aria.id} aria={p.aria} value={(v as string) ?? ''} onChange={(x) => p.onChange(x || undefined)} />;
    default: {
      const long = (f.maxLength ?? 0) > 500;
      return long && !p.filter ? (
        <textarea {...p.aria} rows={3} maxLength={f.maxLength} value={(v as string) ?? ''} onInput={(e) => p.onChange(text(e))} />
      ) : (
        <input {...p.aria} type={/email/i.test(f.name) ? 'email' : 'text'} maxLength={f.maxLength} value={(v as string) ?? ''} onInput={(e) => p.onChange(text(e))} />
      );
    }
  }
}

/**
 * A combobox over the target type's documents: typing searches their titles (the latest 100,
 * or an id typed in full), a click or ArrowDown opens the list, arrows move, Enter picks,
 * Escape closes. Focus alone does not open it, so an error under it stays visible.
 */
export function ReferencePicker(p: { field: FieldMeta; id: string; aria: Record<string, string | undefined>; value: string; onChange(id: string): void }) {
  const target = p.field.target;
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [options, setOptions] = useState<{ id: string; title: string }[] | null>(null);
  const [active, setActive] = useState(0);
  const [failed, setFailed] = useState<string | null>(null);
  const listId = `${p.id}-list`;
  const loaded = useRef(false);

  useEffect(() => {
    if (!target || !p.value) return;
    void refTitle(target, p.value).then((x) => setQuery(x));
  }, [p.value, target?.resource]);

  const load = async () => {
    if (!target || loaded.current) return;
    loaded.current = true;
    try {
      const r = await api<Page<Doc>>('GET', `/api/v1/${target.resource}${qs({ pageSize: 100, sort: '-createdAt' })}`);
      setOptions(r.data.map((d) => ({ id: d.id, title: target.titleField ? String(d[target.titleField] ?? d.id) : d.id })));
    } catch (err) {
      loaded.current = false;
      setFailed((err as Error).message);
    }
  };
  const matches = useMemo(() => {
    const q = query.trim().toLowerCase();
    const all = options ?? [];
    return (q ? all.filter((o) => o.title.toLowerCase().includes(q) || o.id === q) : all).slice(0, 20);
  }, [options, query]);

  const pick = (o: { id: string; title: string }) => {
    setQuery(o.title);
    setOpen(false);
    p.onChange(o.id);
  };

  return (
    <div class="combo">
      <input
        {...p.aria}
        id={p.id}
        type="text"
        role="combobox"
        autoComplete="off"
        aria-autocomplete="list"
        aria-expanded={open ? 'true' : 'false'}
        aria-controls={listId}
        aria-activedescendant={open && matches[active] ? `${listId}-${active}` : undefined}
        placeholder={t('field.search')}
        value={query}
        onFocus={() => void load()}
        onClick={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onInput={(e) => {
          setQuery((e.currentTarget as HTMLInputElement).value);
          setActive(0);
          setOpen(true);
          if (p.value) p.onChange('');
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            void load();
            setOpen(true);
            setActive((a) => Math.min(a + 1, Math.max(0, matches.length - 1)));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setActive((a) => Math.max(0, a - 1));
          } else if (e.key === 'Enter' && open && matches[active]) {
            e.preventDefault();
            pick(matches[active]);
          } else if (e.key === 'Escape') {
            setOpen(false);
          }
        }}
      />
      <ul id={listId} role="listbox" class="combo-list" hidden={!open} aria-label={p.field.label}>
        {open && options === null && !failed && <li class="muted">{t('loading')}</li>}
        {open && failed && <li class="muted">{failed}</li>}
        {open && options !== null && matches.length === 0 && <li class="muted">{t('field.noMatch')}</li>}
        {open &&
          matches.map((o, i) => (
            <li
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active ? 'true' : 'false'}
              class={i === active ? 'active' : ''}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(o);
              }}
            >
              {o.title}
              {o.title !== o.id && <span class="muted small mono"> {o.id}</span>}
            </li>
          ))}
      </ul>
    </div>
  );
}

/** Editable rows for a `lines` field: one row per line, add and remove buttons. */
function LinesEditor(p: InputProps) {
  const f = p.field;
  const cols = (f.fields ?? []).filter((c) => !c.readOnly);
  const rows = (Array.isArray(p.value) ? p.value : []) as Values[];
  const set = (i: number, name: string, v: unknown) => p.onChange(rows.map((r, j) => (j === i ? { ...r, [name]: v } : r)));
  const error = p.errors[p.pointer];
  return (
    <fieldset class={`lines${error ? ' field-invalid' : ''}`}>
      <legend>
        {f.label}
        {f.required && (
          <span class="req" aria-hidden="true">
            {' '}*
          </span>
        )}
      </legend>
      {error && (
        <p class="field-error" id={`${idOf(p.pointer)}-error`}>
          {error}
        </p>
      )}
      {rows.map((r, i) => (
        <div class="line" role="group" aria-label={t('lines.row', { n: formatNumber(i + 1) })}>
          {cols.map((c) => (
            <FieldInput field={c} pointer={`${p.pointer}/${i}/${c.name}`} value={r[c.name]} currency={p.currency} errors={p.errors} onChange={(v) => set(i, c.name, v)} />
          ))}
          <div class="line-actions">
            <button type="button" class="link" onClick={() => p.onChange(rows.filter((_, j) => j !== i))}>
              {t('lines.remove', { n: formatNumber(i + 1) })}
            </button>
          </div>
        </div>
      ))}
      <button type="button" onClick={() => p.onChange([...rows, {}])} disabled={f.maxItems !== undefined && rows.length >= f.maxItems}>
        {t('lines.add')}
      </button>
    </fieldset>
  );
}

/** What a form sends: writable fields only, empty values left out (strings kept on edit so they can be cleared). */
export function writable(fields: FieldMeta[], values: Values, editing: boolean): Values {
  const out: Values = {};
  for (const f of fields) {
    if (f.readOnly) continue;
    let v = values[f.name];
    if (f.type === 'lines' && Array.isArray(v)) v = v.map((row) => writable(f.fields ?? [], row as Values, false));
    if (v === undefined || v === null) continue;
    if (v === '' && !(editing && f.type === 'string')) continue;
    if (f.type === 'money' && typeof v === 'number') v = Number(v);
    out[f.name] = v;
  }
  return out;
}

export { currencyDigits };
