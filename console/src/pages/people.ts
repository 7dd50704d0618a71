/**
 * People: `/console/people` lists and searches them, `/console/people/<key>` shows and edits one,
 * `/console/people/new` creates one.
 */
import { html } from '../html.ts';
import { PeopleList } from './people-list.ts';
import { PersonPage } from './people-person.ts';
import '../styles/people.css';

export function PeoplePage({ pageKey }: { readonly pageKey: string | undefined }) {
  // Keyed: another person (or a new one saved) starts from its own state.
  return pageKey ? html`<${PersonPage} key=${pageKey} personKey=${pageKey} />` : html`<${PeopleList} />`;
}
