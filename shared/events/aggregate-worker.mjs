// The aggregation worker's entry when the sources run as TypeScript (npm start, vitest): a worker
// thread does not inherit the parent's TypeScript loader. In a bundle, aggregate-worker.ts is
// built to this file's name beside the function's code instead (infra/bundling.ts).
import { tsImport } from 'tsx/esm/api';

await tsImport('./aggregate-worker.ts', import.meta.url);
