import { launchChromium } from '../helpers/browser.ts';

// `npx tsx tests/src/browser/check-chromium.ts`: exits 0 when the browser tests can launch
// headless Chromium and render a page (.ci/run installs Debian's chromium when not).
const launched = await launchChromium();
if (!launched.browser) process.exit(1);
const page = await launched.browser.newPage();
await page.setContent('<p id="ok">rendered</p>');
const text = await page.locator('#ok').innerText();
console.log(`chromium ${launched.browser.version()}: ${text}`);
await launched.browser.close();
process.exit(text === 'rendered' ? 0 : 1);
