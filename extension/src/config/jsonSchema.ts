/**
 * The JSON Schema of a `.toolbox.yaml` file, generated from the zod schema (schema.ts) so the
 * two cannot drift. The build writes it to `schemas/toolbox.schema.json`
 * (scripts/build.mjs), which `package.json` contributes to the YAML language support
 * (`yamlValidation`) for completion, hover help and validation; test/unit/config-schema.test.ts
 * fails when the checked-in file differs from what this returns. Pure.
 */
import { z } from 'zod';
import { fileSchema } from './schema';

/** Where the generated schema lives in the repository and in the package. */
export const JSON_SCHEMA_FILE = 'schemas/toolbox.schema.json';

type JsonObject = Record<string, unknown>;

export function toolboxJsonSchema(): JsonObject {
  // io 'input': what a file may say (env values may be numbers or booleans, read as strings).
  // Draft 7: what the YAML language server supports best. Refinements (absolute paths, reserved
  // env names) are not expressible and stay with the extension's own diagnostics.
  const schema = z.toJSONSchema(fileSchema, { io: 'input', target: 'draft-7' }) as JsonObject;
  const properties = schema.properties as Record<string, JsonObject>;
  for (const [key, property] of Object.entries(properties)) {
    // `image:` with no value reads as "not set" (parse.ts, as upstream), so a top-level key may be null.
    const { description, ...rest } = property;
    properties[key] = Object.keys(rest).length === 0 ? property : { description, anyOf: [rest, { type: 'null' }] };
  }
  return schema;
}

/** The file's text: two-space JSON and a final newline. */
export function toolboxJsonSchemaText(): string {
  return `${JSON.stringify(toolboxJsonSchema(), null, 2)}\n`;
}
