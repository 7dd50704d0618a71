/** Live events (being built). */
import { html } from '../html.ts';
import { PageHeader } from '../ui.ts';

export function LiveEventsPage(_p: { readonly pageKey: string | undefined }) {
  return html`<${PageHeader} title="Live events" />`;
}
