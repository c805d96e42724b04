export * from './document';
export * from './route-docs';
export * from './schemas';
