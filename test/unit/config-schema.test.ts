/**
 * The JSON Schema shipped for the YAML language support (issue 15, item 13): generated from the
 * zod schema, so the checked-in file must be exactly what the generator returns now, and the
 * package must contribute and ship it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileSchema } from '../../extension/src/config/schema';
import { JSON_SCHEMA_FILE, toolboxJsonSchema, toolboxJsonSchemaText } from '../../extension/src/config/jsonSchema';

const root = join(__dirname, '../../..');

describe('schemas/toolbox.schema.json', () => {
  it('is exactly what the zod schema generates (run npm run build and commit the file when this fails)', () => {
    assert.equal(readFileSync(join(root, JSON_SCHEMA_FILE), 'utf8'), toolboxJsonSchemaText());
  });

  it('lists every key of the zod schema, each with a description, and no other key', () => {
    const properties = toolboxJsonSchema().properties as Record<string, { description?: string }>;
    assert.deepEqual(Object.keys(properties), Object.keys(fileSchema.shape));
    for (const [key, property] of Object.entries(properties)) {
      assert.ok(property.description && property.description.length > 20, `${key} has a description`);
    }
    assert.equal(toolboxJsonSchema().additionalProperties, false, 'an unknown top-level key is flagged');
  });

  it('accepts an empty top-level value (image: with nothing after it reads as unset, as upstream)', () => {
    const image = (toolboxJsonSchema().properties as Record<string, { anyOf?: unknown[] }>).image;
    assert.deepEqual(image?.anyOf?.[1], { type: 'null' });
  });

  it('is contributed for .toolbox.yaml and ~/.toolbox.yaml and ships in the package', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      contributes: { yamlValidation?: Array<{ fileMatch: string; url: string }> };
    };
    assert.deepEqual(pkg.contributes.yamlValidation, [{ fileMatch: '**/.toolbox.yaml', url: `./${JSON_SCHEMA_FILE}` }]);
    const shipped = readFileSync(join(root, '.vscodeignore'), 'utf8').split('\n');
    assert.ok(shipped.includes(`!${JSON_SCHEMA_FILE}`), '.vscodeignore keeps the schema in the VSIX');
  });
});
