import { FileStore } from '../../../src/engine/store/fileStore';
import { storeConformance } from './storeConformance';

storeConformance({
  name: 'FileStore (sql.js + journal)',
  open: (location, options) => FileStore.open(location, { follow: options?.follow ?? false }),
});
