// The types of @platform/client's browser build, which the gateway build copies unchanged into
// dist/console/client/ (pages/build-pages.mjs): the page imports it from /console/client/ like its
// own modules, and tsc checks the imports against the package's own declarations.
export * from '@platform/client';
