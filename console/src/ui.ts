/**
 * The console's shared controls. Every control has a visible label that is also its accessible
 * name; errors are announced (`role="alert"`); dialogs are native `<dialog>` (focus kept inside,
 * Escape closes); tables have captions.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import { html } from './html.ts';
import { messageOf } from './api.ts';

let ids = 0;
/** A page-unique id for label/control pairs. */
function useId(prefix = 'f'): string {
  const ref = useRef<string>('');
  if (!ref.current) ref.current = `${prefix}-${++ids}`;
  return ref.current;
}

interface FieldProps {
  readonly label: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly type?: string;
  readonly name?: string;
  readonly required?: boolean;
  readonly autocomplete?: string;
  readonly inputmode?: string;
  readonly hint?: string;
  readonly disabled?: boolean;
}

/** A labelled text input (any `type` an `<input>` takes). */
export function Field(p: FieldProps) {
  const id = useId();
  return html`<div class="field">
    <label for=${id}>${p.label}</label>
    <input
      id=${id}
      name=${p.name}
      type=${p.type ?? 'text'}
      value=${p.value}
      required=${p.required}
      disabled=${p.disabled}
      autocomplete=${p.autocomplete}
      inputmode=${p.inputmode}
      aria-describedby=${p.hint ? `${id}-hint` : undefined}
      onInput=${(e: Event) => p.onInput((e.currentTarget as HTMLInputElement).value)}
    />
    ${p.hint ? html`<small id=${`${id}-hint`}>${p.hint}</small>` : null}
  </div>`;
}

interface SelectProps {
  readonly label: string;
  readonly value: string;
  readonly onChange: (value: string) => void;
  readonly options: ReadonlyArray<{ readonly value: string; readonly label: string }>;
  readonly disabled?: boolean;
}

/** A labelled select. */
export function Select(p: SelectProps) {
  const id = useId();
  return html`<div class="field">
    <label for=${id}>${p.label}</label>
    <select id=${id} value=${p.value} disabled=${p.disabled} onChange=${(e: Event) => p.onChange((e.currentTarget as HTMLSelectElement).value)}>
      ${p.options.map((o) => html`<option value=${o.value} selected=${o.value === p.value}>${o.label}</option>`)}
    </select>
  </div>`;
}

/** A labelled checkbox. */
export function Check(p: { readonly label: string; readonly checked: boolean; readonly onChange: (checked: boolean) => void; readonly disabled?: boolean }) {
  const id = useId();
  return html`<div class="check">
    <input id=${id} type="checkbox" checked=${p.checked} disabled=${p.disabled} onChange=${(e: Event) => p.onChange((e.currentTarget as HTMLInputElement).checked)} />
    <label for=${id}>${p.label}</label>
  </div>`;
}

/** An error, announced to assistive technology; nothing when there is none. */
export function ErrorAlert({ error }: { readonly error: unknown }) {
  if (!error) return null;
  return html`<p role="alert" class="error">${messageOf(error)}</p>`;
}

/** A status line read out when it changes (saved, sent...). */
export function Status({ text }: { readonly text: string | null }) {
  return html`<p role="status" class="status">${text ?? ''}</p>`;
}

interface ModalProps {
  readonly title: string;
  readonly onClose: () => void;
  readonly children: ComponentChildren;
}

/** A modal dialog named by its title: focus moves into it, Escape and "Cancel" close it. */
export function Modal(p: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId('dlg');
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return html`<dialog ref=${ref} aria-labelledby=${id} onClose=${p.onClose} onCancel=${p.onClose}>
    <h2 id=${id}>${p.title}</h2>
    ${p.children}
  </dialog>`;
}

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** Loads data when `deps` change; `reload` loads again. A later answer replaces an earlier one only. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [round, setRound] = useState(0);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { ...state, reload };
}

export interface Action {
  /** True while the action runs: its controls are disabled. */
  readonly busy: boolean;
  /** Its last failure (or a check's), for an {@link ErrorAlert}. */
  readonly error: unknown;
  readonly setError: (error: unknown) => void;
  /** Runs `work`: busy meanwhile, the error cleared first and kept on failure; answers whether it succeeded. */
  readonly run: (work: () => Promise<unknown>) => Promise<boolean>;
}

/** A form's or a dialog's action, with its busy state and its failure. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/** A date-time as the operator's browser shows it (its locale and zone). */
export function formatTime(iso: string | undefined | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

/** A page's heading and its actions. */
export function PageHeader({ title, children }: { readonly title: string; readonly children?: ComponentChildren }) {
  return html`<header class="page-header"><h1>${title}</h1><div class="actions">${children}</div></header>`;
}
