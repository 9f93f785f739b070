// The agent loop in a real VS Code (code-server with the packaged .vsix, playwright-core in headless Debian
// Chromium): with the Memory Inbox shown, an agent (the MCP SDK's client driving memzoi-mcp, tests/editors/
// mcp_agent.py) proposes a memory; the inbox shows it without any refresh command (memzoi/inboxChanged and the
// extension's watchers); the reviewer applies it from its inbox row (diff, then the question naming it); the
// agent's next search_memory finds the record.
// Env: CS_URL, SHOT_DIR and OUT (JSON report) as cs_lib.js reads them, WS, PYTHON (the venv's python), AGENT
// (mcp_agent.py), QUERY (the agent's question). Exits 0 when every step passed, 2 otherwise.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const L = require('./cs_lib');

const WS = process.env.WS;
const { report, step, shot, waitFor, runCommand, row, clickInline, dialog, dialogButton } = L;

/** Runs the agent (one SDK client session) and returns its JSON answer. */
function agent(...args) {
  const out = execFileSync(process.env.PYTHON, [process.env.AGENT, ...args], { encoding: 'utf-8', timeout: 120000 });
  return JSON.parse(out);
}

L.drive('vscode-agent-failure.png', async (page) => {
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
  const question = await dialog(page);
  step('Apply: question', { question });
  if (!question.includes(proposed.title) || !question.includes(proposed.path)) throw new Error(`the question does not name the proposal: ${question}`);
  await dialogButton(page, 'Apply');
  await waitFor('the packet to leave pending', () => !fs.existsSync(path.join(WS, proposed.path)));
  step('applied from the inbox');
  await row(page, proposed.title).waitFor({ state: 'detached', timeout: 45000 });
  step('the inbox no longer lists it');
  await shot(page, 'vscode-agent-applied.png');

  const after = agent('search', WS, process.env.QUERY);
  report.search_after = after;
  step('agent search after review', { ids: after.results.map((h) => h.id) });
});
