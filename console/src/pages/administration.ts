/** Administration (being built). */
import { html } from '../html.ts';
import { PageHeader } from '../ui.ts';

export function AdministrationPage(_p: { readonly pageKey: string | undefined }) {
  return html`<${PageHeader} title="Administration" />`;
}
