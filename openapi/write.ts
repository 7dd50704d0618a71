/**
 * `npm run openapi`: writes docs/openapi.json from the route table and the model's schemas, and
 * the typed client's types from it. `test/unit/openapi-document.test.ts` fails when either
 * checked-in file is not current.
 */
import { writeFileSync } from 'node:fs';
import { clientTypes } from './client-types.ts';
import { buildOpenApiDocument, formatDocument } from './document.ts';
import { CLIENT_TYPES_PATH, DOCUMENT_PATH, packageVersion } from './paths.ts';

const document = formatDocument(buildOpenApiDocument({ version: packageVersion() }));
writeFileSync(DOCUMENT_PATH, document);
console.log(`wrote ${DOCUMENT_PATH}`);
writeFileSync(CLIENT_TYPES_PATH, await clientTypes(document));
console.log(`wrote ${CLIENT_TYPES_PATH}`);
