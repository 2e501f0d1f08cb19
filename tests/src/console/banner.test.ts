import { banner, loadConfig } from '@atrium/server';
import { describe, expect, it } from 'vitest';

describe('the start banner', () => {
  it('names the console URL, where the admin token signs in', () => {
    const config = loadConfig({ ATRIUM_DATA_DIR: '/tmp/atrium-banner-test' });
    const printed = banner(config, 'http://127.0.0.1:8080', {});
    expect(printed).toContain('Operator console: http://127.0.0.1:8080/console (sign in with the admin token)');
  });
});
