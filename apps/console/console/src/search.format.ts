// Searching the workspace and key lists. The admin API has no search and lists oldest first
// (contract section 2: limit and cursor only), so the console reads up to 500 of each and filters
// what it has read, newest first; "Load more" reads the next (newer) pages.

/** The newest first, by `created_at` (equal times keep their order). */
export function newestFirst<T extends { created_at: string }>(items: readonly T[]): T[] {
  return items
    .map((item, at) => ({ item, at }))
    .sort((a, b) => Date.parse(b.item.created_at) - Date.parse(a.item.created_at) || b.at - a.at)
    .map(({ item }) => item);
}

const folded = (text: string): string => text.normalize('NFKC').toLocaleLowerCase().trim();

/** Whether a workspace's name holds the query (any case); an empty query matches every one. */
export function workspaceMatches(workspace: { name: string; id: string }, query: string): boolean {
  const q = folded(query);
  return q === '' || folded(workspace.name).includes(q) || workspace.id.startsWith(q);
}

/** Whether a key's name holds the query, or its token prefix starts with it (`plk_Ab12…` as shown works too). */
export function keyMatches(key: { name: string; token_prefix: string }, query: string): boolean {
  // NFKC has made the shown ellipsis three dots.
  const q = folded(query).replace(/\.{3}$/, '');
  return q === '' || folded(key.name).includes(q) || key.token_prefix.toLowerCase().startsWith(q);
}

/** What the list under a search box says: how many are shown of those read, and whether more exist. */
export function searchNote(noun: [one: string, many: string], shown: number, read: number, query: string, complete: boolean): string {
  const name = (n: number) => `${n} ${n === 1 ? noun[0] : noun[1]}`;
  const more = complete ? '' : '; older ones shown, newer ones not read yet: load more';
  if (folded(query) === '') return `${name(read)}, newest first${more}.`;
  return `${shown} of ${name(read)} match “${query.trim()}”${complete ? '' : ' (of those read so far)'}.`;
}
