// The API reference's page, style sheet and icon go beside the scripts tsc compiled into dist/docs,
// so dist/ alone is the deployable gateway (the image copies nothing else).
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
cpSync(join(here, 'static'), join(here, '..', 'dist', 'docs'), { recursive: true });
