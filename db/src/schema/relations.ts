import { relations } from 'drizzle-orm';
import { organizationDomains, organizations } from './organizations.ts';

export const organizationsRelations = relations(organizations, ({ many }) => ({
  domains: many(organizationDomains),
}));

export const organizationDomainsRelations = relations(organizationDomains, ({ one }) => ({
  organization: one(organizations, {
    fields: [organizationDomains.organizationId],
    references: [organizations.id],
  }),
}));
