/** Access levels (being built). */
import { html } from '../html.ts';
import { PageHeader } from '../ui.ts';

export function AccessLevelsPage(_p: { readonly pageKey: string | undefined }) {
  return html`<${PageHeader} title="Access levels" />`;
}
