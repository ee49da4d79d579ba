// A person at `cordon serve`'s page, in a real headless Chromium (for tests/serve_browser.rs).
//
//   CORDON_TOKEN=TOKEN CHROMIUM=/usr/bin/chromium-headless-shell \
//     node serve.mjs BASE_URL SHOT_DIR RUN_A RUN_B RUN_C
//
// Three runs wait at their cards, each a write in `out` (a.txt, b.txt, c.txt). The person signs
// in by typing the token, sees the three cards, denies A, approves B, answers C "always", waits
// until the three have ended and checks how each page says they did, then revokes the grant C
// made. Screenshots go to SHOT_DIR. Anything not as expected, and any console message or page
// error at all, fails: a message on stderr and exit 1. On success, a JSON summary on stdout.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const TIMEOUT = 30_000;
const started = Date.now();
const [base, shotDir, ...runs] = process.argv.slice(2);
const token = process.env.CORDON_TOKEN;
const executablePath = process.env.CHROMIUM;
if (!base || !shotDir || runs.length !== 3 || !token || !executablePath) {
  process.stderr.write('usage: CORDON_TOKEN=T CHROMIUM=PATH node serve.mjs BASE_URL SHOT_DIR RUN_A RUN_B RUN_C\n');
  process.exit(2);
}
const [runA, runB, runC] = runs;
mkdirSync(shotDir, { recursive: true });

/** Every console message and page error: any at all fails the run. */
const consoleLog = [];
/** Every page answered with an error status (a person should never meet one here). */
const errorPages = [];
const shots = [];
/** When each step was reached, in ms from the start. */
const steps = [];

function step(name) {
  steps.push([name, Date.now() - started]);
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

async function shot(page, name) {
  step(name);
  const path = join(shotDir, `${String(shots.length + 1).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  shots.push(path);
}

/**
 * Clicks `button`, which posts its form to `action`: the server must answer with a redirect (a
 * refusal fails at once, with what the server said, rather than at the next wait).
 */
async function post(page, button, action) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === action),
    button.click(),
  ]);
  if (response.status() !== 303) {
    const said = await response.text().catch(() => '');
    throw new Error(`POST ${action} was answered ${response.status()}, not a redirect: ${said.trim().slice(0, 2000)}`);
  }
}

async function text(page, selector) {
  return (await page.locator(selector).innerText()).trim();
}

/** Follows the link to run `id` from the home page (the header's "Cordon" link first). */
async function openFromHome(page, list, id) {
  await page.getByRole('link', { name: 'Cordon', exact: true }).click();
  const link = page.locator(`${list} a[href="/runs/${id}"]`);
  await link.waitFor();
  await link.click();
  await page.waitForURL(`${base}/runs/${id}`);
  await page.locator('h1').filter({ hasText: `Run ${id}` }).waitFor();
}

/** Answers the card of run `id`, shown on this page, with the button `button`. */
async function answer(page, id, file, button, expected) {
  const card = page.locator('div#card');
  await card.waitFor();
  check((await text(page, 'b#state')) === 'waiting', `run ${id} is not waiting at its card`);
  const shown = await card.innerText();
  check(shown.includes(file), `run ${id}'s card does not name ${file}:\n${shown}`);
  await post(page, card.getByRole('button', { name: button, exact: true }), `/runs/${id}/answer`);
  // The form's answer sends the person back to the run's page, now answered.
  await page.locator('#answered').waitFor();
  const answered = await text(page, '#answered');
  check(
    answered.includes(`answered ${expected}, by alice`),
    `run ${id}'s page does not say it was answered ${expected} by alice: ${answered}`,
  );
  check((await page.locator('div#card button').count()) === 0, `run ${id}'s card can still be answered`);
}

/** Reloads run `id`'s page until it has ended (within the timeout); how the page says it did. */
async function ended(page, id) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await page.goto(`${base}/runs/${id}`);
    const state = await text(page, 'b#state');
    if (state === 'done' || state === 'failed') {
      const status = (await page.locator('b#status').count()) ? await text(page, 'b#status') : null;
      const result = (await page.locator('code#result').count()) ? await text(page, 'code#result') : null;
      const trace = (await page.locator('#trace').count()) ? await page.locator('#trace').innerText() : '';
      return { state, status, result, trace };
    }
    check(Date.now() < deadline, `run ${id} never ended: it is ${state}`);
    // No script on the page: the person reloads it now and then.
    await page.waitForTimeout(100);
  }
}

let browser;
let page;
try {
  browser = await chromium.launch({
    executablePath,
    timeout: TIMEOUT,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  context.setDefaultTimeout(TIMEOUT);
  context.setDefaultNavigationTimeout(TIMEOUT);
  page = await context.newPage();
  page.on('console', (m) => consoleLog.push(`console.${m.type()}: ${m.text()} (${m.location().url})`));
  page.on('pageerror', (e) => consoleLog.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) errorPages.push(`${r.request().method()} ${r.url()}: ${r.status()}`);
  });

  // Signed out, the home page is the sign-in form; the person types their token.
  await page.goto(`${base}/`);
  const tokenField = page.locator('input[name="token"]');
  await tokenField.waitFor();
  check((await tokenField.getAttribute('type')) === 'password', 'the token field is not a password field');
  await shot(page, 'sign-in');
  await tokenField.click();
  await tokenField.pressSequentially(token);
  await post(page, page.getByRole('button', { name: 'sign in', exact: true }), '/sign-in');

  // Signed in: the three cards wait.
  await page.locator('ul#cards').waitFor();
  check((await text(page, 'header')).includes('signed in as alice'), 'the page does not say who is signed in');
  const listed = await page.locator('ul#cards li a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
  const want = runs.map((id) => `/runs/${id}`);
  check(
    listed.length === 3 && want.every((href) => listed.includes(href)),
    `the home page lists ${JSON.stringify(listed)}, not the cards of ${JSON.stringify(want)}`,
  );
  const cards = await text(page, 'ul#cards');
  check(/fs\.write/i.test(cards), `the listed cards do not name their tool:\n${cards}`);
  check((await page.locator('#no-grants').count()) === 1, 'alice has a grant before she made one');
  await shot(page, 'home-three-cards');

  // A: denied.
  await page.locator(`ul#cards a[href="/runs/${runA}"]`).click();
  await page.waitForURL(`${base}/runs/${runA}`);
  await page.locator('div#card').waitFor();
  await shot(page, 'card-a');
  await answer(page, runA, 'a.txt', 'deny', 'no');
  await shot(page, 'card-a-denied');

  // B: approved, once.
  await openFromHome(page, 'ul#cards', runB);
  await answer(page, runB, 'b.txt', 'approve', 'yes');
  step('b-approved');

  // C: always, which makes a grant.
  await openFromHome(page, 'ul#cards', runC);
  check(
    (await page.locator('div#card').getByRole('button', { name: 'always', exact: true }).count()) === 1,
    'the card of C offers no "always"',
  );
  await answer(page, runC, 'c.txt', 'always', 'always');
  step('c-always');

  // Each run ends, and its page says how.
  const a = await ended(page, runA);
  await shot(page, 'run-a-ended');
  const b = await ended(page, runB);
  await shot(page, 'run-b-ended');
  const c = await ended(page, runC);
  await shot(page, 'run-c-ended');
  check(a.state === 'done', `A ended ${a.state}, not done`);
  check(a.status === 'done', `A's report says ${a.status}, not done`);
  check(/not approved/.test(a.result ?? ''), `A's write was not refused: result ${a.result}`);
  check(/Fs\.write\s+blocked/i.test(a.trace), `A's trace does not show the write blocked:\n${a.trace}`);
  for (const [name, run] of [['B', b], ['C', c]]) {
    check(run.state === 'done' && run.status === 'done', `${name} ended ${run.state} (${run.status}), not done`);
    check(run.result === 'wrote', `${name}'s result is ${run.result}, not wrote`);
  }

  // Home: no card waits, the three runs are done, and C's "always" is one grant, revoked here.
  await page.getByRole('link', { name: 'Cordon', exact: true }).click();
  await page.locator('#grants').waitFor();
  check((await page.locator('#no-cards').count()) === 1, 'a card still waits on the home page');
  const states = await page.locator('#runs td.state').allInnerTexts();
  check(states.length === 3 && states.every((s) => s.trim() === 'done'), `the runs table says ${JSON.stringify(states)}`);
  const grants = page.locator('#grants tr').filter({ has: page.locator('button') });
  check((await grants.count()) === 1, `the home page lists ${await grants.count()} grants, not one`);
  const grant = (await grants.first().innerText()).replace(/\s+/g, ' ').trim();
  await shot(page, 'home-one-grant');
  const revoke = grants.first().getByRole('button', { name: 'revoke', exact: true });
  const action = await grants.first().locator('form').getAttribute('action');
  check(/^\/grants\/\d+\/revoke$/.test(action ?? ''), `the revoke form posts to ${action}`);
  await post(page, revoke, action);
  await page.locator('#no-grants').waitFor();
  check((await page.locator('#grants').count()) === 0, 'the grants table is still shown after the revoke');
  await shot(page, 'home-no-grants');

  await browser.close();
  browser = undefined;
  if (consoleLog.length || errorPages.length) {
    throw new Error(`the browser saw:\n${[...consoleLog, ...errorPages].join('\n')}`);
  }
  const summary = {
    runs: { a, b, c },
    grant,
    screenshots: shots,
    console: consoleLog,
    error_pages: errorPages,
    steps,
    ms: Date.now() - started,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} catch (e) {
  let where = '';
  if (page) {
    where = `\nat ${page.url()}`;
    try {
      await page.screenshot({ path: join(shotDir, 'failure.png'), fullPage: true });
      where += `\npage text:\n${(await page.locator('body').innerText()).slice(0, 4000)}`;
    } catch {
      // The page is gone too.
    }
  }
  const seen = consoleLog.length || errorPages.length ? `\nthe browser saw:\n${[...consoleLog, ...errorPages].join('\n')}` : '';
  process.stderr.write(`serve.mjs: ${e?.stack ?? e}${where}${seen}\nsteps: ${JSON.stringify(steps)}\n`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
}
