/**
 * The typed client's types (`clients/typescript/src/schema.ts`), generated from the document by
 * openapi-typescript so the client can never drift from the API. `npm run openapi` writes them
 * beside docs/openapi.json; `test/unit/openapi-document.test.ts` fails when they are not current.
 */
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

/** The TypeScript source of the document's types (`paths`, `components`, `operations`). */
export async function clientTypes(documentJson: string): Promise<string> {
  // From the JSON text that is checked in, so the types match docs/openapi.json byte for byte.
  const ast = await openapiTS(JSON.parse(documentJson) as OpenAPI3, { silent: true });
  return `${COMMENT_HEADER.replace(' */', ' * Run `npm run openapi` to write it again from docs/openapi.json.\n */')}${astToString(ast)}`;
}
