// The store conformance suite on PostgreSQL: the same suite the file store passes (unit tier),
// against a cluster this test run starts (test/support/postgresCluster.ts). It is in the
// system tier because the cluster is a set of processes.
import { PgStore } from '../../../src/engine/store/pgStore';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { storeConformance } from '../../unit/store/storeConformance';

describe('PostgreSQL store', () => {
  let cluster: PostgresCluster;
  before(async function () {
    this.timeout(120_000);
    cluster = await sharedPostgresCluster();
  });

  // Each test's location (a temporary folder) is a schema of its own; two openings of one location share it.
  storeConformance({
    name: 'PgStore (PostgreSQL)',
    open: (location, options) =>
      PgStore.open({ url: cluster.url, schema: schemaFor(location), follow: options?.follow ?? false }),
  });
});
