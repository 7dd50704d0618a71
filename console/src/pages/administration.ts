/**
 * Administration (Administrators only: the navigation hides it and the frame refuses it to other
 * roles; the API refuses their calls anyway): the users and webhooks of the instance being worked
 * in, and the instance tree with the switcher that chooses that instance.
 */
import '../styles/administration.css';
import { html } from '../html.ts';
import { currentInstance, session } from '../session.ts';
import { PageHeader } from '../ui.ts';
import { InstancesSection } from './administration-instances.ts';
import { UsersSection } from './administration-users.ts';
import { WebhooksSection } from './administration-webhooks.ts';

export function AdministrationPage(_p: { readonly pageKey: string | undefined }) {
  const name = currentInstance.value?.name ?? session.value?.instanceName ?? '';
  // Keyed by the instance: a switch starts every section afresh (no dialog or secret of the other one left open).
  return html`<section class="administration" key=${name}>
    <${PageHeader} title="Administration" />
    <${InstancesSection} />
    <${UsersSection} key=${`users-${name}`} />
    <${WebhooksSection} key=${`webhooks-${name}`} />
  </section>`;
}
