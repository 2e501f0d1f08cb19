import postgres from 'postgres';

/** A statement a recording client sent, with its parameters (and `stamp`'s value when it was sent). */
export type Sent = { sql: string; params: unknown[]; at?: number };

/**
 * A one-connection client planned the way openDb plans (prepared, generic plans) that records
 * every statement it sends into `sent`, each stamped by `stamp` when one is given.
 */
export function recordingClient(databaseUrl: string, sent: Sent[], stamp?: () => number) {
  return postgres(databaseUrl, {
    max: 1,
    prepare: true,
    onnotice: () => {},
    connection: { plan_cache_mode: 'force_generic_plan' },
    debug: (_connection, query, params) => sent.push({ sql: query, params: params as unknown[], at: stamp?.() }),
  });
}

/** A SQL literal for a captured parameter, for `EXECUTE name(…)`. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return literal(`{${value.map((v) => `"${String(v).replaceAll('"', '\\"')}"`).join(',')}}`);
  if (value instanceof Date) return literal(value.toISOString());
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** A PostgreSQL `EXPLAIN (FORMAT JSON)` plan node, as far as the tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of an `EXPLAIN (FORMAT JSON)` answer (the rows a driver returns), depth first. */
export function planNodes(explained: unknown): PlanNode[] {
  const rows = (Array.isArray(explained) ? explained : (explained as { rows: unknown[] }).rows) as Record<
    string,
    unknown
  >[];
  const root = rows[0]?.['QUERY PLAN'] as { Plan: PlanNode }[];
  const nodes: PlanNode[] = [];
  const visit = (node: PlanNode) => {
    nodes.push(node);
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(root[0]!.Plan);
  return nodes;
}

/** What reads a table in a plan: the node types and index names of its scans. */
export function scansOf(nodes: PlanNode[], table: string): string[] {
  return nodes
    .filter((n) => n['Relation Name'] === table)
    .map((n) => (n['Index Name'] ? `${n['Node Type']} ${n['Index Name']}` : n['Node Type']));
}
