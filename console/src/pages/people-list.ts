/**
 * The people of the instance: all of them page by page, or those a search finds. A search of
 * digits is a card number (any card of the person, disabled or not: an operator looks a card up
 * to see whose it is); anything else is a name, matched anywhere in the common name, given name or
 * surname, any case. The search and the page are in the URL, so reload and back keep them.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { here, hrefOf, navigate } from '../router.ts';
import { instanceKey, session } from '../session.ts';
import { ErrorAlert, PageHeader, useLoad } from '../ui.ts';
import { TableWrap } from './people-ui.ts';
import { cardNumberText, codeOf, type Person } from './people-data.ts';
import { peoplePath, readExact } from './people-reads.ts';

const PAGE_SIZE = 20;

/** Characters a regular expression would read as operators. */
const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Found {
  readonly people: readonly Person[];
  /** Set when the instance was too large for a search by any part of a name: the index's exact prefix was used. */
  readonly narrowed: boolean;
}

/**
 * One page of people. Without a search: the collection's list. Digits: the card number index.
 * A name: every person's names, any case, anywhere in them; an instance too large for that
 * (the API answers 400 InvalidQuery) falls back to the name index, names beginning with the text
 * exactly as typed.
 */
async function findPeople(instance: string, q: string, page: number): Promise<Found> {
  const paging = { page, pageSize: PAGE_SIZE };
  if (!q) return { people: await readExact<Person[]>(peoplePath(instance), { query: paging }), narrowed: false };
  const search = (query: string) => readExact<Person[]>(`/api/f/${instance}/search`, { method: 'POST', body: query, query: paging });
  // The query is sent as JSON text, so a 64-bit card number keeps its digits.
  if (/^\d+$/.test(q)) return { people: await search(`{"_t": "Person", "CardAssignments.EncodedCardNumber": ${q.replace(/^0+(?=\d)/, '')}}`), narrowed: false };
  const pattern = escapeRegex(q);
  const anyName = { $regex: pattern, $options: 'i' };
  try {
    return { people: await search(JSON.stringify({ _t: 'Person', $or: [{ CommonName: anyName }, { GivenName: anyName }, { Surname: anyName }] })), narrowed: false };
  } catch (err) {
    if (codeOf(err) !== 'InvalidQuery') throw err;
    return { people: await search(JSON.stringify({ _t: 'Person', CommonName: { $regex: `^${pattern}` } })), narrowed: true };
  }
}

export function PeopleList() {
  const instance = instanceKey.value;
  const q = (here.value.query.get('q') ?? '').trim();
  const page = Math.max(0, Number.parseInt(here.value.query.get('page') ?? '0', 10) || 0);
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);
  const found = useLoad(() => findPeople(instance, q, page), [instance, q, page]);
  const role = session.value?.role;
  const canWrite = role === 'Administrator' || role === 'Operator';
  const people = found.data?.people ?? [];

  const go = (nextQ: string, nextPage: number) => navigate(hrefOf('people', undefined, { q: nextQ || undefined, page: nextPage ? String(nextPage) : undefined }));
  const submit = (e: Event) => {
    e.preventDefault();
    go(text.trim(), 0);
  };

  return html`<div class="people">
    <${PageHeader} title="People">
      ${canWrite ? html`<button type="button" onClick=${() => navigate(hrefOf('people', 'new'))}>New person</button>` : null}
    <//>
    <form role="search" class="toolbar" onSubmit=${submit}>
      <div class="field">
        <label for="people-search">Search people</label>
        <input
          id="people-search"
          type="search"
          value=${text}
          aria-describedby="people-search-hint"
          onInput=${(e: Event) => setText((e.currentTarget as HTMLInputElement).value)}
        />
        <small id="people-search-hint">A name, or a card number</small>
      </div>
      <button type="submit">Search</button>
      ${q ? html`<button type="button" class="secondary" onClick=${() => go('', 0)}>Show everyone</button>` : null}
    </form>
    <${ErrorAlert} error=${found.error} />
    ${found.data?.narrowed
      ? html`<p class="muted">This instance holds too many people to search every name: these are the people whose name begins with “${q}”, exactly as typed.</p>`
      : null}
    <${TableWrap} label="People">
      <table aria-busy=${found.loading ? 'true' : 'false'}>
        <caption>People</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Given name</th><th scope="col">Surname</th><th scope="col">Cards</th></tr>
        </thead>
        <tbody>
          ${people.map(
            (p) => html`<tr key=${p.Key}>
              <td><a href=${hrefOf('people', p.Key)}>${p.CommonName || '(no name)'}</a></td>
              <td>${p.GivenName ?? ''}</td>
              <td>${p.Surname ?? ''}</td>
              <td>${(p.CardAssignments ?? []).map((c) => cardNumberText(c.EncodedCardNumber)).filter(Boolean).join(', ')}</td>
            </tr>`,
          )}
          ${!found.loading && !found.error && people.length === 0
            ? html`<tr><td colspan="4">${q ? `Nobody found for “${q}”.` : page > 0 ? 'No more people.' : 'No people yet.'}</td></tr>`
            : null}
        </tbody>
      </table>
    <//>
    <nav class="pager" aria-label="Pages of people">
      <button type="button" class="secondary" disabled=${page === 0} onClick=${() => go(q, page - 1)}>Previous page</button>
      <span>Page ${page + 1}</span>
      <button type="button" class="secondary" disabled=${people.length < PAGE_SIZE} onClick=${() => go(q, page + 1)}>Next page</button>
    </nav>
  </div>`;
}
