import { afterAll, afterEach } from 'vitest';
import { installUpstreamGuard, takeUpstreamViolations } from './helpers/upstream-contract.ts';

/**
 * Every test file: each REST response a test receives through fetch is checked against
 * upstream's OpenAPI document (helpers/upstream-contract.ts), and a test that received one that
 * does not conform fails here, with the operation, status, place in the body and what was expected.
 */
installUpstreamGuard();

async function failOnViolations() {
  const violations = await takeUpstreamViolations();
  if (violations.length === 0) return;
  const shown = violations.slice(0, 20).map((v) => `  - ${v}`);
  if (violations.length > 20) shown.push(`  … and ${violations.length - 20} more`);
  throw new Error(
    `Response(s) that do not match upstream's OpenAPI document (allow a deviation on purpose in tests/src/helpers/upstream-deviations.ts):\n${shown.join('\n')}`,
  );
}

afterEach(failOnViolations);
afterAll(failOnViolations);
