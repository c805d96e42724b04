import { z } from 'zod';
import { codePointString, ListQuery, SCOPES, Timestamp, Uuid } from '@platform/core';

export const WorkspaceParams = z.object({ id: Uuid });
export type WorkspaceParams = z.infer<typeof WorkspaceParams>;

export const ApiKeyParams = z.object({ id: Uuid, key_id: Uuid });
export type ApiKeyParams = z.infer<typeof ApiKeyParams>;

export const CreateWorkspaceBody = z.strictObject({ name: codePointString(1, 200) });
export type CreateWorkspaceBody = z.infer<typeof CreateWorkspaceBody>;

/** `scopes` omitted (or null) = unrestricted; otherwise a non-empty list of known scopes. */
export const CreateApiKeyBody = z.strictObject({
  name: codePointString(1, 200),
  scopes: z.array(z.enum(SCOPES)).min(1).nullable().optional(),
  expires_at: Timestamp.nullable().optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const AdminListQuery = ListQuery;
export type AdminListQuery = z.infer<typeof AdminListQuery>;
