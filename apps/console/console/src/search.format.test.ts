import { keyMatches, newestFirst, searchNote, workspaceMatches } from './search.format';

test('newest first, whatever order the API listed them in; equal times keep the later one first', () => {
  const listed = [
    { id: 'a', created_at: '2025-01-01T00:00:00Z' },
    { id: 'b', created_at: '2025-03-01T00:00:00Z' },
    { id: 'c', created_at: '2025-02-01T00:00:00Z' },
    { id: 'd', created_at: '2025-03-01T00:00:00Z' },
  ];
  expect(newestFirst(listed).map((w) => w.id)).toEqual(['d', 'b', 'c', 'a']);
  expect(listed.map((w) => w.id)).toEqual(['a', 'b', 'c', 'd']);
});

test('a workspace matches by a part of its name in any case, or by the start of its id', () => {
  const acme = { name: 'Acme Berlin', id: '3f2c1a9e-7b4d-4c2a-9e1f-0a1b2c3d4e5f' };
  expect(workspaceMatches(acme, '')).toBe(true);
  expect(workspaceMatches(acme, '  berl ')).toBe(true);
  expect(workspaceMatches(acme, 'ACME')).toBe(true);
  expect(workspaceMatches(acme, '3f2c1a9e')).toBe(true);
  expect(workspaceMatches(acme, 'paris')).toBe(false);
});

test('a key matches by a part of its name, or by the start of its token prefix (as shown, with its ellipsis)', () => {
  const key = { name: 'Gate scanner', token_prefix: 'plk_Ab12Cd' };
  expect(keyMatches(key, 'scan')).toBe(true);
  expect(keyMatches(key, 'plk_ab12')).toBe(true);
  expect(keyMatches(key, 'plk_Ab12Cd…')).toBe(true);
  expect(keyMatches(key, 'b12')).toBe(false);
  expect(keyMatches(key, 'ticket')).toBe(false);
});

test('the note says how many match of those read, and when newer ones are not read yet', () => {
  const noun: [string, string] = ['key', 'keys'];
  expect(searchNote(noun, 3, 3, '', true)).toBe('3 keys, newest first.');
  expect(searchNote(noun, 1, 1, '', false)).toBe('1 key, newest first; older ones shown, newer ones not read yet: load more.');
  expect(searchNote(noun, 2, 40, ' scan ', true)).toBe('2 of 40 keys match “scan”.');
  expect(searchNote(noun, 0, 500, 'x', false)).toBe('0 of 500 keys match “x” (of those read so far).');
});
