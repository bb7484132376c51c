// What differs between two versions of the catalog, as the list_changed notifications that say
// so: between two sets of upstream lists (a reload's), or two catalogs over the same lists (a
// new pin lock withholds or gives back entries).
import { LISTS, type Catalog, type ListKind, type UpstreamLists } from './catalog.js';

export const LIST_CHANGED: Record<ListKind, string> = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
  resourceTemplates: 'notifications/resources/list_changed',
};

/** `lists` in the order of `upstreams` (the config's): the catalog lists them so. */
export function inConfigOrder(
  lists: ReadonlyMap<string, UpstreamLists>,
  upstreams: ReadonlyMap<string, unknown>,
): Map<string, UpstreamLists> {
  const ordered = new Map<string, UpstreamLists>();
  for (const name of upstreams.keys()) {
    const l = lists.get(name);
    if (l) ordered.set(name, l);
  }
  return ordered;
}

/** The list_changed methods for every kind of list that differs between two sets of upstream lists. */
export function changedLists(
  before: ReadonlyMap<string, UpstreamLists>,
  after: ReadonlyMap<string, UpstreamLists>,
): string[] {
  const methods = new Set<string>();
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name);
    const b = after.get(name);
    for (const kind of Object.keys(LISTS) as ListKind[]) {
      const was = a ? JSON.stringify([a.prefix, a.lists[kind] ?? []]) : JSON.stringify(['', []]);
      const now = b ? JSON.stringify([b.prefix, b.lists[kind] ?? []]) : JSON.stringify(['', []]);
      const empty = (l: UpstreamLists | undefined) => (l?.lists[kind] ?? []).length === 0;
      if (was !== now && !(empty(a) && empty(b))) methods.add(LIST_CHANGED[kind]);
    }
  }
  return [...methods];
}

/** The list_changed methods for every kind whose entries differ between two catalogs. */
export function changedEntries(before: Catalog, after: Catalog): string[] {
  const methods = new Set<string>();
  for (const kind of Object.keys(LISTS) as ListKind[])
    if (JSON.stringify(before.list(kind)) !== JSON.stringify(after.list(kind))) methods.add(LIST_CHANGED[kind]);
  return [...methods];
}
