// snodo proxy's admin page in a real headless Chromium (Debian's, driven by
// playwright-core): a wrong token is refused, the right one lists the
// backends with their states, and a pinned change is approved from the page.
//
//   node admin_page.mjs BASE_URL TOKEN SCREENSHOT_DIR
//
// Prints `admin-page: N passed, M failed` and exits 1 on any failure.
import { chromium } from 'playwright-core';

const [base, token, shots] = process.argv.slice(2);
let passed = 0;
let failed = 0;
const check = (name, ok, detail) => {
  if (ok) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${detail}`);
  }
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 600 } });
  const answer = await page.goto(`${base}/admin`);
  check('the page is served', answer.ok(), answer.status());
  const csp = answer.headers()['content-security-policy'] || '';
  check('the page loads nothing from elsewhere', csp.includes("default-src 'none'") && csp.includes("connect-src 'self'"), csp);

  await page.fill('#token', 'not-the-admin-token');
  await page.click('button[type=submit]');
  await page.waitForSelector('#status.error', { timeout: 10000 });
  const refused = await page.textContent('#status');
  check('a wrong token is refused', refused.includes('401'), refused);

  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForSelector('tr[data-backend=demo]', { timeout: 10000 });
  const text = async (id, column) =>
    (await page.textContent(`tr[data-backend=${id}] td:nth-child(${column})`)).trim();
  check('the demo backend is up', (await text('demo', 2)) === 'up', await text('demo', 2));
  check('its revision is shown', (await text('demo', 3)).length > 0, await text('demo', 3));
  check('the withdrawn tool is not counted', (await text('demo', 4)) === '6', await text('demo', 4));
  check('the pinned change is listed', (await text('demo', 9)).includes('tool:demo.add'), await text('demo', 9));
  check('the unreachable backend is down', (await text('gone', 2)) === 'down', await text('gone', 2));
  check('its last error is shown', (await text('gone', 10)) !== '-', await text('gone', 10));
  await page.screenshot({ path: `${shots}/admin-before.png`, fullPage: true });

  await page.click('button.approve[data-key="tool:demo.add"]');
  await page.waitForFunction(
    () => document.querySelector('tr[data-backend=demo] td:nth-child(4)')?.textContent.trim() === '7',
    null,
    { timeout: 15000 },
  );
  check('approved from the page, the tool is served again', (await text('demo', 4)) === '7', await text('demo', 4));
  check('nothing waits for approval', (await text('demo', 9)) === '-', await text('demo', 9));
  await page.screenshot({ path: `${shots}/admin-after.png`, fullPage: true });
} catch (e) {
  failed += 1;
  console.log(`FAIL the page: ${e}`);
} finally {
  await browser.close();
}
console.log(`admin-page: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
