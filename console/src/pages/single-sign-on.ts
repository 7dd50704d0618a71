/**
 * "Sign in with <provider>": shown under the password form once the instance typed there has an
 * enabled identity provider (single sign-on, issue #40). The providers are asked for once the
 * typing pauses; a user name that is an email goes along as the login hint (the provider then
 * need not ask for it again).
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { ErrorAlert } from '../ui.ts';
import { providersOf, startSingleSignOn, type PublicProvider } from '../single-sign-on-flow.ts';
import '../styles/single-sign-on.css';

/** How long the instance field must rest before its providers are asked for. */
const DEBOUNCE_MS = 350;

const EMAIL = /^[^\s@\\]+@[^\s@\\]+\.[^\s@\\]+$/;

export function SingleSignOn({ instance, loginHint }: { readonly instance: string; readonly loginHint?: string }) {
  const name = instance.trim();
  const [found, setFound] = useState<{ readonly instance: string; readonly providers: readonly PublicProvider[] }>({ instance: '', providers: [] });
  const [error, setError] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);

  useEffect(() => {
    if (!name) return undefined;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      providersOf(name, abort.signal).then(
        (providers) => setFound({ instance: name, providers }),
        // Not reachable, or the typing moved on: the password form is still there.
        () => undefined,
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [name]);

  // Only the answer for the name now in the field counts.
  const providers = found.instance === name && name ? found.providers : [];
  if (providers.length === 0) return null;
  const hint = loginHint?.trim();

  const start = (provider: PublicProvider) => {
    setError(null);
    setLeaving(true);
    startSingleSignOn(name, provider, hint && EMAIL.test(hint) ? hint : undefined).catch((err: unknown) => {
      setLeaving(false);
      setError(err instanceof Error ? err.message : 'Single sign-on could not start.');
    });
  };

  return html`<section class="single-sign-on" aria-labelledby="sso-title">
    <h2 id="sso-title">Or use your organisation’s account</h2>
    ${providers.map(
      (p) => html`<button type="button" class="secondary" disabled=${leaving} onClick=${() => start(p)}>Sign in with ${p.CommonName}</button>`,
    )}
    <${ErrorAlert} error=${error} />
  </section>`;
}
