/** People (being built). */
import { html } from '../html.ts';
import { PageHeader } from '../ui.ts';

export function PeoplePage(_p: { readonly pageKey: string | undefined }) {
  return html`<${PageHeader} title="People" />`;
}
