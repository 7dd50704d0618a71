/** Events (being built). */
import { html } from '../html.ts';
import { PageHeader } from '../ui.ts';

export function EventsPage(_p: { readonly pageKey: string | undefined }) {
  return html`<${PageHeader} title="Events" />`;
}
