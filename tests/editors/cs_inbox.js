// The Memory Inbox acts on exactly the row clicked (issue 28), in a real VS Code (code-server) driven by
// playwright-core in headless Debian Chromium. Another pending proposal stays open in the editor throughout; every
// inline button is clicked on its own row (Open, Apply, Reject…, Route to Local Memory, resident Approve, Reject…,
// Undo), the review flow is followed (diff, then the question naming the target), and after each write the files
// on disk are compared: exactly the clicked target changed, the others did not.
// Env: CS_URL, SHOT_DIR (screenshots, docs/editors) and OUT (JSON report) as cs_lib.js reads them, WS, OPEN_ID (the
// packet kept open), TARGETS (JSON: {apply, reject, route, open: [ids]}), RESIDENT (JSON: {approve: {id, text}, reject: {id, text}}),
// MEMZOI_BIN (the CLI, to read candidate states). Exits 0 when every step passed, 2 otherwise.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const L = require('./cs_lib');

const WS = process.env.WS;
const OPEN_ID = process.env.OPEN_ID;
const TARGETS = JSON.parse(process.env.TARGETS);
const RESIDENT = JSON.parse(process.env.RESIDENT);
const { step, shot, waitFor, runCommand, quickOpen, activeTab, row, clickInline, dialog, dialogButton, toast, clearToasts } = L;

/** Every file under .memzoi/records, .memzoi/proposals and .zuno, with a hash of its bytes. */
function snapshot() {
  const out = {};
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.zuno-write-lock')) out[path.relative(WS, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  for (const d of ['.memzoi/records', '.memzoi/proposals', '.zuno']) walk(path.join(WS, d));
  return out;
}

/** The paths that differ between two snapshots (added, removed or changed). */
function changed(a, b) {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).sort();
}

/** Fails unless every changed path belongs to the target (`ok(path)`), and at least one does. */
function assertOnly(what, before, after, ok) {
  const diff = changed(before, after);
  const foreign = diff.filter((p) => !ok(p));
  step(`${what}: changed on disk`, { changed: diff });
  if (diff.length === 0) throw new Error(`${what}: nothing changed on disk`);
  if (foreign.length > 0) throw new Error(`${what}: files of other targets changed: ${foreign}`);
}

const pending = (id) => `.memzoi/proposals/pending/${id}.md`;
const belongsTo = (id) => (p) => p.includes(`/${id}.md`) || (p.startsWith('.memzoi/records/') && !p.includes('/proposals/'));

function candidates() {
  const out = execFileSync(process.env.MEMZOI_BIN, ['resident', 'list', '--root', WS, '--json'], { encoding: 'utf-8' });
  const data = JSON.parse(out);
  const list = Array.isArray(data) ? data : data.candidates || [];
  return Object.fromEntries(list.map((c) => [c.id, c.status]));
}

/** Brings the packet kept open back to the front by clicking its tab, as a user does. */
async function showOpen(page) {
  await page.keyboard.press('Escape');
  await page.locator('.tabs-container .tab', { hasText: `${OPEN_ID}.md` }).first().click();
  await page.waitForFunction((n) => (document.querySelector('.editor-group-container.active .tab.active')?.textContent || '').includes(n),
    `${OPEN_ID}.md`, { timeout: 20000 });
}

/** Types `reason` into the quick input's reason prompt; returns the prompt's title. */
async function typeReason(page, reason) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 20000 });
  const title = (await page.locator('.quick-input-widget .quick-input-title').innerText().catch(() => '')).trim();
  await page.keyboard.type(reason);
  await page.keyboard.press('Enter');
  return title;
}

L.drive('vscode-inbox-failure.png', async (page) => {
  // Opening a record to its first diagnostic (printed by the test with the load average, never asserted).
  const opened = Date.now();
  await quickOpen(page, 'deploy-token-rotation.md');
  await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 90000 });
  step('record opened -> first diagnostic', { record_to_diagnostic_ms: Date.now() - opened });

  // The inbox in its own view container, with another proposal open in the editor.
  await quickOpen(page, `${OPEN_ID}.md`);
  await runCommand(page, 'Focus on Memory Inbox View');
  for (const text of [...TARGETS.titles, RESIDENT.approve.text, RESIDENT.reject.text]) await row(page, text).waitFor({ timeout: 60000 });
  const header = await row(page, 'Resident memory').innerText();
  step('inbox lists every row; the resident header shows cap usage', { header: header.replace(/\s+/g, ' ') });
  if (!/chars \(\d+%\)/.test(header)) throw new Error(`no cap usage on the Resident memory header: ${header}`);
  await shot(page, 'vscode-inbox.png');

  // Open: each row's Open shows its own file, whatever is open.
  for (const [id, text] of TARGETS.open) {
    const before = snapshot();
    await showOpen(page);
    await clickInline(page, text, 'Open');
    await page.waitForFunction((n) => (document.querySelector('.editor-group-container.active .tab.active')?.textContent || '').includes(n), `${id}.md`, { timeout: 20000 });
    if (changed(before, snapshot()).length > 0) throw new Error('Open changed files');
    step(`Open "${text}" showed its own file`, { active: await activeTab(page) });
  }

  // Apply: the review flow (the diff of every file, then one question naming the packet), then the write.
  {
    const [id, text] = TARGETS.apply;
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, text, 'Apply');
    await page.waitForSelector('.monaco-diff-editor', { timeout: 45000 });
    const question = await dialog(page);
    step('Apply: review diff and question', { question });
    if (!question.includes(text) || !question.includes(pending(id))) throw new Error(`the question does not name the clicked packet: ${question}`);
    if (question.includes(OPEN_ID)) throw new Error(`the question names the open packet: ${question}`);
    await shot(page, 'vscode-review-apply.png');
    if (changed(before, snapshot()).length > 0) throw new Error('the review wrote files before Apply');
    await dialogButton(page, 'Apply');
    await waitFor(`${id} to leave pending`, () => !fs.existsSync(path.join(WS, pending(id))));
    const said = await toast(page, 'Applied');
    step('Apply: one message', { toast: said });
    assertOnly('Apply', before, snapshot(), belongsTo(id));
    if (!fs.existsSync(path.join(WS, pending(OPEN_ID)))) throw new Error('the open packet was applied');
    await shot(page, 'vscode-applied.png');
    await clearToasts(page);
  }

  // Reject…: the reason prompt names the packet; only it moves to rejected.
  {
    const [id, text] = TARGETS.reject;
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, text, 'Reject…');
    const prompt = await typeReason(page, 'not what we do here');
    step('Reject: reason prompt', { prompt });
    if (!prompt.includes(text)) throw new Error(`the reason prompt does not name the clicked packet: ${prompt}`);
    await waitFor(`${id} to leave pending`, () => !fs.existsSync(path.join(WS, pending(id))));
    step('Reject: one message', { toast: await toast(page, 'Rejected') });
    assertOnly('Reject', before, snapshot(), (p) => p.includes(`/${id}.md`));
    await shot(page, 'vscode-rejected.png');
    await clearToasts(page);
  }

  // Route to Local Memory on the blocked packet: a question naming it; only it leaves pending.
  {
    const [id, text] = TARGETS.route;
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, text, 'Route to Local Memory');
    const question = await dialog(page);
    step('Route: question', { question });
    if (!question.includes(text)) throw new Error(`the question does not name the clicked packet: ${question}`);
    await dialogButton(page, 'Route to local memory');
    await waitFor(`${id} to leave pending`, () => !fs.existsSync(path.join(WS, pending(id))));
    step('Route: one message', { toast: await toast(page, 'local memory') });
    // Routed: the packet leaves pending; the core files it under resolved/rejected by a redacted name.
    assertOnly('Route to local memory', before, snapshot(), (p) => p.includes(`/${id}.md`)
      || (p.startsWith('.memzoi/proposals/resolved/rejected/redacted-identity-') && !(p in before)));
    await clearToasts(page);
  }

  // Resident Approve: the question names the candidate and the file; only RULES.md changes, the other stays pending.
  const rules = path.join(WS, '.zuno', 'RULES.md');
  const original = fs.readFileSync(rules, 'utf-8');
  // RULES.md open in a tab behind the packet: after the write it must show the new text (nothing stale).
  await quickOpen(page, 'RULES.md');
  {
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, RESIDENT.approve.text, 'Approve');
    const question = await dialog(page);
    step('resident Approve: question', { question });
    if (!question.includes(RESIDENT.approve.text) || !question.includes('.zuno/RULES.md')) throw new Error(`the question does not name the candidate: ${question}`);
    await shot(page, 'vscode-resident-approve.png');
    await dialogButton(page, 'Approve');
    await waitFor('RULES.md to change', () => fs.readFileSync(rules, 'utf-8') !== original);
    step('resident Approve: one message', { toast: await toast(page, 'Approved') });
    // A file nothing reviewed has written yet is backed up beside itself before the first write (RULES.md.bak.<s>).
    assertOnly('resident Approve', before, snapshot(), (p) => p === '.zuno/RULES.md' || /^\.zuno\/RULES\.md\.bak\.\d+$/.test(p));
    const states = candidates();
    if (states[RESIDENT.approve.id] !== 'applied' || states[RESIDENT.reject.id] !== 'pending') throw new Error(`candidate states: ${JSON.stringify(states)}`);
    if (!fs.existsSync(path.join(WS, pending(OPEN_ID)))) throw new Error('the open packet changed');
    await clearToasts(page);
    await page.locator('.tabs-container .tab', { hasText: 'RULES.md' }).first().click();
    await page.waitForFunction((t) => (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent || '')
      .replace(/\u00a0/g, ' ').includes(t),
      RESIDENT.approve.text, { timeout: 30000 });
    step('the hidden RULES.md tab shows the approved text');
  }

  // Resident Reject…: asks a reason naming the candidate; the file stays, only that candidate is rejected.
  {
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, RESIDENT.reject.text, 'Reject…');
    const prompt = await typeReason(page, 'we lint in CI');
    step('resident Reject: reason prompt', { prompt });
    if (!prompt.includes(RESIDENT.reject.text)) throw new Error(`the reason prompt does not name the candidate: ${prompt}`);
    await waitFor('the candidate to be rejected', () => candidates()[RESIDENT.reject.id] === 'rejected');
    step('resident Reject: one message', { toast: await toast(page, 'Rejected') });
    if (changed(before, snapshot()).length > 0) throw new Error(`resident Reject changed files: ${changed(before, snapshot())}`);
    if (candidates()[RESIDENT.approve.id] !== 'applied') throw new Error('resident Reject touched the other candidate');
    await shot(page, 'vscode-resident-reject.png');
    await clearToasts(page);
  }

  // Resident Undo on the applied candidate's row: names the candidate, file and time; RULES.md gets its bytes back.
  {
    await showOpen(page);
    const before = snapshot();
    await clickInline(page, RESIDENT.approve.text, 'Undo');
    const question = await dialog(page);
    step('resident Undo: question', { question });
    if (!question.includes(RESIDENT.approve.text) || !/approved \d{4}-\d\d-\d\d/.test(question)) throw new Error(`the undo question: ${question}`);
    await shot(page, 'vscode-resident-undo.png');
    await dialogButton(page, 'Undo');
    await waitFor('RULES.md to be restored', () => fs.readFileSync(rules, 'utf-8') === original);
    step('resident Undo: one message', { toast: await toast(page, 'Undid') });
    assertOnly('resident Undo', before, snapshot(), (p) => p === '.zuno/RULES.md' || /^\.zuno\/RULES\.md\.bak\.\d+$/.test(p));
    if (candidates()[RESIDENT.approve.id] !== 'undone') throw new Error(`after undo: ${JSON.stringify(candidates())}`);
  }
  if (!fs.existsSync(path.join(WS, pending(OPEN_ID)))) throw new Error('the packet open in the editor changed');
  step('the packet open in the editor never changed');
});
