/** Regenerates schemas/config.schema.json from the zod config schema (npm run schema). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configJsonSchema } from '../src/engine/domain/config';

export function renderConfigSchema(): string {
  return `${JSON.stringify({ ...configJsonSchema(), title: 'Baton project settings (.baton/config.json)' }, null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(join(__dirname, '..', 'schemas', 'config.schema.json'), renderConfigSchema());
}
