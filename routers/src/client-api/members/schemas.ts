import { z } from 'zod';

/** A free-text field of the users table's operations (an e-mail, a search, a role slug). */
export const Text = z.string().max(1000);
export const RoleSlugs = z.array(z.string().min(1).max(256)).max(20);
