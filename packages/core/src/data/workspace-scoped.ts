import type { WorkspaceId } from '../http/http';

/** What a store method that does not take the workspace first is turned into, so the error says why. */
type TakesTheWorkspaceFirst = 'a store method takes the WorkspaceId first';

/**
 * A store of a workspace's resources: every method takes the `WorkspaceId` first. A method that
 * does not (a plain string, another argument, none) makes `workspaceScoped` a type error.
 */
export type WorkspaceScoped<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => unknown ? (A extends [WorkspaceId, ...unknown[]] ? T[K] : TakesTheWorkspaceFirst) : TakesTheWorkspaceFirst;
};

/**
 * Declares a store whose every method takes the workspace first, checked by the compiler
 * (novu's `enforce.ts`): a query that forgets the workspace cannot be added to it.
 */
export function workspaceScoped<T extends WorkspaceScoped<T>>(store: T): T {
  return store;
}
