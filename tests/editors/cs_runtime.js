// The runtime plane in a real VS Code (code-server): session checkpoints in the Memory Inbox, the Memory Health
// view and the routing of an agent's session-end file (issue 33), or reflection jobs under the inbox's resident
// section (issue 34), driven as a user would. Every write is previewed first (the modal question, checked to have
// written nothing), then applied, and the rows and files are compared after each step.
// Env: as cs_lib.js, plus WS (workspace root), PHASE (`checkpoints` or `reflection`), MEMZOI_BIN (the CLI, to read
// the runtime rows), CHECKPOINT (id of the checkpoint an agent left), SESSION_FILE (name of the session-end file),
// HEALTH (JSON: {duplicates: [id], contradictions: [id], expiring: [id]}), JOB (reflection job id), CANDIDATE
// ({id, text} JSON). Exits 0 when every step passed, 2 otherwise.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const L = require('./cs_lib');

const WS = process.env.WS;
const { step, shot, waitFor, row, rows } = L;

/** `memzoi checkpoint list --json`: the checkpoints of the workspace by id. */
function checkpoints() {
  const out = execFileSync(process.env.MEMZOI_BIN, ['checkpoint', 'list', '--root', WS, '--json'], { encoding: 'utf-8' });
  return Object.fromEntries(JSON.parse(out).checkpoints.map((c) => [c.id, c]));
}

const pendingDir = path.join(WS, '.memzoi', 'proposals', 'pending');
const pendingFiles = () => (fs.existsSync(pendingDir) ? fs.readdirSync(pendingDir).sort() : []);

/** Continue or Close the checkpoint row `title` from its inline button: the question, nothing written, then Apply. */
async function transition(page, id, title, button, expect) {
  const before = checkpoints()[id];
  await L.clickInline(page, title, button);
  const question = await L.dialog(page);
  step(`${button}: previewed`, { question });
  if (!question.includes(id)) throw new Error(`${button}: the question does not name ${id}: ${question}`);
  const during = checkpoints()[id];
  if (during.version !== before.version || during.status !== before.status) throw new Error(`${button}: the preview wrote ${JSON.stringify(during)}`);
  await shot(page, `vscode-checkpoint-${button.split(' ')[0].toLowerCase()}.png`);
  await L.dialogButton(page, 'Apply');
  await waitFor(`${id} to be ${expect.status} v${expect.version}`, () => {
    const c = checkpoints()[id];
    return c.status === expect.status && c.version === expect.version;
  });
  step(`${button}: applied`, { toast: await L.toast(page, `checkpoint ${id}`), version: expect.version });
  await L.clearToasts(page);
}

/** Clicks the Memory Health record row `id` and waits for its file to be the active editor. */
async function openHealthRecord(page, id) {
  // The record's own row (a finding's row reads "dup-a, dup-b": clicking it would fold the finding).
  const recordRow = page.locator('[id="workbench.view.extension.memzoi"] .monaco-list-row', { hasText: new RegExp(`^\\s*${id}(?!,)`) }).first();
  await recordRow.waitFor({ timeout: 45000 });
  await recordRow.click();
  await L.waitTab(page, `${id}.md`);
  // Its own file: the editor shows the record's id (waited for: the text renders after the tab is active).
  await page.waitForFunction((want) => (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent || '')
    .replace(/\u00a0/g, ' ').includes(want), `id: ${id}`, { timeout: 30000 })
    .catch(async () => { throw new Error(`Memory Health: ${id} opened another file: ${(await L.editorText(page)).slice(0, 200)}`); });
}

/** Ctrl+. on the active editor (cursor at the start) until `title` is listed, then runs it; returns the menu. */
async function codeAction(page, title) {
  const menu = await L.codeActionMenu(page, title, (p) => p.keyboard.press('Control+Home'));
  await page.keyboard.press('Enter');
  return menu;
}

async function checkpointsPhase(page) {
  const id = process.env.CHECKPOINT;
  const title = 'Auth middleware';
  await L.quickOpen(page, 'dup-a.md'); // a Memzoi file in the editor, as a user starts
  await L.runCommand(page, 'Focus on Memory Inbox View');
  await row(page, 'Session checkpoints').waitFor({ timeout: 60000 });
  await row(page, title).waitFor({ timeout: 60000 });
  const buttons = await L.inlineButtons(page, title);
  step('inbox lists the open checkpoint with Continue and Close', { rows: await rows(page), buttons });
  if (!buttons.includes('Continue Checkpoint') || !buttons.includes('Close Checkpoint')) throw new Error(`checkpoint buttons: ${buttons}`);
  await shot(page, 'vscode-checkpoints.png');

  // Open: the row shows the checkpoint (runtime provenance), writing nothing.
  await row(page, title).click();
  await page.waitForFunction((cid) => (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent || '').includes(cid), id, { timeout: 30000 });
  const shown = await L.editorText(page);
  step('Open shows the checkpoint', { shown: shown.slice(0, 300) });
  if (!shown.includes('Stopped at token refresh.') || !/provenance: runtime/.test(shown)) throw new Error(`checkpoint shown: ${shown}`);

  await L.runCommand(page, 'Focus on Memory Inbox View');
  await transition(page, id, title, 'Continue Checkpoint', { status: 'open', version: 2 });
  await page.waitForFunction(() => [...document.querySelectorAll('[id="workbench.view.extension.memzoi"] .monaco-list-row')]
    .some((r) => /Auth middleware/.test(r.textContent) && /v2/.test(r.textContent)), null, { timeout: 30000 });
  step('the row shows the new version');
  await transition(page, id, title, 'Close Checkpoint', { status: 'closed', version: 3 });
  await page.waitForFunction(() => ![...document.querySelectorAll('[id="workbench.view.extension.memzoi"] .monaco-list-row')]
    .some((r) => /Auth middleware/.test(r.textContent)), null, { timeout: 30000 });
  step('a closed checkpoint leaves the inbox');

  // Memory Health: duplicates, contradictions, expiring records, each opening its record.
  const health = JSON.parse(process.env.HEALTH);
  await L.runCommand(page, 'Focus on Memory Health View');
  // The workspace holds a record with a planted credential, which is not admitted: Memzoi plans maintenance only
  // over admitted records, and the view says so, naming the file (not "no findings").
  const refusal = await (await page.waitForFunction(() => [...document.querySelectorAll('[id="workbench.view.extension.memzoi"] .message')]
    .map((e) => e.textContent || '').find((t) => /No maintenance plan/.test(t)) || null, null, { timeout: 60000 })).jsonValue();
  step('Memory Health says why it has no plan', { message: refusal });
  if (!refusal.includes(process.env.SECRET_RECORD)) throw new Error(`the refusal does not name the record: ${refusal}`);
  await shot(page, 'vscode-memory-health-refused.png');
  fs.unlinkSync(path.join(WS, '.memzoi', 'records', process.env.SECRET_RECORD)); // the reviewer removes it
  await L.runCommand(page, 'Refresh Memory Health');
  for (const group of ['Duplicates', 'Contradictions (no winner chosen)', 'Expiring soon']) await row(page, group).waitFor({ timeout: 60000 });
  step('Memory Health lists duplicates, contradictions and expiring records', { rows: await rows(page) });
  await shot(page, 'vscode-memory-health.png');
  for (const [kind, ids] of Object.entries(health)) {
    for (const rid of ids) {
      await openHealthRecord(page, rid);
      step(`Memory Health: ${kind} ${rid} opens its record`, { active: await L.activeTab(page) });
    }
  }

  // Routing of the session-end file: Ctrl+. plans it; the question lists each candidate; nothing is written
  // before Apply; then the packet is in the inbox and the checkpoint in the checkpoint section.
  const session = process.env.SESSION_FILE;
  const pendingBefore = pendingFiles();
  const countBefore = Object.keys(checkpoints()).length;
  await L.quickOpen(page, session);
  const menu = await codeAction(page, 'Plan memory routing (preview)');
  step('Ctrl+. offers Plan memory routing', { menu });
  const question = await L.dialog(page);
  step('routing preview', { question });
  if (!/\[0\] repo → create_proposal \.memzoi\/proposals\/pending\/\S+\.md/.test(question)) throw new Error(`routing preview, repo: ${question}`);
  if (!/\[1\] session → create_runtime/.test(question) || !question.includes(session)) throw new Error(`routing preview, session: ${question}`);
  if (pendingFiles().join() !== pendingBefore.join() || Object.keys(checkpoints()).length !== countBefore) throw new Error('the routing preview wrote');
  await shot(page, 'vscode-routing-preview.png');
  await L.dialogButton(page, 'Apply');
  await waitFor('the routed packet', () => pendingFiles().length === pendingBefore.length + 1);
  const routedToast = await L.toast(page, 'routed');
  const created = pendingFiles().filter((f) => !pendingBefore.includes(f));
  step('routing applied', { toast: routedToast, created });
  await L.runCommand(page, 'Focus on Memory Inbox View');
  await row(page, 'Deploys go through the release branch').waitFor({ timeout: 60000 });
  await row(page, 'Where I stopped').waitFor({ timeout: 60000 });
  const after = await rows(page);
  step('the packet is in the inbox and the checkpoint in its section', { rows: after });
  await shot(page, 'vscode-routing-applied.png');
}

/**
 * Runs Remove Resident Memory Entry… until its picker lists `entry`. The palette can take the Enter before the
 * command's row is focused (then nothing runs), so the command is asked again; a toast instead of the picker (a
 * refusal or "no entry") is a failure that names the toast.
 */
async function openRemovePicker(page, entry) {
  for (let attempt = 1; ; attempt++) {
    await L.runCommand(page, 'Remove Resident Memory Entry');
    const seen = await page.waitForFunction((want) => {
      const title = document.querySelector('.quick-input-widget .quick-input-title')?.textContent || '';
      const listed = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(want));
      if (/remove which resident-memory entry/.test(title) && listed) return 'picker';
      const toast = [...document.querySelectorAll('.notification-toast .notification-list-item-message')]
        .map((e) => e.textContent).find((t) => /no resident-memory entry|refus|could not|failed|error/i.test(t));
      return toast ? `toast: ${toast}` : null;
    }, entry, { timeout: 30000 }).then((h) => h.jsonValue()).catch(() => 'nothing');
    if (seen === 'picker') return;
    if (seen !== 'nothing') throw new Error(`Remove Resident Memory Entry showed ${seen}`);
    if (attempt >= 3) throw new Error('Remove Resident Memory Entry: its picker never listed the entry');
    L.log(`the remove picker did not open yet (try ${attempt})`);
  }
}

async function reflectionPhase(page) {
  const job = process.env.JOB;
  const cand = JSON.parse(process.env.CANDIDATE);
  await L.quickOpen(page, 'RULES.md');
  await L.runCommand(page, 'Focus on Memory Inbox View');
  await row(page, 'Resident memory').waitFor({ timeout: 60000 });
  await row(page, 'Reflection of message msg_1').waitFor({ timeout: 60000 });
  await row(page, cand.text).waitFor({ timeout: 60000 });
  const listed = await rows(page);
  step('the resident section lists the reflection job and its candidate', { rows: listed });
  const jobRow = listed.find((r) => r.includes('Reflection of message msg_1')) || '';
  if (!/completed/.test(jobRow) || !/1 candidate/.test(jobRow)) throw new Error(`reflection row: ${jobRow}`);
  await shot(page, 'vscode-reflection-jobs.png');

  // The job row opens its request (exactly as sent) and its outcome (a read-only document: the top shows the
  // job, its candidates and the request; its end the outcome).
  const shown = (want) => page.waitForFunction((w) => (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent || '')
    .replace(/\u00a0/g, ' ').includes(w), want, { timeout: 30000 });
  await row(page, 'Reflection of message msg_1').click();
  await shown(`Reflection job ${job}`);
  let text = await L.editorText(page);
  step('the job row opens its request and outcome', { shown: text.slice(0, 400) });
  for (const want of ['## request', `"jobID": "${job}"`, 'completed', cand.id]) if (!text.includes(want)) throw new Error(`job document lacks ${want}: ${text.slice(0, 600)}`);
  await shot(page, 'vscode-reflection-job.png');
  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await page.keyboard.press('Control+End');
  await shown('## outcome');
  const end = await L.editorText(page);
  step('the job document ends with its outcome', { shown: end.slice(-400) });
  if (!end.includes('"status": "completed"')) throw new Error(`job outcome: ${end.slice(-600)}`);

  // The candidate links to its job: its context menu's Open Reflection Job opens the same job (RULES.md in front
  // first, so the job's document must open again).
  await page.locator('.tabs-container .tab', { hasText: 'RULES.md' }).first().click();
  await L.waitTab(page, 'RULES.md');
  const r = row(page, cand.text);
  await r.click({ button: 'right' });
  const item = page.locator('.context-view .action-label', { hasText: 'Open Reflection Job' }).first();
  await item.waitFor({ timeout: 20000 });
  // By keyboard: the menu ignores a mouse-up that comes right after it opened. Down focuses its (only) item.
  await page.keyboard.press('ArrowDown');
  await page.waitForSelector('.context-view .monaco-action-bar .action-item.focused', { timeout: 10000 });
  await page.keyboard.press('Enter');
  await shown(`Reflection job ${job}`);
  text = await L.editorText(page);
  step('the candidate opens the job that proposed it', { shown: text.slice(0, 200) });
  if (!text.includes(cand.id)) throw new Error(`candidate's job document: ${text.slice(0, 400)}`);

  // Edit and Approve… on the candidate: the edited text, then the review (diff and question), nothing written
  // before its button; then RULES.md holds the edited entry.
  const rules = path.join(WS, '.zuno', 'RULES.md');
  const original = fs.readFileSync(rules, 'utf-8');
  await L.clickInline(page, cand.text, 'Edit and Approve…');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 20000 });
  const prefilled = await input.inputValue();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(process.env.EDITED);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-diff-editor', { timeout: 45000 });
  const question = await L.dialog(page);
  step('Edit and Approve: review', { prefilled, question });
  if (prefilled !== cand.text || !/Approve edited/.test(question) || !question.includes(cand.text)) throw new Error(`edit review: ${prefilled} / ${question}`);
  if (fs.readFileSync(rules, 'utf-8') !== original) throw new Error('the edit review wrote RULES.md');
  await shot(page, 'vscode-resident-edit.png');
  await L.dialogButton(page, 'Approve edited');
  await L.waitWritten(page, 'RULES.md to hold the edited entry', () => fs.readFileSync(rules, 'utf-8').includes(process.env.EDITED));
  // The message comes once the client has reloaded the written file's buffer (it brings RULES.md to the front to
  // revert it, then gives the front back): only then does the next keystroke go where the person is. The editor in
  // front is again the job's document, never RULES.md (where typed keys would edit the file just written).
  const approved = await L.toast(page, 'Approved');
  const front = await L.activeTab(page);
  step('Edit and Approve: written', { rules: fs.readFileSync(rules, 'utf-8'), toast: approved, active: front });
  if (front.includes('RULES.md')) throw new Error(`after the write RULES.md was left in front, not the job's document: ${front}`);
  await L.clearToasts(page);

  // Remove Resident Memory Entry…: pick the entry, review, then it is gone (one audited step).
  await openRemovePicker(page, process.env.REMOVE);
  const offered = await page.evaluate(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.textContent.trim()));
  for (let i = 0; i < 10; i++) {
    const focused = await page.evaluate(() => document.querySelector('.quick-input-list .monaco-list-row.focused')?.textContent || '');
    if (focused.includes(process.env.REMOVE)) break;
    await page.keyboard.press('ArrowDown');
  }
  // Enter on the focused entry; asked again while the picker is still up (it can open before it takes keys).
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Enter');
    try {
      await page.locator('.monaco-dialog-box').waitFor({ timeout: 8000 });
      break;
    } catch (err) {
      const open = await page.locator('.quick-input-widget').isVisible();
      if (attempt >= 4 || !open) throw err;
      L.log(`the picker did not take Enter yet (try ${attempt})`);
    }
  }
  const removal = await L.dialog(page);
  step('Remove entry: review', { offered, question: removal });
  if (!/^.*Remove/.test(removal) || !removal.includes(process.env.REMOVE)) throw new Error(`removal review: ${removal}`);
  if (!fs.readFileSync(rules, 'utf-8').includes(process.env.REMOVE)) throw new Error('the removal review wrote RULES.md');
  await shot(page, 'vscode-resident-remove.png');
  await L.dialogButton(page, 'Remove');
  await L.waitWritten(page, 'the entry to leave RULES.md', () => !fs.readFileSync(rules, 'utf-8').includes(process.env.REMOVE));
  step('Remove entry: written', { rules: fs.readFileSync(rules, 'utf-8'), toast: await L.toast(page, 'Approved remove') });
}

L.drive('vscode-runtime-failure.png', (page) => (process.env.PHASE === 'reflection' ? reflectionPhase(page) : checkpointsPhase(page)));
