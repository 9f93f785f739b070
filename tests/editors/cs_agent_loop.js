// The agent loop in a real VS Code (code-server with the packaged .vsix, playwright-core in headless Debian
// Chromium): with the Memory Inbox shown, an agent (the MCP SDK's client driving memzoi-mcp, tests/editors/
// mcp_agent.py) proposes a memory; the inbox shows it without any refresh command (memzoi/inboxChanged and the
// extension's watchers); the reviewer applies it from its inbox row (diff, then the question naming it); the
// agent's next search_memory finds the record.
// Env: CS_URL, WS, SHOT_DIR, OUT (JSON report), PYTHON (the venv's python), AGENT (mcp_agent.py), QUERY (the
// agent's question). Exits 0 when every step passed, 2 otherwise.
const { chromium } = require('playwright-core');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const WS = process.env.WS;
const SHOT_DIR = process.env.SHOT_DIR;
const t0 = Date.now();
const report = { steps: [] };
const log = (...a) => console.log(`[${Date.now() - t0}ms]`, ...a);
const step = (name, data) => {
  report.steps.push({ name, ms: Date.now() - t0, ...(data || {}) });
  log(name, data ? JSON.stringify(data) : '');
};
const shot = (page, name) => page.screenshot({ path: path.join(SHOT_DIR, name) });

/** Runs the agent (one SDK client session) and returns its JSON answer. */
function agent(...args) {
  const out = execFileSync(process.env.PYTHON, [process.env.AGENT, ...args], { encoding: 'utf-8', timeout: 120000 });
  return JSON.parse(out);
}

async function waitFor(what, cond, ms = 45000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 20000 });
  await page.keyboard.press('Enter');
}

/** The inbox row showing `text` (the inbox has its own view container). */
const row = (page, text) => page.locator('[id="workbench.view.extension.memzoi"] .monaco-list-row', { hasText: text }).first();

async function clickInline(page, text, label) {
  const r = row(page, text);
  await r.waitFor({ timeout: 45000 });
  await r.hover();
  const button = r.locator(`.actions .action-label[aria-label="${label}"]`);
  await button.waitFor({ timeout: 10000 });
  await button.click();
}

(async () => {
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
    await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
    step('workbench loaded');
    await runCommand(page, 'Focus on Memory Inbox View');
    await row(page, 'Protected routes must validate sessions server-side').waitFor({ timeout: 90000 });
    step('inbox shown');

    // The agent proposes while the inbox is on screen; nobody runs a refresh.
    const proposed = agent('propose', WS);
    step('agent proposed', proposed);
    const before = agent('search', WS, process.env.QUERY);
    step('agent search before review', { ids: before.results.map((h) => h.id) });
    const shownAt = Date.now();
    await row(page, proposed.title).waitFor({ timeout: 60000 });
    step('inbox shows the agent proposal without a refresh', { after_ms: Date.now() - shownAt });
    await shot(page, 'vscode-agent-inbox.png');

    // Applied from its inbox row: the diff, then one question naming the packet.
    await clickInline(page, proposed.title, 'Apply');
    await page.waitForSelector('.monaco-diff-editor', { timeout: 45000 });
    const box = page.locator('.monaco-dialog-box');
    await box.waitFor({ timeout: 45000 });
    const question = (await box.innerText()).replace(/\s+/g, ' ').trim();
    step('Apply: question', { question });
    if (!question.includes(proposed.title) || !question.includes(proposed.path)) throw new Error(`the question does not name the proposal: ${question}`);
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Apply' }).first().click();
    await waitFor('the packet to leave pending', () => !fs.existsSync(path.join(WS, proposed.path)));
    step('applied from the inbox');
    await row(page, proposed.title).waitFor({ state: 'detached', timeout: 45000 });
    step('the inbox no longer lists it');
    await shot(page, 'vscode-agent-applied.png');

    const after = agent('search', WS, process.env.QUERY);
    report.search_after = after;
    step('agent search after review', { ids: after.results.map((h) => h.id) });
    rc = 0;
  } catch (e) {
    report.error = String(e && e.stack || e);
    log('FAIL', report.error);
    await page.screenshot({ path: path.join(SHOT_DIR, 'vscode-agent-failure.png') }).catch(() => {});
  } finally {
    fs.writeFileSync(process.env.OUT, JSON.stringify(report, null, 2));
    await browser.close();
  }
  process.exit(rc);
})();
