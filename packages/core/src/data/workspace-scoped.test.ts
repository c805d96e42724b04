import type { WorkspaceId } from '../http/http';
import { workspaceScoped } from './workspace-scoped';

describe('workspaceScoped', () => {
  test('a store whose methods take the WorkspaceId first is accepted as it is', () => {
    const store = { find: (workspaceId: WorkspaceId, id: string) => `${workspaceId}/${id}` };
    expect(workspaceScoped(store)).toBe(store);
  });

  test('a method without the workspace, with a plain string for it or with no argument is a type error (checked by typecheck)', () => {
    // @ts-expect-error the first argument is not the workspace
    workspaceScoped({ stale: (createdBefore: Date) => createdBefore });
    // @ts-expect-error a plain string is not a WorkspaceId
    workspaceScoped({ find: (workspaceId: string, id: string) => workspaceId + id });
    // @ts-expect-error no argument at all
    workspaceScoped({ all: () => [] });
    // @ts-expect-error not a method
    workspaceScoped({ limit: 10 });
  });
});
