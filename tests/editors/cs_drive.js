// Drives VS Code (code-server) in headless Debian Chromium with playwright-core, like a user would.
// Env: CS_URL (workbench URL with ?folder=), WS (workspace root), SHOT_DIR (screenshots), SHOT_PREFIX (prefix of
// their file names), APPLY=1 to run the Apply step, OUT (JSON report). Exits 0 when every step passed, 2 otherwise
// (the report says which step failed). Each step records `at`, the wall clock in ms, which the test compares with
// the extension's activation line in its log (start-up timing, printed, never asserted).
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const WS = process.env.WS;
const SHOT_DIR = process.env.SHOT_DIR;
const OUT = process.env.OUT;
const PREFIX = process.env.SHOT_PREFIX || '';
const shot = (name) => path.join(SHOT_DIR, PREFIX + name);
const t0 = Date.now();
const report = { steps: [] };
const log = (...a) => console.log(`[${Date.now() - t0}ms]`, ...a);
const step = (name, data) => {
  const at = Date.now();
  report.steps.push({ name, ms: at - t0, at, ...(data || {}) });
  log(name, data ? JSON.stringify(data) : '');
};

async function quickOpen(page, text) {
  // Opens the workspace file named `text`. Quick Open also lists recently opened editors, among them the diff
  // editors of a preview or a change ("Preview apply: …/text (removed)"): the row taken is the file itself, never
  // such a diff, which would leave the keyboard in a read-only virtual document with no Memzoi actions.
  // Retried once: under load the file search can still be showing stale rows when Enter is pressed.
  const isFileRow = (t, name) => t.includes(name) && !/Preview|History|\((created|removed|modified)\)/.test(t);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+P');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
      await page.keyboard.type(text);
      await page.waitForFunction( // the same test as isFileRow, inside the page
        (name) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.textContent || '')
          .some((t) => t.includes(name) && !/Preview|History|\((created|removed|modified)\)/.test(t)),
        text, { timeout: 20000 });
      for (let i = 0; i < 20; i++) {
        const focused = await page.evaluate(() => document.querySelector('.quick-input-list .monaco-list-row.focused')?.textContent || '');
        if (isFileRow(focused, text)) break;
        await page.keyboard.press('ArrowDown');
      }
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        (t) => [...document.querySelectorAll('.tab.active')].some((e) => e.textContent.includes(t))
          && !document.querySelector('.editor-group-container.active .monaco-diff-editor'),
        text, { timeout: 20000 });
      return;
    } catch (e) {
      if (attempt >= 2) throw e;
      log('quick open retry', text);
    }
  }
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 20000 });
  await page.keyboard.press('Enter');
}

async function gotoLine(page, lineCol) {
  await page.keyboard.press('Control+G');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
  await page.keyboard.type(lineCol);
  await page.keyboard.press('Enter');
  await page.waitForTimeout(200);
}

// The Memory Inbox's rows: it has its own view container in the activity bar.
const INBOX_ROWS = '[id="workbench.view.extension.memzoi"] .monaco-list-row';

function inboxRows(page) {
  return page.evaluate((sel) => [...document.querySelectorAll(sel)].map((r) => r.getAttribute('aria-label') || r.textContent), INBOX_ROWS);
}

function statusText(page) {
  return page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent.trim()).find((t) => t.startsWith('Memzoi')) || null);
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
    const tGoto = Date.now();
    await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
    step('workbench loaded');

    // 1. The planted secret shows up in the Problems panel.
    await quickOpen(page, 'deploy-token-rotation.md');
    await page.keyboard.press('Control+Shift+M');
    const problem = await (await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((r) => r.textContent);
      return rows.find((t) => /GitHub token/.test(t)) || null;
    }, null, { timeout: 60000 })).jsonValue();
    step('problems panel shows the credential finding', { problem: problem.slice(0, 200), since_load_ms: Date.now() - tGoto });
    await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 20000 });
    await page.screenshot({ path: shot('vscode-problems.png') });
    if (process.env.ONLY_PROBLEMS === '1') { rc = 0; return; }

    // 2. Hover on the frontmatter shows provenance (on the id's value; Ctrl+K Ctrl+I shows the hover).
    await page.click('.monaco-editor .view-lines');
    await gotoLine(page, '2:8');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    const hover = await (await page.waitForFunction(() =>
      [...document.querySelectorAll('.monaco-hover-content')].map((e) => e.innerText).find((t) => /provenance/.test(t)) || null,
      null, { timeout: 20000 })).jsonValue();
    step('hover shows provenance', { hover: hover.slice(0, 400) });
    await page.screenshot({ path: shot('vscode-hover.png') });
    await page.keyboard.press('Escape');

    // 3. The Memory Inbox lists the pending proposal; the status bar counts it.
    await runCommand(page, 'Focus on Memory Inbox View');
    const rows = await (await page.waitForFunction((sel) => {
      const r = [...document.querySelectorAll(sel)].map((x) => x.getAttribute('aria-label') || x.textContent);
      return r.some((t) => /Protected routes/.test(t)) ? r : null;
    }, INBOX_ROWS, { timeout: 30000 })).jsonValue();
    step('inbox lists the proposal', { rows });
    const gated = process.env.GATED === '1';
    if (gated) {
      // A packet the git-plane gate blocks (its findings are warnings on a pending packet): the inbox says it is
      // blocked and why (the server's can-apply verdict), and offers no Apply on it; the applicable one has Apply.
      const rowInfo = async (text) => {
        const row = page.locator(INBOX_ROWS, { hasText: text }).first();
        await row.hover();
        return row.evaluate((r) => ({
          label: `${r.getAttribute('aria-label') || ''} | ${r.textContent}`,
          actions: [...r.querySelectorAll('.actions .action-label')].map((a) => a.getAttribute('aria-label') || a.getAttribute('title') || ''),
        }));
      };
      await page.waitForFunction(() => [...document.querySelectorAll('.monaco-list-row')].some((r) => /Cache keys/.test(r.textContent)), null, { timeout: 30000 });
      const blocked = await rowInfo('Cache keys');
      const ready = await rowInfo('Protected routes');
      step('inbox: blocked packet shows why and has no Apply', { blocked, ready });
      if (!/blocked: .*scope_project_mismatch/.test(blocked.label)) throw new Error(`blocked row: ${JSON.stringify(blocked)}`);
      if (blocked.actions.some((a) => /^Apply/.test(a))) throw new Error(`Apply offered on a blocked packet: ${blocked.actions}`);
      if (!ready.actions.some((a) => /^Apply/.test(a))) throw new Error(`no Apply on the applicable packet: ${ready.actions}`);
      await page.screenshot({ path: shot('vscode-inbox-blocked.png') });
    }
    const status = await (await page.waitForFunction((g) => {
      const t = [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent.trim()).find((x) => x.startsWith('Memzoi')) || '';
      // pending, then blocked: "Memzoi 2 1" with the gated packet, "Memzoi 1 0" without (codicons have no text)
      return (g ? /^Memzoi\D*2\D+1\b/ : /^Memzoi\D*1\D+0\b/).test(t) ? t : null;
    }, gated, { timeout: 30000 })).jsonValue();
    step('status bar', { status });

    // 4. Ctrl+. on the pending proposal lists the lifecycle actions (no Source Action… needed); Preview opens a
    // diff; Apply resolves the packet; the History lists the change and undoes it; a refused undo gives one toast.
    if (process.env.APPLY === '1') {
      const proposal = path.join(WS, '.memzoi', 'proposals', 'pending', 'mem_2026_07_06_auth_001.md');
      const quickFix = async (title) => {
        // The menu can come up empty while a just-opened document is still being synchronised with the server:
        // close it and ask again until the action is listed (each try waits for the menu, not for a fixed time).
        for (let attempt = 1; ; attempt++) {
          await page.click('.monaco-editor .view-lines');
          await gotoLine(page, '2:6');
          await page.keyboard.press('Control+.');
          try {
            await page.waitForSelector(`.action-widget .monaco-list-row:has-text("${title}")`, { timeout: 5000 });
            break;
          } catch (err) {
            if (attempt >= 6) throw err;
            log(`Ctrl+. did not list "${title}" yet (try ${attempt}); asking again`);
            await page.keyboard.press('Escape');
          }
        }
        const titles = await page.evaluate(() => [...document.querySelectorAll('.action-widget .monaco-list-row')].map((r) => r.textContent.trim()));
        // Move the keyboard focus onto the action (mouse clicks are blocked by the menu's pointer shield).
        let focused = '';
        for (let i = 0; i < 12; i++) {
          focused = await page.evaluate(() => document.querySelector('.action-widget .monaco-list-row.focused')?.textContent || '');
          if (focused.includes(title)) break;
          await page.keyboard.press('ArrowDown');
        }
        if (!focused.includes(title)) throw new Error(`Ctrl+. menu: the focus never reached "${title}" (menu: ${titles})`);
        return titles;
      };
      // What the window shows besides the editor: open dialogs, toasts and the active tab, for a failure's report.
      const windowState = () => page.evaluate(() => ({
        dialogs: [...document.querySelectorAll('.monaco-dialog-box')].map((e) => e.textContent.trim().slice(0, 300)),
        toasts: [...document.querySelectorAll('.notification-toast')].map((e) => e.textContent.trim().slice(0, 300)),
        tab: document.querySelector('.tab.active')?.textContent?.trim() || null,
      }));
      // Chooses `title` in the Ctrl+. menu of the pending proposal and waits for `done`. Under load the menu can be
      // refreshed between the keyboard focus and Enter, which runs another action or none: each failed try is
      // logged with what the window showed, dismissed, and tried again (three tries in all).
      const runQuickFix = async (title, done, shotName) => {
        for (let attempt = 1; ; attempt++) {
          await quickOpen(page, 'mem_2026_07_06_auth_001.md');
          const titles = await quickFix(title);
          if (shotName) await page.screenshot({ path: shot(shotName) });
          await page.keyboard.press('Enter');
          try {
            await done();
            return titles;
          } catch (err) {
            const state = await windowState();
            if (attempt >= 3) throw new Error(`${title}: ${err.message}; window: ${JSON.stringify(state)}`);
            log(`${title} (try ${attempt}) did not finish; window:`, JSON.stringify(state));
            await page.screenshot({ path: shot(`vscode-retry-${attempt}.png`) }).catch(() => {});
            for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
          }
        }
      };
      // The preview code action is the review flow (issue 28): the diff of every planned file, then one question
      // naming the packet. Cancel writes nothing and closes the diffs.
      const menu = await runQuickFix('Preview: apply proposal',
        () => page.waitForSelector('.monaco-diff-editor', { timeout: 30000 }), 'vscode-quickfix-menu.png');
      step('Ctrl+. lists the lifecycle actions', { menu });
      if (!menu.some((t) => /Apply proposal/.test(t)) || !menu.some((t) => /Reject proposal…/.test(t))) throw new Error(`Ctrl+. menu: ${menu}`);
      await page.waitForSelector('.monaco-dialog-box', { timeout: 30000 });
      const question = (await page.locator('.monaco-dialog-box').innerText()).replace(/\s+/g, ' ');
      const diffTab = await page.evaluate(() => document.querySelector('.tab.active')?.textContent || '');
      step('Preview opens a diff', { tab: diffTab.trim(), question });
      if (!/Protected routes/.test(question)) throw new Error(`the review question does not name the packet: ${question}`);
      if (!fs.existsSync(proposal)) throw new Error('the preview wrote files');
      await page.screenshot({ path: shot('vscode-preview-diff.png') });
      await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Cancel' }).first().click();
      await page.waitForSelector('.monaco-diff-editor', { state: 'detached', timeout: 20000 });
      if (!fs.existsSync(proposal)) throw new Error('Cancel wrote files');

      // Apply from Ctrl+. goes through the same review (memzoi.confirmWrites is on by default): Apply in the question.
      await runQuickFix('Apply proposal', async () => {
        await page.waitForSelector('.monaco-dialog-box', { timeout: 30000 });
        await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Apply' }).first().click();
        const deadline = Date.now() + 30000;
        while (fs.existsSync(proposal) && Date.now() < deadline) await page.waitForTimeout(200);
        if (fs.existsSync(proposal)) throw new Error('the proposal is still pending after Apply');
      });
      const records = fs.readdirSync(path.join(WS, '.memzoi', 'records'));
      step('applied: packet resolved', { records: records.length });
      await page.waitForFunction((sel) => {
        const r = [...document.querySelectorAll(sel)].map((x) => x.textContent);
        return !r.some((t) => /Protected routes/.test(t));
      }, INBOX_ROWS, { timeout: 30000 });
      step('inbox updated', { rows: await inboxRows(page), status: await statusText(page) });
      // The pending file is gone from disk (its tab may stay open): no problem row names it any more.
      // (The gate-blocked packet stays pending with its findings: only rows of other pending files count.)
      await page.keyboard.press('Control+Shift+M');
      await page.waitForFunction(() => ![...document.querySelectorAll('.markers-panel .monaco-list-row')]
        .map((r) => r.getAttribute('aria-label') || r.textContent)
        .some((t) => /proposals\/pending/.test(t) && !/cache_002/.test(t)), null, { timeout: 30000 });
      step('no problems for the removed file');
      await page.screenshot({ path: shot('vscode-problems-after-apply.png') });

      await runCommand(page, 'Memzoi: Show Change History');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("apply · applied")', { timeout: 30000 });
      const history = await page.evaluate(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.textContent.trim()));
      step('History shows the change', { history });
      await page.screenshot({ path: shot('vscode-history.png') });
      await page.keyboard.press('Enter'); // the entry's actions: Open Diff, Undo
      await page.waitForSelector('.quick-input-title:has-text("Memzoi: change")', { timeout: 20000 });
      await page.keyboard.type('Undo');
      await page.keyboard.press('Enter');
      const back = Date.now() + 30000;
      while (!fs.existsSync(proposal) && Date.now() < back) await page.waitForTimeout(200);
      if (!fs.existsSync(proposal)) throw new Error('Undo from the History did not restore the proposal');
      const undoToast = await (await page.waitForFunction(() =>
        [...document.querySelectorAll('.notification-toast')].map((e) => e.textContent).find((t) => /[Uu]ndone|Undid/.test(t)) || null,
        null, { timeout: 20000 })).jsonValue();
      step('Undo from History', { toast: undoToast.slice(0, 300) });
      await page.screenshot({ path: shot('vscode-undo.png') });
      await page.evaluate(() => document.querySelectorAll('.notification-toast .codicon-notifications-clear, .notification-toast .codicon-close').forEach((b) => b.click()));
      await page.keyboard.press('Escape');

      // A refused command: undoing the undone change again. One toast, its first line only.
      await runCommand(page, 'Memzoi: Undo Change…');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("apply · undone")', { timeout: 30000 });
      await page.keyboard.press('Enter');
      await page.waitForSelector('.monaco-dialog-box', { timeout: 20000 }); // "Undo this change?"
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => [...document.querySelectorAll('.notification-toast')].some((e) => /only an applied change/.test(e.textContent)), null, { timeout: 20000 });
      const toasts = await page.evaluate(() => [...document.querySelectorAll('.notification-toast')].map((e) => e.textContent.trim()).filter((t) => /Memzoi|undo|refused/i.test(t)));
      step('one toast on a refusal', { toasts });
      if (toasts.length !== 1) throw new Error(`expected one toast, saw ${toasts.length}: ${toasts}`);
      await page.screenshot({ path: shot('vscode-refusal.png') });

      // A refused Apply: the palette's Apply Proposal on the gate-blocked packet (the inbox and Ctrl+. offer none).
      // The server refuses with the blocking reasons before any confirmation: one toast, its first line only.
      if (gated) {
        await page.evaluate(() => document.querySelectorAll('.notification-toast .codicon-notifications-clear, .notification-toast .codicon-close').forEach((b) => b.click()));
        await page.keyboard.press('Escape');
        await page.waitForFunction(() => ![...document.querySelectorAll('.notification-toast')].some((e) => /Memzoi/.test(e.textContent)), null, { timeout: 20000 });
        await quickOpen(page, 'mem_2026_07_06_cache_002.md');
        await runCommand(page, 'Memzoi: Apply Proposal');
        // Started without a target, it asks which proposal (the one open in the editor is listed first).
        await page.waitForSelector('.quick-input-widget .quick-input-title:has-text("which proposal")', { timeout: 20000 });
        await page.waitForSelector('.quick-input-list .monaco-list-row.focused:has-text("open in the editor")', { timeout: 20000 });
        await page.keyboard.press('Enter');
        // The server's preview refuses it before any confirmation: the toast comes, and no "Apply this proposal?".
        await page.waitForFunction(() => [...document.querySelectorAll('.notification-toast')].some((e) => /applying the proposal is blocked/.test(e.textContent)), null, { timeout: 30000 });
        if (await page.$('.monaco-dialog-box')) throw new Error('the Apply confirmation opened on a blocked packet');
        const applyToasts = await page.evaluate(() => [...document.querySelectorAll('.notification-toast')].map((e) => e.textContent.trim()).filter((t) => /Memzoi|apply|refused|blocked/i.test(t)));
        step('one toast on a refused Apply', { toasts: applyToasts });
        if (applyToasts.length !== 1) throw new Error(`expected one toast on the refused Apply, saw ${applyToasts.length}: ${applyToasts}`);
        if (!fs.existsSync(path.join(WS, '.memzoi', 'proposals', 'pending', 'mem_2026_07_06_cache_002.md'))) throw new Error('the refused Apply moved the packet');
        await page.screenshot({ path: shot('vscode-refused-apply.png') });
      }
    }
    await page.waitForTimeout(500);
    await page.screenshot({ path: shot('vscode-e2e.png') });
    rc = 0;
  } catch (e) {
    report.error = String(e && e.stack || e);
    log('FAIL', report.error);
    await page.screenshot({ path: shot('vscode-e2e-failure.png') }).catch(() => {});
  } finally {
    fs.writeFileSync(OUT, JSON.stringify(report, null, 2));
    await browser.close();
  }
  process.exit(rc);
})();
