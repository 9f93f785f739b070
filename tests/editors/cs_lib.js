// Shared steps of the code-server drivers (playwright-core in headless Debian Chromium): the report with its
// steps, the browser, Quick Open, the command palette, the Memory Inbox's rows and inline buttons, modal
// questions and toasts, and waiting for a condition (never for a fixed time).
// Env: CS_URL (workbench URL with ?folder=), SHOT_DIR (screenshots), SHOT_PREFIX (prefix of their file names,
// optional), OUT (JSON report).
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const t0 = Date.now();
const report = { steps: [] };
const log = (...a) => console.log(`[${Date.now() - t0}ms]`, ...a);
/** Records a passed step (with `at`, the wall clock in ms) and logs it. */
const step = (name, data) => {
  const at = Date.now();
  report.steps.push({ name, ms: at - t0, at, ...(data || {}) });
  log(name, data ? JSON.stringify(data) : '');
};
/** The path of the screenshot `name` (in SHOT_DIR, its name prefixed with SHOT_PREFIX when set). */
const shotPath = (name) => path.join(process.env.SHOT_DIR, (process.env.SHOT_PREFIX || '') + name);
const shot = (page, name) => page.screenshot({ path: shotPath(name) });

/** Polls `cond()` (a Node-side check, e.g. of files on disk) every 150 ms until it holds; fails after `ms`. */
async function waitFor(what, cond, ms = 45000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * Runs the palette command `title`; asks again (up to five times) while the palette did not open or does not list
 * it yet (F1 and the typed title are lost when the workbench moves the focus meanwhile: Escape, then F1 again).
 */
async function runCommand(page, title) {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    try {
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10000 });
      await page.keyboard.type(title);
      await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 8000 });
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
      log(`the palette does not list "${title}" yet (try ${attempt})`);
    }
  }
  await page.keyboard.press('Enter');
}

/**
 * Opens the workspace file `name` with Quick Open. Quick Open also lists recently opened editors, among them the
 * diff editors of a review or a change ("Preview apply: …/name (removed)"): the row taken is the file itself, never
 * such a diff or a history row, which would leave the keyboard in a read-only virtual document with no Memzoi
 * actions. Asked again (three tries in all): under load the file search can still show stale rows at Enter. A row
 * is read by its shown text (innerText): the list reuses its row elements, and a hidden detail line can keep an
 * earlier picker's text (the history's "… (created), … (deleted)").
 */
async function quickOpen(page, name) {
  const isFileRow = (t, n) => t.includes(n) && !/Review|Preview|History|\((created|removed|modified)\)/.test(t);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+P');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
      await page.keyboard.type(name);
      await page.waitForFunction((n) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')] // isFileRow, in the page
        .some((r) => (r.innerText || '').includes(n) && !/Review|Preview|History|\((created|removed|modified)\)/.test(r.innerText)), name, { timeout: 20000 });
      for (let i = 0; i < 20; i++) {
        const focused = await page.evaluate(() => document.querySelector('.quick-input-list .monaco-list-row.focused')?.innerText || '');
        if (isFileRow(focused, name)) break;
        await page.keyboard.press('ArrowDown');
      }
      await page.keyboard.press('Enter');
      await page.waitForFunction((n) => [...document.querySelectorAll('.tab.active')].some((e) => e.textContent.includes(n))
        && !document.querySelector('.editor-group-container.active .monaco-diff-editor'), name, { timeout: 20000 });
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
      log('quick open retry', name);
    }
  }
}

/** Moves the cursor of the active editor to `lineCol` (`2:8`) with Go to Line, and waits until the input closed. */
async function gotoLine(page, lineCol) {
  await page.keyboard.press('Control+G');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
  await page.keyboard.type(lineCol);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget', { state: 'hidden', timeout: 20000 });
}

/**
 * Opens the Ctrl+. menu of the active editor (`place(page)` puts the cursor first) until it lists `title`: the menu
 * can come up empty while a just-opened document is still being synchronised with the server, so it is closed and
 * asked again (up to `tries` times; each try waits for the menu, not for a fixed time). Then moves the keyboard
 * focus onto `title` (mouse clicks are blocked by the menu's pointer shield). Returns the menu's titles; Enter
 * runs the focused action.
 */
async function codeActionMenu(page, title, place, tries = 8) {
  for (let attempt = 1; ; attempt++) {
    await page.click('.monaco-editor .view-lines');
    await place(page);
    await page.keyboard.press('Control+.');
    try {
      await page.waitForSelector(`.action-widget .monaco-list-row:has-text("${title}")`, { timeout: 5000 });
      break;
    } catch (err) {
      if (attempt >= tries) throw err;
      log(`Ctrl+. did not list "${title}" yet (try ${attempt}); asking again`);
      await page.keyboard.press('Escape');
    }
  }
  const titles = await page.evaluate(() => [...document.querySelectorAll('.action-widget .monaco-list-row')].map((r) => r.textContent.trim()));
  let focused = '';
  for (let i = 0; i < 12; i++) {
    focused = await page.evaluate(() => document.querySelector('.action-widget .monaco-list-row.focused')?.textContent || '');
    if (focused.includes(title)) break;
    await page.keyboard.press('ArrowDown');
  }
  if (!focused.includes(title)) throw new Error(`Ctrl+. menu: the focus never reached "${title}" (menu: ${titles})`);
  return titles;
}

/** The active editor tab's name. */
const activeTab = (page) => page.evaluate(() => document.querySelector('.editor-group-container.active .tab.active')?.textContent?.trim() || '');

/** Waits until the active editor tab's name includes `name`. */
const waitTab = (page, name) => page.waitForFunction((n) => (document.querySelector('.editor-group-container.active .tab.active')?.textContent || '').includes(n), name, { timeout: 30000 });

/** The text the active editor shows (its visible lines). */
const editorText = (page) => page.evaluate(() => (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent || '').replace(/\u00a0/g, ' '));

/** A row showing `text` in the Memzoi view container (the Memory Inbox and the Memory Health view). */
function row(page, text) {
  return page.locator('[id="workbench.view.extension.memzoi"] .monaco-list-row', { hasText: text }).first();
}

/** Every row of the Memzoi view container: aria-label (label, description) and text. */
const rows = (page) => page.evaluate(() => [...document.querySelectorAll('[id="workbench.view.extension.memzoi"] .monaco-list-row')]
  .map((r) => `${r.getAttribute('aria-label') || ''} | ${r.textContent}`));

/** The inline buttons of the row showing `text` (hovered first, as a user does). */
async function inlineButtons(page, text) {
  const r = row(page, text);
  await r.waitFor({ timeout: 45000 });
  await r.hover();
  return r.evaluate((e) => [...e.querySelectorAll('.actions .action-label')].map((a) => a.getAttribute('aria-label') || ''));
}

/** Clicks the inline button `label` of the row showing `text` (hovering it first). */
async function clickInline(page, text, label) {
  const r = row(page, text);
  await r.waitFor({ timeout: 45000 });
  await r.hover();
  const button = r.locator(`.actions .action-label[aria-label="${label}"]`);
  await button.waitFor({ timeout: 10000 });
  await button.click();
  step(`clicked ${label} on "${text}"`, { active: await activeTab(page) });
}

/** Waits for the modal question; returns its text (message and detail). */
async function dialog(page) {
  const box = page.locator('.monaco-dialog-box');
  await box.waitFor({ timeout: 45000 });
  return (await box.innerText()).replace(/\s+/g, ' ').trim();
}

async function dialogButton(page, label) {
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: label }).first().click();
  await page.locator('.monaco-dialog-box').waitFor({ state: 'detached', timeout: 20000 });
}

/** Waits for a toast whose message matches `re` (a regular expression source); returns its text. */
async function toast(page, re) {
  const h = await page.waitForFunction((src) => [...document.querySelectorAll('.notification-toast .notification-list-item-message')]
    .map((e) => e.textContent).find((t) => new RegExp(src).test(t)) || null, re, { timeout: 45000 });
  return (await h.jsonValue()).trim();
}

/** The text of a Memzoi error toast (a refused command: `Memzoi: <why>`) shown now, else null. */
const errorToast = (page) => page.evaluate(() => [...document.querySelectorAll('.notification-toast .notification-list-item')]
  .filter((e) => e.querySelector('.codicon-error'))
  .map((e) => e.querySelector('.notification-list-item-message')?.textContent || '').find((t) => t.startsWith('Memzoi:')) || null);

/**
 * Waits until the write `what` is on disk (`written()`, a Node-side check); a refusal toast ends the wait at once
 * with its text (instead of the whole wait with no reason).
 */
async function waitWritten(page, what, written, ms) {
  await waitFor(what, async () => {
    if (await written()) return true;
    const refused = await errorToast(page);
    if (refused) throw new Error(`${what}: the command was refused: ${refused}`);
    return false;
  }, ms);
}

async function clearToasts(page) {
  await page.evaluate(() => document.querySelectorAll('.notification-toast .codicon-notifications-clear, .notification-toast .codicon-close').forEach((b) => b.click()));
}

/**
 * Opens the workbench of CS_URL in headless Chromium and runs `body(page, { loadStarted })` (`loadStarted`: the
 * wall clock in ms when the page's document had loaded, before the workbench showed); writes the report to OUT and
 * exits 0 when `body` returned, 2 (with the error and a screenshot `failureShot`) when it threw.
 */
async function drive(failureShot, body) {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  let rc = 2;
  try {
    await page.goto(process.env.CS_URL, { waitUntil: 'domcontentloaded', timeout: 60000 });
    const loadStarted = Date.now();
    await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
    step('workbench loaded');
    await body(page, { loadStarted });
    rc = 0;
  } catch (e) {
    report.error = String(e && e.stack || e);
    log('FAIL', report.error);
    await shot(page, failureShot).catch(() => {});
  } finally {
    fs.writeFileSync(process.env.OUT, JSON.stringify(report, null, 2));
    await browser.close();
  }
  process.exit(rc);
}

module.exports = {
  report, log, step, shot, shotPath, waitFor, runCommand, quickOpen, gotoLine, codeActionMenu, activeTab, waitTab, editorText, row, rows, inlineButtons,
  clickInline, dialog, dialogButton, toast, errorToast, waitWritten, clearToasts, drive,
};
