/**
 * "Sign in with <provider>": shown once the instance has an enabled identity provider (single
 * sign-on, issue #40). Filled in by the single sign-on work; nothing shows until then.
 */
export function SingleSignOn(_p: { readonly instance: string }) {
  return null;
}
