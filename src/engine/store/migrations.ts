/**
 * Numbered schema migrations, compiled into the bundle (nothing is read from disk at run
 * time). Each runs as one journaled transaction, so every process replays it. Never edit
 * a released migration; add the next number.
 *
 * One list for both backends: PostgreSQL runs the same statements through the dialect seam
 * (postgresDialect.ts: SQLite's column types become PostgreSQL's). A migration whose SQLite
 * form cannot be translated — a table rebuild, SQLite's only way to drop a constraint —
 * gives its PostgreSQL form beside it in `postgres`.
 */
export interface Migration {
  version: number;
  name: string;
  statements: string[];
  /** The same change as PostgreSQL makes it, when `statements` is SQLite-only (still translated by the seam). */
  postgres?: string[];
}

/**
 * Every table whose rows belong to one run, with the column that names it (migration 18). A migration that adds such a
 * table adds its guard too (test/unit/store/migrations.test.ts checks that every table with a run_id has one).
 */
export const RUN_TABLES: Readonly<Record<string, string>> = {
  runs: 'id',
  ...Object.fromEntries(
    [
      'tasks',
      'task_dependencies',
      'delegations',
      'runtimes',
      'gates',
      'events',
      'coordinator_leases',
      'stop_requests',
      'verification_receipts',
      'run_isolation',
      'worktrees',
      'agent_usage',
      'ingestions',
      'tree_snapshots',
      'verify_processes',
      'follow_ups',
      'hand_ins',
      'run_drivers',
    ].map((table) => [table, 'run_id']),
  ),
};

/**
 * Under a write scoped to a run (`baton.write_scope` set), an insert, update or delete of a row of another run is
 * refused (SQLSTATE BATN0; the transaction rolls back); without a scope everything goes through. The check is each
 * trigger's WHEN condition, which the executor evaluates without calling a function: the function that raises runs
 * only for a row that is refused.
 */
const REFUSE_OTHER_RUN = `CREATE FUNCTION baton_write_scope_refused() RETURNS trigger LANGUAGE plpgsql AS $guard$
  BEGIN
    RAISE EXCEPTION 'a write scoped to run % changed a row of run % in %',
      current_setting('baton.write_scope', true),
      (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END) ->> TG_ARGV[0],
      TG_TABLE_NAME USING ERRCODE = 'BATN0';
  END $guard$`;

function writeScopeGuard(table: string, column: string): string[] {
  const scope = `current_setting('baton.write_scope', true)`;
  const other = (row: 'OLD' | 'NEW') => `${row}.${column} IS DISTINCT FROM ${scope}`;
  const guard = (op: string, when: string) =>
    `CREATE TRIGGER baton_write_scope_${op.toLowerCase()}_${table} AFTER ${op} ON ${table} FOR EACH ROW
     WHEN (${scope} <> '' AND (${when})) EXECUTE FUNCTION baton_write_scope_refused('${column}')`;
  return [
    guard('INSERT', other('NEW')),
    guard('UPDATE', `${other('OLD')} OR ${other('NEW')}`),
    guard('DELETE', other('OLD')),
  ];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'domain model',
    statements: [
      `CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      `CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
      `CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        ordinal INTEGER NOT NULL,
        plan_path TEXT NOT NULL,
        plan_digest TEXT NOT NULL,
        plan_text TEXT NOT NULL,
        status TEXT NOT NULL,
        config_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      `CREATE TABLE tasks (
        run_id TEXT NOT NULL,
        id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        title TEXT NOT NULL,
        agent TEXT NOT NULL,
        worker TEXT,
        depends_json TEXT NOT NULL,
        risk_json TEXT NOT NULL,
        files_json TEXT NOT NULL,
        verify_json TEXT NOT NULL,
        instructions TEXT NOT NULL,
        line INTEGER NOT NULL,
        status TEXT NOT NULL,
        status_reason TEXT,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, id)
      )`,
      `CREATE INDEX tasks_by_status ON tasks (run_id, status)`,
      `CREATE TABLE task_dependencies (
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        depends_on TEXT NOT NULL,
        PRIMARY KEY (run_id, task_id, depends_on)
      )`,
      `CREATE INDEX task_dependents ON task_dependencies (run_id, depends_on)`,
      `CREATE TABLE delegations (
        run_id TEXT NOT NULL,
        id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        status TEXT NOT NULL,
        reason TEXT,
        runtime_id TEXT,
        result_status TEXT,
        artifact_path TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER,
        PRIMARY KEY (run_id, id),
        UNIQUE (run_id, task_id, attempt)
      )`,
      `CREATE INDEX delegations_by_status ON delegations (run_id, status)`,
      `CREATE INDEX delegations_by_id ON delegations (id)`,
      `CREATE TABLE runtimes (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        lease_ms INTEGER NOT NULL,
        lease_expires_at INTEGER NOT NULL,
        claimed_at INTEGER NOT NULL,
        last_heartbeat_at INTEGER,
        heartbeat_count INTEGER NOT NULL DEFAULT 0,
        progress TEXT,
        holder TEXT,
        ended_at INTEGER,
        end_reason TEXT
      )`,
      `CREATE INDEX runtimes_by_delegation ON runtimes (run_id, delegation_id)`,
      `CREATE INDEX runtimes_live ON runtimes (ended_at, lease_expires_at)`,
      `CREATE TABLE gates (
        id TEXT PRIMARY KEY,
        ordinal INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        task_id TEXT,
        delegation_id TEXT,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        details_json TEXT NOT NULL,
        opened_at INTEGER NOT NULL,
        decided_at INTEGER,
        decided_by TEXT,
        note TEXT
      )`,
      `CREATE INDEX gates_by_run ON gates (run_id, status)`,
      `CREATE INDEX gates_by_task ON gates (run_id, task_id, status)`,
      `CREATE TABLE ingestions (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        artifact_path TEXT NOT NULL,
        digest TEXT NOT NULL,
        accepted INTEGER NOT NULL,
        result_status TEXT,
        issues_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (run_id, delegation_id, digest)
      )`,
      `CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        at INTEGER NOT NULL,
        data_json TEXT NOT NULL,
        UNIQUE (run_id, seq)
      )`,
      `INSERT INTO counters (name, value) VALUES ('run', 0), ('gate', 0), ('ingestion', 0), ('lease_epoch', 0)`,
    ],
  },
  {
    version: 2,
    name: 'execution: coordinator leases, worker processes, stops, verification receipts',
    statements: [
      `CREATE TABLE coordinator_leases (
        run_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start TEXT,
        epoch INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL,
        renewed_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        released_at INTEGER
      )`,
      `ALTER TABLE runtimes ADD COLUMN pid INTEGER`,
      `ALTER TABLE runtimes ADD COLUMN pid_start TEXT`,
      `ALTER TABLE runtimes ADD COLUMN host TEXT`,
      `ALTER TABLE runtimes ADD COLUMN worker TEXT`,
      `ALTER TABLE runtimes ADD COLUMN log_path TEXT`,
      `ALTER TABLE runtimes ADD COLUMN cwd TEXT`,
      `ALTER TABLE tasks ADD COLUMN not_before INTEGER`,
      `CREATE INDEX tasks_ready ON tasks (run_id, status, ordinal)`,
      `ALTER TABLE runs ADD COLUMN stop_mode TEXT`,
      `ALTER TABLE runs ADD COLUMN superseded_by TEXT`,
      `CREATE TABLE stop_requests (
        id TEXT PRIMARY KEY,
        ordinal INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        delegation_id TEXT,
        mode TEXT NOT NULL,
        status TEXT NOT NULL,
        requested_at INTEGER NOT NULL,
        requested_by TEXT NOT NULL,
        applied_at INTEGER,
        report_json TEXT NOT NULL DEFAULT '[]'
      )`,
      `CREATE INDEX stop_requests_by_run ON stop_requests (run_id, status)`,
      `CREATE TABLE verification_receipts (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        artifact_digest TEXT NOT NULL,
        command_json TEXT NOT NULL,
        exit_code INTEGER,
        timed_out INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        output_digest TEXT NOT NULL,
        log_path TEXT NOT NULL,
        started_at INTEGER NOT NULL
      )`,
      `CREATE INDEX receipts_by_task ON verification_receipts (run_id, task_id, artifact_digest)`,
      `INSERT INTO counters (name, value) VALUES ('coordinator_epoch', 0), ('stop', 0)`,
    ],
  },
  {
    version: 3,
    name: 'git isolation: a worktree per attempt, integrations',
    statements: [
      `ALTER TABLE tasks ADD COLUMN isolation TEXT`,
      // Decided once per run, at its first dispatch: the mode, and for worktree the repository, target branch and base.
      `CREATE TABLE run_isolation (
        run_id TEXT PRIMARY KEY,
        mode TEXT NOT NULL,
        strategy TEXT NOT NULL,
        repo_root TEXT,
        target_branch TEXT,
        base_commit TEXT,
        note TEXT,
        decided_at INTEGER NOT NULL
      )`,
      // One row per isolated attempt: its worktree, and what became of its work (docs/isolation.md).
      `CREATE TABLE worktrees (
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        path TEXT NOT NULL,
        branch TEXT NOT NULL,
        base_commit TEXT NOT NULL,
        status TEXT NOT NULL,
        strategy TEXT NOT NULL,
        source_head TEXT,
        changed_files_json TEXT,
        target_before TEXT,
        target_after TEXT,
        conflict_files_json TEXT,
        created_at INTEGER NOT NULL,
        committed_at INTEGER,
        integrated_at INTEGER,
        removed_at INTEGER,
        PRIMARY KEY (run_id, delegation_id)
      )`,
      `CREATE INDEX worktrees_by_status ON worktrees (run_id, status)`,
    ],
  },
  {
    version: 4,
    name: 'agents: permission profiles, prompt provenance, usage per attempt',
    statements: [
      // The task's permission profile as its plan gave it (JSON: { profile, allowTools?, denyTools? }).
      `ALTER TABLE tasks ADD COLUMN permissions_json TEXT`,
      // The exact prompt an attempt got: its digest, its length, and whether it was cut to fit.
      `ALTER TABLE delegations ADD COLUMN prompt_sha256 TEXT`,
      `ALTER TABLE delegations ADD COLUMN prompt_bytes INTEGER`,
      `ALTER TABLE delegations ADD COLUMN prompt_truncated INTEGER`,
      // What an agent preset's attempt did and cost (docs/workers.md, "Tokens and cost").
      `CREATE TABLE agent_usage (
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        session_id TEXT,
        model TEXT,
        permissions_json TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL,
        cost_source TEXT,
        turns INTEGER NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        failed_tool_calls INTEGER NOT NULL DEFAULT 0,
        activity TEXT,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, delegation_id)
      )`,
      `CREATE INDEX agent_usage_by_task ON agent_usage (run_id, task_id)`,
    ],
  },
  {
    version: 5,
    name: 'a result is its content and its findings: the same artifact may be ingested again once the workspace changed',
    // SQLite drops a UNIQUE constraint only by rebuilding the table. The rows keep their ids and order.
    statements: [
      `ALTER TABLE ingestions RENAME TO ingestions_before_5`,
      `CREATE TABLE ingestions (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        artifact_path TEXT NOT NULL,
        digest TEXT NOT NULL,
        accepted INTEGER NOT NULL,
        result_status TEXT,
        issues_json TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
      `INSERT INTO ingestions (id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at)
        SELECT id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at
        FROM ingestions_before_5 ORDER BY rowid`,
      `DROP TABLE ingestions_before_5`,
      `CREATE INDEX ingestions_by_result ON ingestions (run_id, delegation_id, digest)`,
    ],
    // PostgreSQL drops the constraint in place (the name it gave the UNIQUE of migration 1).
    postgres: [
      `ALTER TABLE ingestions DROP CONSTRAINT ingestions_run_id_delegation_id_digest_key`,
      `CREATE INDEX ingestions_by_result ON ingestions (run_id, delegation_id, digest)`,
    ],
  },
  {
    version: 6,
    name: 'what an attempt changed and how its worker lives: shared-tree snapshots, own beats, process start',
    statements: [
      // The last heartbeat the worker sent itself (its token), apart from the coordinator's renewals.
      `ALTER TABLE runtimes ADD COLUMN worker_beat_at INTEGER`,
      // When the worker's process was first recorded (started, or found by its marker).
      `ALTER TABLE runtimes ADD COLUMN process_started_at INTEGER`,
      // A shared-tree attempt's working tree before and after its worker: commits no ref points at (docs/workers.md).
      `CREATE TABLE tree_snapshots (
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        repo_root TEXT NOT NULL,
        before_commit TEXT NOT NULL,
        before_at INTEGER NOT NULL,
        after_commit TEXT,
        after_at INTEGER,
        PRIMARY KEY (run_id, delegation_id)
      )`,
    ],
  },
  {
    // Numbered as assigned to this change (5–9 went to branches merged in any order).
    version: 7,
    name: 'fenced side effects: verify processes, the coordinator chain',
    statements: [
      // One row per verify command started: its process, so that a successor or a stop finds it (docs/reliability.md).
      `CREATE TABLE verify_processes (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        command_json TEXT NOT NULL,
        marker TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start TEXT,
        host TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        end_reason TEXT
      )`,
      `CREATE INDEX verify_processes_open ON verify_processes (run_id, delegation_id, ended_at)`,
      // Since when coordinators have followed each other without a clean release: what a successor looks over.
      `ALTER TABLE coordinator_leases ADD COLUMN chain_since INTEGER`,
    ],
  },
  {
    // Numbered as assigned to this change (issue 15, item 8).
    version: 8,
    name: 'the target branch: the head Baton expects it at',
    statements: [
      // What Baton last saw or made the target branch: the run's base, then each integration's result, or the head a
      // person accepted at a target_moved gate. Integration moves the branch only from a descendant of it.
      `ALTER TABLE run_isolation ADD COLUMN expected_head TEXT`,
      `UPDATE run_isolation SET expected_head = COALESCE(
         (SELECT w.target_after FROM worktrees w WHERE w.run_id = run_isolation.run_id AND w.status = 'integrated'
            AND w.target_after IS NOT NULL ORDER BY w.integrated_at DESC, w.delegation_id DESC LIMIT 1),
         base_commit)`,
    ],
  },
  {
    // Numbered as assigned to this change (issue 17: a result's artifact travels as content).
    version: 9,
    name: 'result artifacts as content: one row per distinct content, by digest',
    statements: [
      // Content-addressed: an ingestion names its artifact by `digest`, so the same bytes ingested again (a retry, a
      // re-ingest, another run) are stored once. UTF-8 text without NUL, at most the run's maxArtifactBytes
      // (docs/team-artifacts.md). Ingestions from before this migration have no row here: readers use the path.
      `CREATE TABLE artifacts (
        digest TEXT PRIMARY KEY,
        bytes INTEGER NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 10,
    name: 'verify commands guarded by a lease watchdog',
    statements: [
      // 1 when a watchdog beside the command ends it once the coordinator that started it lost the run (a shared
      // store: docs/team.md, "Failover"): a successor on another host may then take it as ended after the lease
      // and the watchdog's time. NULL: nothing on its host ends it but a look from that host.
      `ALTER TABLE verify_processes ADD COLUMN watched INTEGER`,
    ],
  },
  {
    // Numbered as assigned to this change (issue 27, the merge queue).
    version: 11,
    name: 'verification receipts on a merged tree',
    statements: [
      // The git tree id of the merged tree (the target plus a passed task) a command ran on before the target moved;
      // NULL for a command run in the attempt's own folder. A command that passed on a tree is not run on it again.
      `ALTER TABLE verification_receipts ADD COLUMN tree_digest TEXT`,
    ],
  },
  {
    // Numbered as assigned to this change (issue 24: a person steers agents — follow-up messages).
    version: 12,
    name: 'follow-up messages from a person to a task',
    statements: [
      // One row per message (`baton message`, docs/agents.md "Follow-up messages"): who sent what to which task, the
      // running attempt it ended (if any), and the attempt that carried it to the agent (NULL until one is claimed).
      `CREATE TABLE follow_ups (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        message TEXT NOT NULL,
        sent_by TEXT NOT NULL,
        sent_at INTEGER NOT NULL,
        interrupted_delegation_id TEXT,
        delegation_id TEXT
      )`,
      `CREATE INDEX follow_ups_by_task ON follow_ups (run_id, task_id)`,
      // 1 on an attempt that carried a follow-up no attempt carried before: a follow-up, not a failure retry.
      `ALTER TABLE delegations ADD COLUMN follow_up INTEGER`,
      // Follow-up ids are M-<n>, store-wide like gate and stop ids.
      `INSERT INTO counters (name, value) VALUES ('follow_up', 0)`,
    ],
  },
  {
    version: 13,
    name: "a secret between a coordinator and its worker's lease watchdog",
    statements: [
      // The key that signs the lease deadlines a coordinator tells a worker's watchdog (effects/processes/
      // leaseWatchdog.ts; issue 25, item 4.3): a worker can rewrite the deadline file, not sign it. Set at the launch
      // on a shared store — whose workers get no store credential — so that a successor can sign for an adopted worker.
      `ALTER TABLE runtimes ADD COLUMN watchdog_key TEXT`,
    ],
  },
  {
    version: 14,
    name: "a cancel's stop told apart from a person's stop",
    statements: [
      // 'cancel' on the immediate stop a cancel starts with (usecases/cancelRun.ts): a coordinator that pauses on it
      // is not waiting for a person (`baton start` exits 0, not 8: docs/cli.md, "Exit codes").
      `ALTER TABLE stop_requests ADD COLUMN purpose TEXT`,
    ],
  },
  {
    version: 15,
    name: "a worker's PID namespace",
    statements: [
      // The PID namespace a worker was started in (`pid:[…]`, effects/processes/pidNamespace.ts): a token presented
      // from inside it is its worker's (domain/process.ts, `runsUnderWorker`), since the namespace has a /proc of its
      // own where the worker's pid above it does not show.
      `ALTER TABLE runtimes ADD COLUMN pid_namespace TEXT`,
    ],
  },
  {
    version: 16,
    name: 'finished work handed in by a lease watchdog',
    statements: [
      // What a worker left when it ended, handed to a shared store by its lease watchdog (usecases/handIn.ts; issue
      // 26): a coordinator on another host settles the attempt from it instead of running the task again. One row per
      // runtime, written once, only by the holder of the attempt's watchdog key. Files as base64 (NULL: none).
      `CREATE TABLE hand_ins (
        runtime_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        host TEXT NOT NULL,
        exit_code INTEGER,
        signal TEXT,
        ended_at INTEGER NOT NULL,
        artifact TEXT,
        log_tail TEXT,
        handed_at INTEGER NOT NULL
      )`,
      `CREATE INDEX hand_ins_by_run ON hand_ins (run_id)`,
    ],
  },
  {
    version: 17,
    name: 'coordinators that join a run',
    statements: [
      // Coordinators that execute a run beside the one that holds its lease (docs/team.md, "Every machine works";
      // issue 26): each with an epoch of its own (from the coordinator_epoch counter, so never one a lease holds) that
      // fences its writes while the row lives. `left_at`: it left, or lapsed and another coordinator retired it.
      `CREATE TABLE run_drivers (
        run_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        holder TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start TEXT,
        joined_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        left_at INTEGER,
        PRIMARY KEY (run_id, epoch)
      )`,
    ],
  },
  {
    version: 18,
    name: "a write scoped to a run touches that run's rows only",
    // Nothing on the file store, whose transactions all run alone. On PostgreSQL, a transaction scoped to a run
    // (store/port.ts, WriteScope; it sets `baton.write_scope`) runs beside other runs' writers, which is safe only if
    // it changes nothing of theirs: each table of a run's rows refuses, in the writing statement, a row of another run.
    statements: [],
    postgres: [
      REFUSE_OTHER_RUN,
      ...Object.entries(RUN_TABLES).flatMap(([table, column]) => writeScopeGuard(table, column)),
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
