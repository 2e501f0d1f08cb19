import { appRouter, type Meta, procedureEntries } from '@atrium/routers';
import type { SchemaObject } from 'openapi3-ts/oas31';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';

const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', example: 'entity_not_found' },
    message: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'code', 'message'],
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** The procedures served over REST, with their metadata (read through the tRPC adapter). */
function restProcedures() {
  return procedureEntries(appRouter).flatMap((entry) => {
    const openapi = entry.meta?.openapi;
    return openapi ? [{ meta: entry.meta as Meta, method: openapi.method, path: openapi.path }] : [];
  });
}

/** The path templates of the DELETE operations that read a JSON body (`meta.bodyOnDelete`). */
function deleteBodyTemplates(): Set<string> {
  const templates = new Set<string>();
  for (const { meta, method, path } of restProcedures()) {
    if (meta.bodyOnDelete && method === 'DELETE') templates.add(path);
  }
  return templates;
}

type OperationObject = NonNullable<NonNullable<OpenAPIObject['paths']>[string]['delete']>;

/** A `bodyOnDelete` operation's input is its JSON body: the generator's query parameters become one. */
function queryToBody(operation: OperationObject): void {
  type Parameter = { name: string; in: string; required?: boolean; schema?: Record<string, unknown> };
  const all = (operation.parameters ?? []) as Parameter[];
  const query = all.filter((param) => param.in === 'query');
  operation.parameters = operation.parameters?.filter((param) => (param as Parameter).in !== 'query');
  const properties = Object.fromEntries(query.map((param) => [param.name, param.schema ?? {}]));
  const required = query.filter((param) => param.required).map((param) => param.name);
  operation.requestBody = {
    required: required.length > 0,
    content: { 'application/json': { schema: { type: 'object', properties, required } } },
  };
}

/**
 * The OpenAPI 3.1 document of the REST surface, generated from the routers once at start-up
 * and corrected to what the facade really answers: success statuses, the contract's error
 * body, bearer authentication, and the JSON body of a `bodyOnDelete` DELETE.
 */
export function buildOpenApiDocument(baseUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Atrium',
    version: '0.1.0',
    description:
      'The organization layer of a B2B SaaS, at the WorkOS REST paths. Authenticate with `Authorization: Bearer sk_test_…`.',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });
  const byOperation = new Map<string, number>();
  for (const { meta, method, path } of restProcedures()) {
    if (meta.successStatus) byOperation.set(`${method.toLowerCase()} ${path}`, meta.successStatus);
  }
  const deletesWithBody = deleteBodyTemplates();
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, Error: ERROR_SCHEMA } };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const operation = item[method];
      if (!operation) continue;
      if (method === 'delete' && deletesWithBody.has(path)) queryToBody(operation);
      const status = byOperation.get(`${method} ${path}`);
      const responses = operation.responses ?? {};
      if (status && status !== 200 && responses['200']) {
        responses[String(status)] = status === 204 ? { description: 'No content' } : responses['200'];
        delete responses['200'];
      }
      for (const [code, response] of Object.entries(responses)) {
        if (Number(code) >= 400) {
          responses[code] = {
            description: (response as { description?: string }).description ?? 'Error',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          };
        }
      }
      operation.responses = responses;
    }
  }
  return doc;
}
