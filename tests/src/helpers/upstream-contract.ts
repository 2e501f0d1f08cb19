import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { type Deviation, UPSTREAM_DEVIATIONS } from './upstream-deviations.ts';

/**
 * Checks REST responses against upstream's published OpenAPI document (`@workos/openapi-spec`):
 * a response of an operation that upstream also has (same method and path template) must match
 * upstream's schema for its status, so a field upstream declares optional may be absent but not
 * `null`. Error responses (4xx/5xx) must also have CONTRACT.md's shape. Only the deviations
 * listed in upstream-deviations.ts are allowed. Compiled once per worker, lazily.
 */

const DOC_URI = 'https://upstream.workos.invalid/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Operation {
  id: string;
  method: string;
  template: string;
  segments: string[];
  /** Literal segments (no `{param}`): the most literal template wins a tie. */
  literals: number;
  pointer: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** CONTRACT.md's one error shape, for every 4xx and 5xx. */
const CONTRACT_ERROR = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', minLength: 1 },
    message: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['code', 'message'],
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

interface Contract {
  operations: Operation[];
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
  contractError: ValidateFunction;
}

/** Kept on globalThis: a worker re-runs the setup file for every test file, and parses once. */
const CONTRACT = Symbol.for('atrium.upstreamContract');
const cache = globalThis as unknown as Record<symbol, Contract | undefined>;

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function load(): Contract {
  const loaded = cache[CONTRACT];
  if (loaded) return loaded;
  const file = createRequire(import.meta.url).resolve('@workos/openapi-spec/spec');
  const doc = parse(readFileSync(file, 'utf8')) as { paths: Record<string, Record<string, Operation['responses']>> };
  tagOneOfs(doc);
  // The whole document is one schema resource, so its `#/components/schemas/…` refs resolve in it.
  // OpenAPI's own keywords (example, xml) are annotations here: strict off.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, discriminator: true });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_URI);
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as unknown as { operationId?: string; responses?: Operation['responses'] } | undefined;
      if (!op?.responses) continue;
      const segments = template.split('/').slice(1);
      operations.push({
        id: op.operationId ?? `${method} ${template}`,
        method: method.toUpperCase(),
        template,
        segments,
        literals: segments.filter((s) => !s.startsWith('{')).length,
        pointer: `/paths/${escapePointer(template)}/${method}/responses`,
        responses: op.responses,
      });
    }
  }
  const contract = { operations, ajv, compiled: new Map(), contractError: ajv.compile(CONTRACT_ERROR) };
  cache[CONTRACT] = contract;
  return contract;
}

type Node = Record<string, unknown>;

/**
 * Gives each `oneOf` whose branches all require one property with a distinct `const` (an event's
 * `event`, an error's `code`) a `discriminator` on it, so a body is checked against its own
 * branch and a mismatch names the field, not "must match exactly one schema in oneOf".
 */
function tagOneOfs(doc: Node): void {
  const resolve = (node: unknown): Node | undefined => {
    const ref = (node as Node | undefined)?.$ref;
    if (typeof ref !== 'string') return node as Node | undefined;
    return ref
      .slice(2)
      .split('/')
      .reduce<Node | undefined>((here, key) => here?.[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Node, doc);
  };
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const here = node as Node;
    if (Array.isArray(here.oneOf) && here.discriminator === undefined) {
      const branches = here.oneOf.map(resolve);
      const first = branches[0]?.properties as Node | undefined;
      const tag = Object.keys(first ?? {}).find((name) => {
        const consts = branches.map((b) => ((b?.properties as Node | undefined)?.[name] as Node | undefined)?.const);
        return (
          consts.every((c) => typeof c === 'string') &&
          new Set(consts).size === consts.length &&
          branches.every((b) => Array.isArray(b?.required) && b.required.includes(name))
        );
      });
      if (tag) here.discriminator = { propertyName: tag };
    }
    for (const value of Object.values(here)) visit(value);
  };
  visit(doc);
}

/** Upstream's operation for a request, by method and path template; undefined when upstream has none. */
export function upstreamOperation(method: string, pathname: string): Operation | undefined {
  const segments = pathname.split('/').slice(1);
  let best: Operation | undefined;
  for (const op of load().operations) {
    if (op.method !== method || op.segments.length !== segments.length) continue;
    const fits = op.segments.every((s, i) => (s.startsWith('{') ? segments[i] !== '' : s === segments[i]));
    if (fits && (!best || op.literals > best.literals)) best = op;
  }
  return best;
}

function validatorFor(op: Operation, status: string): ValidateFunction | undefined {
  const { ajv, compiled } = load();
  const key = `${op.pointer}/${status}`;
  let validate = compiled.get(key);
  if (!validate) {
    const schema = op.responses[status]?.content?.['application/json']?.schema;
    if (schema === undefined) return undefined;
    validate = ajv.compile({
      $ref: `${DOC_URI}#${op.pointer}/${escapePointer(status)}/content/application~1json/schema`,
    });
    compiled.set(key, validate);
  }
  return validate;
}

export interface Finding {
  /** Where in the body, as a JSON pointer with array indices as `*`; '' for the body itself. */
  at: string;
  keyword: string;
  message: string;
  /** `upstream` for upstream's schema, `contract` for CONTRACT.md's error shape. */
  against: 'upstream' | 'contract' | 'status';
}

function valueAt(body: unknown, pointer: string): unknown {
  let here: unknown = body;
  for (const part of pointer.split('/').slice(1)) {
    if (here === null || typeof here !== 'object') return undefined;
    here = (here as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return here;
}

function findings(errors: ErrorObject[] | null | undefined, body: unknown, against: Finding['against']): Finding[] {
  // Under a failed oneOf/anyOf, each branch's own failures are noise: keep the composite's.
  const composites = (errors ?? []).filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  const kept = (errors ?? []).filter(
    (e) => !composites.some((c) => c !== e && e.schemaPath.startsWith(`${c.schemaPath}/`)),
  );
  return kept.map((error) => {
    const missing = error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : '';
    const extra = error.keyword === 'additionalProperties' ? `/${String(error.params.additionalProperty)}` : '';
    const at = `${error.instancePath}${missing}${extra}`;
    const got = error.keyword === 'required' ? 'absent' : JSON.stringify(valueAt(body, error.instancePath));
    const expected = error.keyword === 'const' ? ` ${JSON.stringify(error.params.allowedValue)}` : '';
    return {
      at: at.replace(/\/\d+(?=\/|$)/g, '/*'),
      keyword: error.keyword,
      message: `${at || '(body)'} ${error.message}${expected} (got ${(got ?? 'undefined').slice(0, 120)})`,
      against,
    };
  });
}

function allowedBy(deviation: Deviation, op: Operation, status: number, finding: Finding, body: unknown): boolean {
  if (deviation.code !== undefined && (body as { code?: unknown } | undefined)?.code !== deviation.code) return false;
  const [method, template] = deviation.operation.split(' ');
  if (deviation.operation !== '*' && (method !== op.method || (template !== '*' && template !== op.template))) {
    return false;
  }
  if (deviation.status !== undefined) {
    const s = String(status);
    const wanted = String(deviation.status);
    if (wanted.endsWith('xx') ? s[0] !== wanted[0] : s !== wanted) return false;
  }
  if (deviation.against !== undefined && deviation.against !== finding.against) return false;
  if (deviation.keyword !== undefined && deviation.keyword !== finding.keyword) return false;
  if (deviation.at !== undefined) {
    const at = deviation.at;
    if (at.endsWith('/**') ? !`${finding.at}/`.startsWith(at.slice(0, -2)) : finding.at !== at) return false;
  }
  return true;
}

/**
 * What is wrong with one response of `method pathname`, as messages naming the operation, the
 * status, the place in the body and what upstream expects; [] when it conforms (or upstream has
 * no such operation, or every finding is an allowed deviation).
 */
export function checkUpstreamResponse(response: {
  method: string;
  pathname: string;
  status: number;
  contentType: string | null;
  text: string;
}): string[] {
  const op = upstreamOperation(response.method, response.pathname);
  if (!op) return [];
  const { status } = response;
  const declared = op.responses[String(status)];
  const found: Finding[] = [];
  let body: unknown;
  const isJson = /^application\/json\b/i.test(response.contentType ?? '');
  if (isJson && response.text !== '') {
    try {
      body = JSON.parse(response.text);
    } catch {
      found.push({ at: '', keyword: 'json', message: 'body is not valid JSON', against: 'contract' });
    }
  }
  if (!declared && status < 400) {
    found.push({
      at: '',
      keyword: 'status',
      message: `upstream declares no ${status} (it declares ${Object.keys(op.responses).join(', ')})`,
      against: 'status',
    });
  }
  const validate = validatorFor(op, String(status));
  if (validate && body === undefined && found.length === 0) {
    found.push({
      at: '',
      keyword: 'json',
      message: 'upstream declares a JSON body; none was sent',
      against: 'upstream',
    });
  }
  if (validate && body !== undefined && !validate(body)) found.push(...findings(validate.errors, body, 'upstream'));
  if (status >= 400) {
    const { contractError } = load();
    if (body === undefined) {
      found.push({ at: '', keyword: 'json', message: 'an error without a JSON body', against: 'contract' });
    } else if (!contractError(body)) found.push(...findings(contractError.errors, body, 'contract'));
  }
  const kept = found.filter((f) => !UPSTREAM_DEVIATIONS.some((d) => allowedBy(d, op, status, f, body)));
  return kept.map(
    (f) =>
      `${response.method} ${response.pathname} answered ${status}; upstream's ${op.method} ${op.template} (${op.id}), ` +
      `${{ contract: "CONTRACT.md's error shape", upstream: 'upstream schema', status: 'status' }[f.against]}: ${f.message}`,
  );
}

// ---------------------------------------------------------------------------------------------
// The fetch guard: every response a test receives through fetch (HttpClient, the official SDK,
// raw fetch calls, on any Atrium server of the test: in-process or spawned) is checked.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const INSTALLED = Symbol.for('atrium.upstreamGuard');

interface GuardState {
  violations: string[];
  pending: Set<Promise<void>>;
}

function state(): GuardState {
  const g = globalThis as unknown as Record<symbol, GuardState | undefined>;
  let s = g[INSTALLED];
  if (!s) {
    s = { violations: [], pending: new Set() };
    g[INSTALLED] = s;
    const original = globalThis.fetch;
    const guarded = state;
    globalThis.fetch = async function guardedFetch(input: string | URL | Request, init?: RequestInit) {
      const response = await original(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      if (!LOOPBACK.has(url.hostname) || !upstreamOperation(method, url.pathname)) return response;
      const tracked = guarded().pending;
      const check = response
        .clone()
        .text()
        .then(
          (text) => {
            const problems = checkUpstreamResponse({
              method,
              pathname: url.pathname,
              status: response.status,
              contentType: response.headers.get('content-type'),
              text,
            });
            guarded().violations.push(...problems);
          },
          () => {
            // The caller aborted the body: nothing arrived to check.
          },
        )
        .finally(() => tracked.delete(check));
      tracked.add(check);
      return response;
    } as typeof fetch;
  }
  return s;
}

/** Wraps `globalThis.fetch` once per worker (idempotent). */
export function installUpstreamGuard(): void {
  state();
}

/** The violations seen since the last call (after the checks still running have finished). */
export async function takeUpstreamViolations(): Promise<string[]> {
  const s = state();
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref());
  await Promise.race([Promise.allSettled([...s.pending]), timeout]);
  return s.violations.splice(0);
}
