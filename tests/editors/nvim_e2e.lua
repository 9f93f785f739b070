-- Headless Neovim end-to-end run of editors/nvim against a real memzoi-lsp.
-- Usage: nvim --headless --clean -l nvim_e2e.lua <workspace-root> <out.json>
-- Env: MEMZOI_LSP_CMD (the memzoi-lsp program), MEMZOI_NVIM_DIR (editors/nvim), MEMZOI_TIMEOUT_MS.
-- Writes a JSON report; exits 2 (cquit) with "FAIL: ..." on stderr when a step fails.
local root = assert(arg[1], 'arg1: workspace root')
local out_path = assert(arg[2], 'arg2: output json')
local TIMEOUT = tonumber(os.getenv('MEMZOI_TIMEOUT_MS') or '20000')
local t0 = vim.uv.hrtime()
local result = { steps = {} }

local function log(...)
  io.stdout:write(string.format('[%5dms] ', math.floor((vim.uv.hrtime() - t0) / 1e6)), table.concat({ ... }, ' '), '\n')
end
local function write_result()
  local fh = assert(io.open(out_path, 'w'))
  fh:write(vim.json.encode(result), '\n')
  fh:close()
end
local function fail(msg)
  result.error = msg
  write_result()
  io.stderr:write('FAIL: ' .. msg .. '\n')
  pcall(function()
    for _, c in ipairs(vim.lsp.get_clients()) do
      c:stop(true)
    end
  end)
  vim.cmd('cquit 2')
end

-- Load editors/nvim the way a user does: on 'runtimepath', then vim.lsp.config/enable.
-- A user's own on_attach (it replaces any the config had): the :Memzoi command must not depend on it.
vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
vim.lsp.config('memzoi', {
  cmd = { (assert(os.getenv('MEMZOI_LSP_CMD'), 'MEMZOI_LSP_CMD')) },
  on_attach = function(_, bufnr)
    result.user_on_attach = (result.user_on_attach or 0) + 1
    vim.keymap.set('n', 'K', vim.lsp.buf.hover, { buffer = bufnr }) -- what a user's on_attach typically does
  end,
})
vim.lsp.enable('memzoi')
log('nvim', tostring(vim.version()))

local function client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
end

-- 1. A Markdown file outside .memzoi: no client attaches.
vim.cmd.edit(vim.fn.fnameescape(root .. '/NOTES.md'))
local outside = vim.api.nvim_get_current_buf()
vim.wait(1500, function()
  return client_of(outside) ~= nil
end, 20)
result.attached_outside = client_of(outside) ~= nil
log('attached outside .memzoi:', tostring(result.attached_outside))

-- 1b. JSON: a materialization candidate outside .memzoi attaches (after the record below started the client, the
-- same project's client is reused); any other JSON does not.
local function attached_json(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.wait(3000, function() return client_of(b) ~= nil end, 20)
  return client_of(b) ~= nil
end
result.attached_plain_json = attached_json(root .. '/package.json')

-- 2. The record with the planted secret: attach, then the credential diagnostic.
local t_open = vim.uv.hrtime()
vim.cmd.edit(vim.fn.fnameescape(root .. '/.memzoi/records/deploy-token-rotation.md'))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(TIMEOUT, function()
  client = client_of(buf)
  return client ~= nil and client.initialized == true
end, 20) then
  fail('client did not attach to the record')
end
result.root_dir = client.root_dir
result.offset_encoding = client.offset_encoding
result.server_commands = (client.server_capabilities.executeCommandProvider or {}).commands or {}
log('attached: root', client.root_dir, 'encoding', client.offset_encoding)

if not vim.wait(TIMEOUT, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'credential_token' then
      return true
    end
  end
  return false
end, 20) then
  fail('no credential_token diagnostic: ' .. vim.inspect(vim.diagnostic.get(buf)))
end
result.first_diagnostics_ms = math.floor((vim.uv.hrtime() - t_open) / 1e6)
log('first open -> first diagnostics:', result.first_diagnostics_ms, 'ms')
result.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(result.diagnostics, {
    code = d.code, source = d.source, severity = vim.diagnostic.severity[d.severity],
    lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message,
  })
end
result.secret_line = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
log('diagnostics:', vim.json.encode(result.diagnostics))

-- 3. Hover on the frontmatter (the `id:` line): provenance.
vim.api.nvim_win_set_cursor(0, { 2, 6 }) -- on the id's value (on a key, hover documents the key)
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
local hres, herr = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, TIMEOUT)
if not hres then
  fail('hover failed: ' .. tostring(herr))
end
local hover = hres[client.id] and hres[client.id].result
if not hover then
  fail('no hover: ' .. vim.inspect(hres))
end
result.hover = type(hover.contents) == 'table' and (hover.contents.value or vim.json.encode(hover.contents)) or tostring(hover.contents)
log('hover chars:', tostring(#result.hover))
result.secret_line = nil

result.attached_candidate_json = attached_json(root .. '/materialize/candidate.json')
result.candidate_root = client_of(vim.api.nvim_get_current_buf()) and client_of(vim.api.nvim_get_current_buf()).root_dir

-- 4. The pending proposal: one global :Memzoi command (no buffer-local ones), completing its subcommands.
vim.cmd.edit(vim.fn.fnameescape(root .. '/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md'))
local pbuf = vim.api.nvim_get_current_buf()
local pending_path = vim.api.nvim_buf_get_name(pbuf)
if not vim.wait(TIMEOUT, function()
  return client_of(pbuf) ~= nil
end, 20) then
  fail('client did not attach to the proposal')
end
result.same_client = client_of(pbuf).id == client.id
result.buffer_commands = vim.tbl_keys(vim.api.nvim_buf_get_commands(pbuf, {}))
result.global_memzoi_commands = vim.tbl_filter(function(n)
  return n:match('^Memzoi') ~= nil
end, vim.tbl_keys(vim.api.nvim_get_commands({})))
result.subcommand_completion = vim.fn.getcompletion('Memzoi ', 'cmdline')

local memzoi = require('memzoi')
local prompts, answers, menus = {}, {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(prompts, opts.prompt)
  on_confirm(table.remove(answers, 1))
end
local pick_title
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, it in ipairs(items) do
    local action = it.action or it
    table.insert(titles, action.title or (opts.format_item and opts.format_item(it)) or tostring(it))
  end
  table.insert(menus, titles)
  for i, t in ipairs(titles) do
    if t == pick_title then
      return on_choice(items[i], i)
    end
  end
  on_choice(nil)
end
local function wait_answer(what)
  if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil or memzoi.last_error ~= nil end, 20) then
    fail('no answer to ' .. what)
  end
  return memzoi.last_result, memzoi.last_error
end
-- What `gra` runs: the code-action menu; the user picks `title` and answers the reason prompt with `reason`.
-- Records the menu, the prompts, the result and the error under `key`.
local function from_menu(key, title, reason, ...)
  memzoi.last_result, memzoi.last_error = nil, nil
  prompts, menus = {}, {}
  pick_title, answers = title, { reason, ... }
  vim.lsp.buf.code_action()
  local res, err = wait_answer(title .. ' from the code-action menu')
  result[key .. '_menu'], result[key .. '_prompts'] = menus[1], vim.deepcopy(prompts)
  result[key .. '_result'], result[key .. '_error'] = res, err and err.message
  log(title, vim.json.encode(res), tostring(err and err.message))
  return res
end
-- :Memzoi inbox: the pending proposals with the server's verdict (the core's can-apply rule) in the quickfix list.
memzoi.last_result = nil
vim.cmd('Memzoi inbox')
wait_answer(':Memzoi inbox')
result.inbox = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
local rejected = from_menu('reject', 'Reject proposal…', 'duplicate of an existing record')
result.code_action_menu = result.reject_menu
result.rejected_moved = vim.uv.fs_stat(pending_path) == nil

-- :Memzoi history fills the quickfix list without moving the cursor; :Memzoi undo completes the change ids.
memzoi.last_result = nil
local win = vim.api.nvim_get_current_win()
vim.cmd('Memzoi history')
wait_answer(':Memzoi history')
result.history = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
result.history_kept_window = vim.api.nvim_get_current_win() == win
result.undo_completion = vim.fn.getcompletion('Memzoi undo ', 'cmdline')
-- From inside the quickfix window the history opened (where buffer-local commands used to be missing: E492),
-- :Memzoi still runs: the history again, and a search.
vim.cmd('copen')
result.quickfix_buftype = vim.bo.buftype
local function from_quickfix(cmdline)
  memzoi.last_result, memzoi.last_error = nil, nil
  local ok, err = pcall(vim.cmd, cmdline)
  if not ok then
    return { ok = false, error = tostring(err) }
  end
  local res, rerr = wait_answer(cmdline .. ' from the quickfix window')
  return { ok = rerr == nil, count = type(res) == 'table' and #res or nil, error = rerr and rerr.message }
end
result.quickfix_history = from_quickfix('Memzoi history')
result.quickfix_search = from_quickfix('Memzoi search sessions')
vim.api.nvim_set_current_win(win)
memzoi.last_result = nil
if rejected and rejected.change_id then
  vim.cmd('Memzoi undo ' .. rejected.change_id)
  result.undo_result = wait_answer(':Memzoi undo')
end
result.proposal_restored = vim.uv.fs_stat(pending_path) ~= nil
vim.cmd.edit({ args = { vim.fn.fnameescape(pending_path) }, bang = true })
pbuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(pbuf) ~= nil end, 20)

-- 4c. :Memzoi preview: the planned files of applying the proposal as diff splits in a new tab; nothing written.
memzoi.last_result = nil
vim.cmd('Memzoi preview')
wait_answer(':Memzoi preview')
result.preview_files = vim.tbl_map(function(f) return f.path end, (memzoi.last_result or {}).files or {})
result.preview_diff_windows = #vim.tbl_filter(function(w) return vim.wo[w].diff end, vim.api.nvim_tabpage_list_wins(0))
result.preview_wrote_nothing = vim.uv.fs_stat(pending_path) ~= nil
  and vim.uv.fs_stat(root .. '/.memzoi/records/protected-routes-must-validate-sessions-server-side.md') == nil
vim.cmd('tabonly!')
vim.cmd.edit({ args = { vim.fn.fnameescape(pending_path) }, bang = true })
pbuf = vim.api.nvim_get_current_buf()

-- 5. A lifecycle command from any buffer's command line: :Memzoi apply on the pending proposal.
memzoi.last_result, memzoi.last_error = nil, nil
result.lifecycle = 'Apply'
vim.cmd('Memzoi apply')
wait_answer(':Memzoi apply')
result.lifecycle_result = memzoi.last_result
result.lifecycle_error = memzoi.last_error and (memzoi.last_error.message or vim.inspect(memzoi.last_error))
log('Apply:', vim.json.encode(memzoi.last_result), tostring(result.lifecycle_error))
-- the file moved on disk: :checktime / a new :edit sees the applied packet and the new record
result.record_exists = vim.uv.fs_stat(root .. '/.memzoi/records/' .. 'protected-routes-must-validate-sessions-server-side.md') ~= nil

-- 5a. Supersede… from the code-action menu of another clean record: the reason, then the new title (the server
-- takes an optional title); first its Preview (the same two prompts, nothing written), then the change itself.
local other = root .. '/.memzoi/records/prefer-source-files-below-1000-lines.md'
vim.cmd.edit(vim.fn.fnameescape(other))
local obuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(obuf) ~= nil end, 20)
local pending_before = #vim.fn.glob(root .. '/.memzoi/proposals/pending/*.md', false, true)
local planned = from_menu('supersede_preview', 'Preview: supersede record…', 'files grew', 'Prefer source files below 800 lines')
result.supersede_preview_files = vim.tbl_map(function(f)
  return { path = f.path, before = f.before ~= vim.NIL and f.before ~= nil, titled = type(f.after) == 'string'
    and f.after:find('\n# Prefer source files below 800 lines\n', 1, true) ~= nil }
end, (planned or {}).files or {})
result.supersede_preview_wrote_nothing = #vim.fn.glob(root .. '/.memzoi/proposals/pending/*.md', false, true) == pending_before
vim.cmd('tabonly!')
vim.cmd.edit({ args = { vim.fn.fnameescape(other) }, bang = true })
obuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(obuf) ~= nil end, 20)
from_menu('supersede', 'Supersede record…', 'files grew', 'Prefer source files below 800 lines')

-- 5b. Tombstone… from the code-action menu of a clean record, the reason answered: a pending packet is created.
vim.cmd.edit(vim.fn.fnameescape(root .. '/.memzoi/records/rust-msrv-is-1-96-1.md'))
local cbuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(cbuf) ~= nil end, 20)
from_menu('tombstone', 'Tombstone record…', 'the MSRV moved on')

-- A refusal is one notification: undoing the already undone Reject again is refused by the server.
local notes = {}
local real_notify = vim.notify
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
memzoi.last_result, memzoi.last_error = nil, nil
if rejected and rejected.change_id then
  vim.cmd('Memzoi undo ' .. rejected.change_id)
  wait_answer('the refused undo') -- a server showMessage would have come before its answer
end
vim.notify = real_notify
result.refusal_notes = notes

-- 5b. Resident memory: .zuno/RULES.md attaches with the project as root and gets the cap-usage information;
-- :MemzoiResident lists the pending candidate in the quickfix list; :MemzoiResident approve ID applies it.
local resident_id = os.getenv('MEMZOI_RESIDENT_ID')
if resident_id then
  vim.cmd.edit(vim.fn.fnameescape(root .. '/.zuno/RULES.md'))
  local rbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(TIMEOUT, function() return client_of(rbuf) ~= nil end, 20) then
    fail('client did not attach to .zuno/RULES.md')
  end
  result.resident_root = client_of(rbuf).root_dir
  vim.wait(TIMEOUT, function()
    for _, d in ipairs(vim.diagnostic.get(rbuf)) do
      if d.code == 'resident_cap_usage' then
        return true
      end
    end
    return false
  end, 20)
  result.resident_codes = vim.tbl_map(function(d) return d.code end, vim.diagnostic.get(rbuf))
  -- the code lens, run as a user runs it: its command opens the candidates in the quickfix list
  vim.lsp.codelens.refresh({ bufnr = rbuf })
  vim.wait(TIMEOUT, function() return #vim.lsp.codelens.get(rbuf) > 0 end, 20)
  local lens = vim.lsp.codelens.get(rbuf)[1]
  result.resident_lens = lens and lens.command and lens.command.title
  memzoi.last_result = nil
  vim.fn.setqflist({}, 'r')
  if lens and lens.command then
    client_of(rbuf):exec_cmd(lens.command, { bufnr = rbuf })
    vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20)
  end
  result.resident_lens_quickfix = #vim.fn.getqflist()
  memzoi.last_result = nil
  vim.cmd('Memzoi resident')
  vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20)
  result.resident_quickfix = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
  memzoi.last_result = nil
  vim.cmd('Memzoi resident approve ' .. resident_id)
  vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20)
  result.resident_approve = memzoi.last_result
  log('resident:', vim.json.encode(result.resident_approve))
end

-- 6. Clean shutdown.
write_result()
client:stop()
vim.wait(3000, function()
  return client:is_stopped()
end, 20)
log('stopped:', tostring(client:is_stopped()))
vim.cmd('qall!')
