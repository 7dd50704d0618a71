/**
 * Administration › Users: the logins of the instance being worked in (UserInfo, `users` of the
 * instance): create one, change its role, disable or enable it, turn its two-factor step on or
 * off, and sign it out everywhere. A change of role, a disable and "Sign out everywhere" end the
 * user's sessions within the service's status check (docs/administration.md, "Sessions").
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { session, instanceKey, type Role } from '../session.ts';
import { Check, ErrorAlert, Field, Modal, Select, Status, useLoad, useAction } from '../ui.ts';

interface User {
  readonly Key: string;
  readonly Href: string;
  readonly CommonName: string;
  readonly Role?: Role | null;
  readonly IsDisabled?: boolean | null;
  readonly TwoFactorEnabled?: boolean | null;
  readonly IdentityProviderKey?: string | null;
  readonly [field: string]: unknown;
}

const ROLES: ReadonlyArray<{ readonly value: Role; readonly label: string }> = [
  { value: 'Administrator', label: 'Administrator' },
  { value: 'Operator', label: 'Operator' },
  { value: 'ReadOnly', label: 'Read-only' },
  { value: 'Controller', label: 'Controller (door controllers)' },
];

const roleLabel = (r: Role | null | undefined) => ROLES.find((x) => x.value === (r ?? 'Operator'))?.label ?? String(r);

/** Every user of an instance (pages of 1000, at most 10 000). */
async function usersOf(instance: string): Promise<User[]> {
  const out: User[] = [];
  for (let page = 0; page < 10; page++) {
    const batch = await api<User[]>(`/api/f/${instance}/users`, { query: { page, pageSize: 1000 } });
    out.push(...batch);
    if (batch.length < 1000) break;
  }
  return out.sort((a, b) => a.CommonName.localeCompare(b.CommonName));
}

/** A change of some fields, on the user as stored now (its current ConcurrencyVersion). */
async function changeUser(u: User, patch: Partial<User>): Promise<void> {
  const current = await api<User>(u.Href);
  await api(u.Href, { method: 'PUT', body: { ...current, ...patch } });
}

function NewUserDialog({ instance, onClose, onCreated }: { readonly instance: string; readonly onClose: () => void; readonly onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('Operator');
  const [twoFactor, setTwoFactor] = useState(false);
  const [mustChange, setMustChange] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      await api(`/api/f/${instance}/users`, {
        method: 'POST',
        body: { CommonName: name, Password: password, Role: role, TwoFactorEnabled: twoFactor, MustChangePassword: mustChange, InFolderKey: instance },
      });
      onCreated(name);
    });
  };
  return html`<${Modal} title="New user" onClose=${onClose}>
    <form onSubmit=${(e: Event) => void submit(e)}>
      <${Field} label="User name" value=${name} onInput=${setName} required autocomplete="off" />
      <${Field}
        label="Password"
        type="password"
        value=${password}
        onInput=${setPassword}
        required
        autocomplete="new-password"
        hint="At least 8 characters (or the instance's minimum) with upper and lower case, digits and a special character."
      />
      <${Select} label="Role" value=${role} onChange=${(v: string) => setRole(v as Role)} options=${ROLES} />
      <${Check} label="Two-factor sign-in (a one-time code each time)" checked=${twoFactor} onChange=${setTwoFactor} />
      <${Check} label="Must change the password at first sign-in" checked=${mustChange} onChange=${setMustChange} />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Create user</button>
        <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

function RoleDialog({ user, onClose, onSaved }: { readonly user: User; readonly onClose: () => void; readonly onSaved: (role: Role) => void }) {
  const [role, setRole] = useState<Role>(user.Role ?? 'Operator');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      await changeUser(user, { Role: role });
      onSaved(role);
    });
  };
  return html`<${Modal} title=${`Role of ${user.CommonName}`} onClose=${onClose}>
    <form onSubmit=${(e: Event) => void submit(e)}>
      <${Select} label="Role" value=${role} onChange=${(v: string) => setRole(v as Role)} options=${ROLES} />
      <p class="muted">A lower role applies at once: the user's current sessions are refused within 30 seconds and sign in again with it.</p>
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Save</button>
        <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

export function UsersSection() {
  const instance = instanceKey.value;
  const users = useLoad(() => usersOf(instance), [instance]);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<User | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const me = session.value?.userKey;

  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(null);
    setStatus(null);
    try {
      await what();
      setStatus(done);
      users.reload();
    } catch (err) {
      setError(err);
    }
  };

  return html`<section class="panel" aria-labelledby="admin-users">
    <div class="section-header">
      <h2 id="admin-users">Users</h2>
      <button type="button" onClick=${() => setCreating(true)}>New user</button>
    </div>
    <${Status} text=${status} />
    <${ErrorAlert} error=${error ?? users.error} />
    <div class="table-wrap" tabindex="0" role="region" aria-label="Users, scrolls sideways on a narrow screen">
      <table aria-busy=${users.loading ? 'true' : 'false'}>
        <caption>Users</caption>
        <thead>
          <tr>
            <th scope="col">User name</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Two-factor</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${(users.data ?? []).map(
            (u) => html`<tr key=${u.Key} data-user=${u.CommonName}>
              <th scope="row">${u.CommonName}${u.Key === me ? html` <small class="muted">(you)</small>` : null}</th>
              <td>${roleLabel(u.Role)}</td>
              <td>${u.IsDisabled ? 'Disabled' : 'Enabled'}</td>
              <td>${u.IdentityProviderKey ? 'Single sign-on' : u.TwoFactorEnabled ? 'On' : 'Off'}</td>
              <td class="row-actions">
                <button type="button" class="secondary" onClick=${() => setEditing(u)}>Change role</button>
                ${u.Key === me
                  ? null
                  : html`<button
                      type="button"
                      class="secondary"
                      onClick=${() => void act(() => changeUser(u, { IsDisabled: !u.IsDisabled }), `${u.CommonName} is ${u.IsDisabled ? 'enabled' : 'disabled: its sessions have ended'}.`)}
                    >
                      ${u.IsDisabled ? 'Enable' : 'Disable'}
                    </button>`}
                ${u.IdentityProviderKey
                  ? null
                  : html`<button
                      type="button"
                      class="secondary"
                      onClick=${() =>
                        void act(
                          () => changeUser(u, { TwoFactorEnabled: !u.TwoFactorEnabled }),
                          `Two-factor sign-in is ${u.TwoFactorEnabled ? 'off' : 'on'} for ${u.CommonName}.`,
                        )}
                    >
                      ${u.TwoFactorEnabled ? 'Turn off two-factor' : 'Turn on two-factor'}
                    </button>`}
                <button
                  type="button"
                  class="secondary"
                  onClick=${() =>
                    void act(() => api(`${u.Href}/revokesessions`, { method: 'POST' }), `${u.CommonName} is signed out everywhere.`)}
                >
                  Sign out everywhere
                </button>
              </td>
            </tr>`,
          )}
          ${!users.loading && (users.data ?? []).length === 0 ? html`<tr><td colspan="5">No user.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${creating
      ? html`<${NewUserDialog}
          instance=${instance}
          onClose=${() => setCreating(false)}
          onCreated=${(name: string) => {
            setCreating(false);
            setStatus(`${name} was created.`);
            users.reload();
          }}
        />`
      : null}
    ${editing
      ? html`<${RoleDialog}
          user=${editing}
          onClose=${() => setEditing(null)}
          onSaved=${(role: Role) => {
            const name = editing.CommonName;
            setEditing(null);
            setStatus(`${name} is now ${roleLabel(role)}.`);
            users.reload();
          }}
        />`
      : null}
  </section>`;
}
