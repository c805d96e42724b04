export * from './admin.schemas';
export * from './admin.resources';
export * from './admin.openapi';
