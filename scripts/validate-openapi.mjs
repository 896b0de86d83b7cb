/* global process, console */
// Validates an OpenAPI document read from stdin with @apidevtools/swagger-parser (3.1 schema and
// semantic checks). Exits 1 with the validator's message when the document is invalid.
import SwaggerParser from '@apidevtools/swagger-parser';

let text = '';
for await (const chunk of process.stdin) text += chunk;
try {
  const api = await SwaggerParser.validate(JSON.parse(text));
  console.log(`valid: OpenAPI ${api.openapi}, ${Object.keys(api.paths ?? {}).length} paths`);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
