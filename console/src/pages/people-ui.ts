/** The People pages' own building blocks: a section, a confirmation, a table that may scroll. */
import type { ComponentChildren } from 'preact';
import { html } from '../html.ts';
import { Modal } from '../ui.ts';

/** A modal asking to confirm an action that is not easily undone. */
export function Confirm(p: { readonly title: string; readonly text: string; readonly action: string; readonly onConfirm: () => void; readonly onClose: () => void }) {
  return html`<${Modal} title=${p.title} onClose=${p.onClose}>
    <p>${p.text}</p>
    <div class="actions">
      <button type="button" class="danger" onClick=${p.onConfirm}>${p.action}</button>
      <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
    </div>
  <//>`;
}

/** A section of the person page: its heading, then its content. */
export function Section(p: { readonly id: string; readonly title: string; readonly children: ComponentChildren; readonly actions?: ComponentChildren }) {
  return html`<section class="panel person-section" aria-labelledby=${p.id}>
    <div class="section-head">
      <h2 id=${p.id}>${p.title}</h2>
      ${p.actions ? html`<div class="actions">${p.actions}</div>` : null}
    </div>
    ${p.children}
  </section>`;
}

/**
 * A table's frame: on a narrow screen it scrolls sideways, so it takes the keyboard focus (arrow
 * keys scroll it) and is a region named like its table.
 */
export function TableWrap(p: { readonly label: string; readonly children: ComponentChildren }) {
  return html`<div class="table-wrap" role="region" aria-label=${p.label} tabindex="0">${p.children}</div>`;
}
