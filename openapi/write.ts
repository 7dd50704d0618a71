/**
 * `npm run openapi`: writes docs/openapi.json from the route table and the model's schemas.
 * `test/unit/openapi-document.test.ts` fails when the checked-in file is not current.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument, formatDocument } from './document.ts';
import { DOCUMENT_PATH, packageVersion } from './paths.ts';

writeFileSync(DOCUMENT_PATH, formatDocument(buildOpenApiDocument({ version: packageVersion() })));
console.log(`wrote ${DOCUMENT_PATH}`);
