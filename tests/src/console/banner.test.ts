import { banner, loadConfig } from '@atrium/server';
import { describe, expect, it } from 'vitest';

const DATA_DIR = '/tmp/atrium-banner-test';
const FIRST_RUN = {
  adminToken: `atrium_admin_${'A'.repeat(40)}`,
  environment: { environment_id: 'env_1', client_id: 'client_1', api_key: `sk_test_${'K'.repeat(40)}` },
};

describe('the start banner', () => {
  it('names the console URL, where the admin token signs in', () => {
    const config = loadConfig({ ATRIUM_DATA_DIR: DATA_DIR });
    const printed = banner(config, 'http://127.0.0.1:8080', {});
    expect(printed).toContain('Operator console: http://127.0.0.1:8080/console (sign in with the admin token)');
  });

  it('prints the two exports the CLI reads, the admin token only on the first start', () => {
    const config = loadConfig({ ATRIUM_DATA_DIR: DATA_DIR, PORT: '0' });
    const first = banner(config, 'http://127.0.0.1:43210', FIRST_RUN);
    expect(first).toContain('Atrium is listening on http://127.0.0.1:43210 (storage: embedded PGlite in');
    expect(first).toContain('  export ATRIUM_URL=http://127.0.0.1:43210\n');
    expect(first).toContain(`  export ATRIUM_ADMIN_TOKEN=${FIRST_RUN.adminToken}\n`);
    expect(first).toContain(`  export WORKOS_API_KEY=${FIRST_RUN.environment.api_key}\n`);
    expect(first).not.toContain('Public URL');

    const later = banner(config, 'http://127.0.0.1:43210', {});
    expect(later).toContain('  export ATRIUM_URL=http://127.0.0.1:43210\n');
    expect(later).toContain('(for ATRIUM_ADMIN_TOKEN, the admin token the first start printed)');
    expect(later).not.toMatch(/ATRIUM_ADMIN_TOKEN=|WORKOS_API_KEY=/);
  });

  it('names where it listens and the public URL apart when ATRIUM_PUBLIC_URL differs, commands on the public URL', () => {
    const config = loadConfig({
      ATRIUM_DATA_DIR: DATA_DIR,
      PORT: '8080',
      ATRIUM_PUBLIC_URL: 'https://atrium.example.com/',
    });
    const printed = banner(config, 'http://127.0.0.1:8080', FIRST_RUN);
    expect(printed.split('\n').slice(0, 2)).toEqual([
      `Atrium is listening on http://127.0.0.1:8080 (storage: embedded PGlite in ${DATA_DIR})`,
      'Public URL (ATRIUM_PUBLIC_URL): https://atrium.example.com',
    ]);
    expect(printed).toContain('  export ATRIUM_URL=https://atrium.example.com\n');
    expect(printed).toContain('curl -s https://atrium.example.com/organizations');
    expect(printed).toContain('Operator console: https://atrium.example.com/console');
  });
});
