import { z } from 'zod';

export const Jwk = z.object({
  alg: z.string(),
  kty: z.string(),
  use: z.string(),
  x5c: z.array(z.string()),
  n: z.string(),
  e: z.string(),
  kid: z.string(),
  'x5t#S256': z.string(),
});

export const Jwks = z.object({ keys: z.array(Jwk) }).meta({ id: 'JsonWebKeySet' });
export type Jwks = z.infer<typeof Jwks>;

export const JwksInput = z.object({ clientId: z.string().min(1).max(128) });
