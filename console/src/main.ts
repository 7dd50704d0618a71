/** The console's entry: styles, routing, the live connection, the session from the cookie, the app. */
import './console.css';
import { render } from 'preact';
import { html } from './html.ts';
import { App } from './app.ts';
import { startRouting } from './router.ts';
import { startLive } from './live.ts';
import { restore } from './session.ts';
import { startAlarmCount } from './alarm-state.ts';
import { startEventTypeNames } from './event-type-names.ts';

startRouting();
startLive();
startAlarmCount();
startEventTypeNames();
render(html`<${App} />`, document.getElementById('app')!);
// A callback page redeems its own code; any other page restores the session from the cookie.
if (!location.pathname.startsWith('/console/callback')) void restore();
