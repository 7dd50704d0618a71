/**
 * Sign in: instance, user name and password; then, when the service asks, the two-factor step
 * ("Send code", "One-time code") or a new password. Every token error reads as a sentence.
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { signIn, TokenRefusal } from '../session.ts';
import { ErrorAlert, Field, Status } from '../ui.ts';
import { SingleSignOn } from './single-sign-on.ts';

/** What each token error means to the person signing in. */
const READABLE: Readonly<Record<string, string>> = {
  invalid_grant: 'The user name or password is not right (or this user signs in through the organisation’s identity provider).',
  incorrect_password: 'The password is not right.',
  incorrect_tfacode: 'The one-time code is not right. Check it, or send a new one.',
  user_notfound: 'There is no user of that name in this instance.',
  user_disabled: 'This user is disabled. Ask an administrator.',
  user_lockedout: 'This user is locked after too many failed attempts. Try again in 15 minutes.',
  password_expired: 'Your password has expired: choose a new one.',
  new_password_required: 'Choose a new password to finish signing in.',
  one_time_password_required: 'This user signs in with a one-time code: send one, then enter it.',
  password_doesnot_meet_complexity_rule: 'The new password needs upper case, lower case, digits and special characters.',
  password_doesnot_meet_minimum_length_rule: 'The new password is too short.',
  instance_not_found: 'There is no instance of that name.',
  instance_disabled: 'This instance is disabled.',
  instance_missing_license: 'This instance has no valid licence.',
  instance_license_tampered: 'This instance’s licence is not valid.',
  instance_license_expired: 'This instance’s trial licence has expired.',
  invalid_client: 'The console is not accepted by this service.',
  unsupported_grant_type: 'The service did not accept this kind of sign-in.',
  too_many_requests: 'Too many sign-in attempts: wait a moment and try again.',
};

/** The sentence for a refusal. */
function readableRefusal(err: unknown): string {
  if (err instanceof TokenRefusal) return READABLE[err.code] ?? err.description;
  return 'The service could not be reached. Try again.';
}

type Step = 'password' | 'code' | 'newPassword';

export function SignInPage() {
  const [instance, setInstance] = useState('');
  const [userName, setUserName] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [step, setStep] = useState<Step>('password');
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const attempt = async (extra: { sendOneTimePassword?: boolean } = {}) => {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      await signIn({
        instance,
        userName,
        password,
        ...(step === 'code' && code ? { oneTimePassword: code.trim() } : {}),
        ...(step === 'newPassword' ? { newPassword } : {}),
        ...extra,
      });
    } catch (err) {
      const refusal = err instanceof TokenRefusal ? err.code : '';
      if (refusal === 'one_time_password_required') {
        setStep('code');
        if (extra.sendOneTimePassword) setStatus('A code is on its way. Enter it below.');
        else setError(readableRefusal(err));
      } else if (refusal === 'new_password_required' || refusal === 'password_expired') {
        setStep('newPassword');
        setError(readableRefusal(err));
      } else setError(readableRefusal(err));
    } finally {
      setBusy(false);
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    void attempt();
  };

  return html`<main class="sign-in" id="main">
    <h1>Gatehouse</h1>
    <form onSubmit=${submit} aria-labelledby="sign-in-title" novalidate>
      <h2 id="sign-in-title">Sign in</h2>
      <${Field} label="Instance" value=${instance} onInput=${setInstance} autocomplete="organization" required />
      <${Field} label="User name" value=${userName} onInput=${setUserName} autocomplete="username" required />
      <${Field} label="Password" type="password" value=${password} onInput=${setPassword} autocomplete="current-password" required />
      ${step === 'code'
        ? html`<div class="step">
            <button type="button" class="secondary" disabled=${busy} onClick=${() => attempt({ sendOneTimePassword: true })}>Send code</button>
            <${Field} label="One-time code" value=${code} onInput=${setCode} autocomplete="one-time-code" inputmode="numeric" />
          </div>`
        : null}
      ${step === 'newPassword'
        ? html`<${Field} label="New password" type="password" value=${newPassword} onInput=${setNewPassword} autocomplete="new-password" hint="At least 8 characters, with upper case, lower case, digits and special characters." />`
        : null}
      <${ErrorAlert} error=${error} />
      <${Status} text=${status} />
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${SingleSignOn} instance=${instance} loginHint=${userName} />
  </main>`;
}
