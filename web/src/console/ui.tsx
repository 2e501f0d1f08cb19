import type { FormEvent, ReactNode } from 'react';
import { messageOf } from './api.ts';

/** The error of the latest of a page's writes (its one error line): a later write that succeeds clears it. */
export function lastError(...mutations: { submittedAt: number; error: unknown }[]): unknown {
  let last: { submittedAt: number; error: unknown } | undefined;
  for (const m of mutations) if (m.submittedAt > 0 && (!last || m.submittedAt >= last.submittedAt)) last = m;
  return last?.error ?? undefined;
}

/** Runs a write from a form or a button: its result, or undefined when it failed (the error is on the mutation). */
export async function attempt<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch {
    return undefined;
  }
}

/** A failed call's message (the contract's), or nothing. */
export function ErrorLine({ error }: { error: unknown }) {
  return error ? (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : messageOf(error)}
    </p>
  ) : null;
}

/** A form whose fields are read by name on submit; it resets after `onSubmit` resolves true. */
export function InlineForm(props: {
  label: string;
  name: string;
  children: ReactNode;
  onSubmit: (values: Record<string, string>) => Promise<boolean>;
}) {
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]));
    if (await props.onSubmit(values)) form.reset();
  };
  return (
    <form className="inline" aria-label={props.name} onSubmit={submit}>
      {props.children}
      <button type="submit">{props.label}</button>
    </form>
  );
}

export function Field(props: { name: string; label: string; required?: boolean; placeholder?: string }) {
  return (
    <label>
      {props.label}
      <input name={props.name} required={props.required} placeholder={props.placeholder} aria-label={props.label} />
    </label>
  );
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge ${value}`}>{value}</span>;
}

export function Table<T>(props: { rows: T[] | undefined; columns: [string, (row: T) => ReactNode][]; empty?: string }) {
  if (!props.rows) return <p className="muted">Loading…</p>;
  if (props.rows.length === 0) return <p className="muted">{props.empty ?? 'Nothing yet.'}</p>;
  return (
    <table>
      <thead>
        <tr>
          {props.columns.map(([title]) => (
            <th key={title}>{title}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are redrawn whole on every load.
          <tr key={i}>
            {props.columns.map(([title, cell]) => (
              <td key={title}>{cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export const time = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
