export * from './environments.ts';
export * from './organizations.ts';
export * from './relations.ts';
