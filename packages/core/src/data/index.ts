export * from './database';
export * from './migrate';
export * from './outbox';
export * from './workspace-scoped';
export * from './quota-lock';
export * from './quotas';
