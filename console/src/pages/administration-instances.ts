/**
 * Administration › Instances: the session's instance and the instances below it (each instance's
 * `instances` collection), as a tree, and the switcher: "Work in <name>" makes every page act in
 * that instance (session.ts `currentInstance`, which `instanceKey` follows), "Back to <name>"
 * returns to the session's own. An administrator of an instance administers those below it.
 */
import { html } from '../html.ts';
import { api } from '../api.ts';
import { currentInstance, instanceKey, session } from '../session.ts';
import { ErrorAlert, useLoad } from '../ui.ts';

interface InstanceNode {
  readonly key: string;
  readonly name: string;
  readonly children: InstanceNode[];
}

interface Named {
  readonly Key: string;
  readonly CommonName?: string;
}

/** Instances the tree shows at most, and instance listings it reads at most (a wide tree shows its upper levels). */
const MAX_INSTANCES = 500;
const MAX_LISTINGS = 100;

async function treeOf(root: { key: string; name: string }): Promise<{ tree: InstanceNode; complete: boolean }> {
  const tree: InstanceNode = { key: root.key, name: root.name, children: [] };
  const queue = [tree];
  let count = 1;
  let listings = 0;
  while (queue.length > 0) {
    if (listings >= MAX_LISTINGS || count >= MAX_INSTANCES) return { tree, complete: false };
    const node = queue.shift()!;
    listings++;
    for (let page = 0; ; page++) {
      const batch = await api<Named[]>(`/api/f/${node.key}/instances`, { query: { page, pageSize: 1000 } });
      for (const c of batch) {
        const child: InstanceNode = { key: c.Key, name: c.CommonName || c.Key, children: [] };
        node.children.push(child);
        queue.push(child);
        count++;
      }
      if (batch.length < 1000 || count >= MAX_INSTANCES) break;
    }
    node.children.sort((a, b) => a.name.localeCompare(b.name));
  }
  return { tree, complete: true };
}

function choose(node: InstanceNode): void {
  const own = session.value?.instanceKey;
  currentInstance.value = node.key === own ? null : { key: node.key, name: node.name };
}

function Node({ node }: { readonly node: InstanceNode }) {
  const current = node.key === instanceKey.value;
  return html`<li>
    <span class="instance-name" aria-current=${current ? 'true' : undefined}>${node.name}</span>
    ${current
      ? html` <strong class="instance-here">(working here)</strong>`
      : html` <button type="button" class="secondary" onClick=${() => choose(node)}>${`Work in ${node.name}`}</button>`}
    ${node.children.length > 0 ? html`<ul>${node.children.map((c) => html`<${Node} key=${c.key} node=${c} />`)}</ul>` : null}
  </li>`;
}

export function InstancesSection() {
  const s = session.value!;
  const tree = useLoad(() => treeOf({ key: s.instanceKey, name: s.instanceName }), [s.instanceKey]);
  const current = currentInstance.value;
  return html`<section class="panel" aria-labelledby="admin-instances">
    <div class="section-header">
      <h2 id="admin-instances">Instances</h2>
      ${current ? html`<button type="button" onClick=${() => (currentInstance.value = null)}>${`Back to ${s.instanceName}`}</button>` : null}
    </div>
    <p>
      Working in <strong>${current?.name ?? s.instanceName}</strong>. Every page (events, people, doors, users, webhooks...) acts in the
      instance chosen here, until you choose another or sign out.
    </p>
    <${ErrorAlert} error=${tree.error} />
    ${tree.data
      ? html`<ul class="instance-tree" aria-label="Instance tree">
            <${Node} node=${tree.data.tree} />
          </ul>
          ${tree.data.complete ? null : html`<p class="muted">The tree is cut short (at most ${MAX_INSTANCES} instances): it shows the upper levels.</p>`}`
      : tree.loading
        ? html`<p aria-busy="true">Loading the instances…</p>`
        : null}
  </section>`;
}
