/**
 * The console's frame: sign-in until there is a session, then the main navigation, the instance
 * being worked in, "Sign out", and the page the URL names.
 */
import type { ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import { html } from './html.ts';
import { here, hrefOf, navigate } from './router.ts';
import { restoring, session, signOut, currentInstance } from './session.ts';
import { unacknowledgedAlarms } from './alarm-state.ts';
import { liveState } from './live.ts';
import { SignInPage } from './pages/sign-in.ts';
import { SignInCallbackPage } from './pages/sign-in-callback.ts';
import { LiveEventsPage } from './pages/live-events.ts';
import { AlarmsPage } from './pages/alarms.ts';
import { PeoplePage } from './pages/people.ts';
import { DoorsPage } from './pages/doors.ts';
import { AccessLevelsPage } from './pages/access-levels.ts';
import { SchedulesPage } from './pages/schedules.ts';
import { EventsPage } from './pages/events.ts';
import { AdministrationPage } from './pages/administration.ts';

interface Section {
  readonly page: string;
  readonly label: string;
  readonly view: ComponentType<{ readonly pageKey: string | undefined }>;
  readonly administrators?: boolean;
}

/** The navigation's links, in order, and the page each shows. */
const SECTIONS: readonly Section[] = [
  { page: 'live', label: 'Live events', view: LiveEventsPage },
  { page: 'alarms', label: 'Alarms', view: AlarmsPage },
  { page: 'people', label: 'People', view: PeoplePage },
  { page: 'doors', label: 'Doors', view: DoorsPage },
  { page: 'access-levels', label: 'Access levels', view: AccessLevelsPage },
  { page: 'schedules', label: 'Schedules', view: SchedulesPage },
  { page: 'events', label: 'Events', view: EventsPage },
  { page: 'administration', label: 'Administration', view: AdministrationPage, administrators: true },
];

/** The links keep their names ("Alarms"): the count is the link's description, not part of its name. */
function Navigation({ current }: { readonly current: string }) {
  const role = session.value?.role;
  const count = unacknowledgedAlarms.value;
  return html`<nav aria-label="Main">
    <ul>
      ${SECTIONS.filter((s) => !s.administrators || role === 'Administrator').map(
        (s) => html`<li>
          <a
            href=${hrefOf(s.page)}
            aria-current=${s.page === current ? 'page' : undefined}
            aria-describedby=${s.page === 'alarms' && count ? 'alarm-count' : undefined}
          >
            ${s.label}${s.page === 'alarms' && count ? html` <span class="badge" aria-hidden="true">${count}</span>` : null}
          </a>
        </li>`,
      )}
    </ul>
    ${count ? html`<span id="alarm-count" class="visually-hidden">${count} unacknowledged</span>` : null}
  </nav>`;
}

function TopBar() {
  const s = session.value!;
  const instance = currentInstance.value?.name ?? s.instanceName;
  return html`<header class="top-bar">
    <a class="brand" href=${hrefOf('live')}>Gatehouse</a>
    <span class="who">${s.userName} · ${instance}${instance !== s.instanceName ? html` <small>(from ${s.instanceName})</small>` : null}</span>
    <span class=${`live-state ${liveState.value}`} role="status">${liveState.value === 'open' ? 'Live' : liveState.value === 'off' ? '' : 'Reconnecting…'}</span>
    <button type="button" class="secondary" onClick=${() => void signOut().then(() => navigate(hrefOf(''), true))}>Sign out</button>
  </header>`;
}

export function App() {
  const { page, key } = here.value;
  const s = session.value;
  useEffect(() => {
    const section = SECTIONS.find((x) => x.page === page);
    document.title = `${section?.label ?? 'Sign in'} · Gatehouse`;
  }, [page, s !== null]);
  if (page === 'callback') return html`<${SignInCallbackPage} />`;
  if (restoring.value) return html`<main id="main" class="loading" aria-busy="true"><p>Loading…</p></main>`;
  if (!s) return html`<${SignInPage} />`;
  const section = SECTIONS.find((x) => x.page === page && (!x.administrators || s.role === 'Administrator'));
  if (!section) {
    if (page === '') queueMicrotask(() => navigate(hrefOf('live'), true));
    return html`<div class="frame"><${TopBar} /><${Navigation} current="" /><main id="main"><h1>Not found</h1><p>There is no console page here. <a href=${hrefOf('live')}>Live events</a></p></main></div>`;
  }
  const View = section.view;
  return html`<div class="frame">
    <${TopBar} />
    <${Navigation} current=${page} />
    <main id="main"><${View} pageKey=${key} /></main>
  </div>`;
}
