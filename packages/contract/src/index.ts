// The platform's facts, stated once: core, the gateway, the services, the client and the console import them.
// Explicit `.js` extensions: the same sources build for Node (dist/) and as browser ES modules (dist/browser/).
export * from './errors.js';
export * from './quotas.js';
export * from './routes.js';
