import { type FormEvent, type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { messageOf } from './api.ts';

/** Loads `load()` now and whenever `deps` change; `reload` runs it again (after a write). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const latest = useRef(load);
  latest.current = load;
  const key = JSON.stringify(deps);
  const reload = useCallback(() => {
    latest.current().then(
      (value) => {
        setData(value);
        setError(undefined);
      },
      (e: unknown) => setError(messageOf(e)),
    );
  }, []);
  useEffect(() => {
    if (key !== undefined) reload();
  }, [key, reload]);
  return { data, error, reload };
}

/** Runs a write, showing its error; resolves to its result or undefined when it failed. */
export function useAction() {
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    try {
      const result = await action();
      setError(undefined);
      return result;
    } catch (e) {
      setError(messageOf(e));
      return undefined;
    }
  };
  return { error, run };
}

export function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p className="error" role="alert">
      {error}
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
