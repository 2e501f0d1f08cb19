export * from './environments.ts';
export * from './events.ts';
export * from './groups.ts';
export * from './organizations.ts';
export * from './relations.ts';
export * from './tokens.ts';
export * from './users.ts';
export * from './webhooks.ts';
