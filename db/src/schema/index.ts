export * from './environments.ts';
export * from './events.ts';
export * from './idempotency.ts';
export * from './organizations.ts';
export * from './relations.ts';
export * from './users.ts';
