/**
 * The console's URLs: `/console/<page>[/<key>][?query]`. Every view is a URL, so reload, the back
 * button and a copied link work; links are ordinary `<a href>` that the page follows itself.
 */
import { signal } from '@preact/signals';

const BASE = '/console';

interface Location {
  readonly page: string;
  readonly key: string | undefined;
  readonly query: URLSearchParams;
}

function read(): Location {
  const rest = location.pathname.startsWith(`${BASE}/`) ? location.pathname.slice(BASE.length + 1) : '';
  const [page = '', key] = rest.split('/').filter(Boolean).map(decodeURIComponent);
  return { page, key, query: new URLSearchParams(location.search) };
}

export const here = signal<Location>(read());

/** The console URL of a page (and key), with a query. */
export function hrefOf(page: string, key?: string, query?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const search = q.toString();
  return `${BASE}/${page}${key ? `/${encodeURIComponent(key)}` : ''}${search ? `?${search}` : ''}`;
}

/** Goes to a console URL (a new history entry, or the current one replaced). */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  here.value = read();
  window.scrollTo(0, 0);
}

/** Follows same-page links itself: a click on `<a href="/console/...">` without a modifier key. */
export function startRouting(): void {
  window.addEventListener('popstate', () => (here.value = read()));
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as HTMLElement | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(`${BASE}/`)) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
