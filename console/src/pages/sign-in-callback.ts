/**
 * `/console/callback`: single sign-on's return to the console. The provider's answer came back
 * through Gatehouse with a one-time code (or an error) and this tab's state; the code is redeemed
 * with the tab's PKCE verifier, the refresh token arrives as the session cookie, and the operator
 * lands on Live events. Any refusal reads as a sentence, with the way back to sign-in.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { hrefOf, here, navigate } from '../router.ts';
import { redeemCode, restore, restoring, TokenRefusal } from '../session.ts';
import { takePending } from '../single-sign-on-flow.ts';
import '../styles/single-sign-on.css';

/** What the authorization endpoint's `error` means to the person signing in. */
const READABLE: Readonly<Record<string, string>> = {
  access_denied:
    'Single sign-on was refused. Your organisation’s account may have no user in this instance, a disabled one, or an email address this instance does not accept. Ask an administrator, or sign in with a password.',
  invalid_request: 'The sign-in request was not complete. Start again from the sign-in page.',
  unsupported_response_type: 'The sign-in request was not understood. Start again from the sign-in page.',
};

const STALE = 'This sign-in was not started in this browser tab, or it was already completed. Start again from the sign-in page.';

/** The sentence for a failed redemption of the code. */
function readableRedemption(err: unknown): string {
  if (err instanceof TokenRefusal && err.code === 'invalid_grant') return 'The sign-in took too long or was already completed. Start again from the sign-in page.';
  if (err instanceof TokenRefusal) return `The sign-in was refused: ${err.description}`;
  return 'The service could not be reached. Start again from the sign-in page.';
}

export function SignInCallbackPage() {
  const [failure, setFailure] = useState<string | null>(null);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const query = here.value.query;
    const pending = takePending(query.get('state'));
    const fail = (message: string) => {
      setFailure(message);
      // The link back leads to the sign-in page, or to the console if a session was already there.
      void restore();
    };
    const error = query.get('error');
    if (error) return fail(READABLE[error] ?? `The sign-in was refused (${error}). Start again from the sign-in page.`);
    const code = query.get('code');
    if (!pending || !code) return fail(STALE);
    redeemCode(code, pending.verifier, pending.redirectUri).then(
      () => {
        restoring.value = false;
        navigate(hrefOf('live'), true);
      },
      (err: unknown) => fail(readableRedemption(err)),
    );
  }, []);

  if (!failure) {
    return html`<main id="main" class="sign-in sign-in-callback" aria-busy="true"><h1>Signing in…</h1></main>`;
  }
  return html`<main id="main" class="sign-in sign-in-callback">
    <h1>Sign-in failed</h1>
    <p role="alert" class="error">${failure}</p>
    <p><a href=${hrefOf('')}>Back to sign in</a></p>
  </main>`;
}
