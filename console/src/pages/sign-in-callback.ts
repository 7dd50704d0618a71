/** `/console/callback`: single sign-on's return to the console (being built). */
import { html } from '../html.ts';

export function SignInCallbackPage() {
  return html`<main id="main"><h1>Signing in…</h1></main>`;
}
