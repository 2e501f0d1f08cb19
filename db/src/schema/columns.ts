import { customType, timestamp } from 'drizzle-orm/pg-core';

/** Ids are compared byte-wise so that id order is ULID order on every locale. */
export const idText = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'text COLLATE "C"';
  },
});

/** ISO 8601 UTC with millisecond precision, as the contract asks. */
export const ts = (name: string) => timestamp(name, { precision: 3, withTimezone: true, mode: 'date' });

export const timestamps = {
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
};
