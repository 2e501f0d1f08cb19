import type { TestEnvironment } from './world.ts';

let counter = 0;

/** A unique e-mail address for a test user. */
export function uniqueEmail(label = 'user'): string {
  counter += 1;
  return `${label}-${process.pid}-${counter}-${Date.now().toString(36)}@example.com`;
}

/** An organization, a user and the user's membership of it, made through the API. */
export async function newMember(env: TestEnvironment, organizationId?: string) {
  const organization_id = organizationId ?? (await env.caller.organizations.create({ name: 'Acme' })).id;
  const user = await env.caller.users.create({ email: uniqueEmail() });
  const membership = await env.caller.organizationMemberships.create({ user_id: user.id, organization_id });
  return { organizationId: organization_id, user, membership };
}

/** Runs a call that must fail and returns the contract's status and code of its error. */
export async function failure(call: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { status?: number; apiCode?: string; cause?: { status?: number; apiCode?: string } };
    const source = e.status !== undefined ? e : (e.cause ?? {});
    return { status: source.status ?? 0, code: source.apiCode ?? '' };
  }
  throw new Error('expected the call to fail');
}
