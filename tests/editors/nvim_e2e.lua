-- Headless Neovim end-to-end run of editors/nvim against a real memzoi-lsp.
-- Usage: nvim --headless --clean -l nvim_e2e.lua <workspace-root> <out.json>
-- Env and exit status: nvim_lib.lua (MEMZOI_TIMEOUT_MS defaults to 20 s here).
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local root = assert(arg[1], 'arg1: workspace root')
local out_path = assert(arg[2], 'arg2: output json')
local TIMEOUT = lib.timeout(20000)
lib.TIMEOUT = TIMEOUT
local t0 = vim.uv.hrtime()
local result = lib.result
result.steps = {}
-- The screen stays headless Neovim's own 80 x 24 grid (resizing it without a UI attached trips an assertion in
-- Neovim 0.11): a message that fits its command line (v:echospace) fits one at 120 columns too.
-- Every notification of the run, as the user would read it on the command line.
local all_notes = {}
do
  local real = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(all_notes, { msg = msg, level = level, echospace = vim.v.echospace })
    return real(msg, level, opts)
  end
end
--- The screen as text (the default grid), after a redraw.
local function screen_text()
  vim.cmd('redraw!')
  local rows = {}
  for r = 1, vim.o.lines do
    local cells = {}
    for c = 1, vim.o.columns do
      cells[#cells + 1] = vim.fn.screenstring(r, c)
    end
    rows[#rows + 1] = (table.concat(cells):gsub('%s+$', ''))
  end
  return table.concat(rows, '\n')
end

local function log(...)
  io.stdout:write(string.format('[%5dms] ', math.floor((vim.uv.hrtime() - t0) / 1e6)), table.concat({ ... }, ' '), '\n')
end
local write_result, fail = lib.write_result, lib.finish

-- Load editors/nvim the way a user does: on 'runtimepath', then vim.lsp.config/enable.
-- A user's own on_attach (it replaces any the config had): the :Memzoi command must not depend on it.
lib.setup(out_path, {
  on_attach = function(_, bufnr)
    result.user_on_attach = (result.user_on_attach or 0) + 1
    vim.keymap.set('n', 'K', vim.lsp.buf.hover, { buffer = bufnr }) -- what a user's on_attach typically does
  end,
})
log('nvim', tostring(vim.version()))

local client_of = lib.client_of

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
-- The review flow's question (Apply / Cancel): what the tab showed is recorded, then `review_answer` is given.
local review_answer, reviews = 'Apply', {}
local function capture_review(prompt)
  local tab = vim.api.nvim_get_current_tabpage()
  local wins = vim.api.nvim_tabpage_list_wins(tab)
  local shown = {}
  for _, w in ipairs(wins) do
    local b = vim.api.nvim_win_get_buf(w)
    table.insert(shown, { name = vim.api.nvim_buf_get_name(b), col = vim.api.nvim_win_get_position(w)[2],
      diff = vim.wo[w].diff, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) })
  end
  table.sort(shown, function(a, b) return a.col < b.col end)
  return { prompt = prompt, tabs = #vim.api.nvim_list_tabpages(), windows = shown, splitright = vim.o.splitright,
    screen = screen_text() }
end
local undo_questions = {}
-- `review_hook`, when set, runs while the review tab is shown, before the answer (another writer edits a file);
-- a stale refusal's offer of a new preview is recorded and answered Cancel.
local review_hook, stale_questions = nil, {}
vim.ui.select = function(items, opts, on_choice)
  if items[1] == 'Preview again' and items[2] == 'Cancel' then
    table.insert(stale_questions, opts.prompt)
    return on_choice('Cancel', 2)
  end
  if items[1] == 'Undo' and items[2] == 'Cancel' then -- the undo confirmation: recorded, answered Undo
    table.insert(undo_questions, opts.prompt)
    return on_choice('Undo', 1)
  end
  if items[1] == 'Apply' and items[2] == 'Cancel' then
    table.insert(reviews, capture_review(opts.prompt))
    if review_hook then
      review_hook()
    end
    return on_choice(review_answer, review_answer == 'Apply' and 1 or 2)
  end
  local titles = {}
  for _, it in ipairs(items) do
    local action = it.action or it
    table.insert(titles, action.title or (opts.format_item and opts.format_item(it)) or tostring(it))
  end
  table.insert(menus, titles)
  for i, t in ipairs(titles) do
    if t == pick_title or (type(pick_title) == 'string' and pick_title:sub(-1) == '*'
        and vim.startswith(t, pick_title:sub(1, -2))) then
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
  local seen = #reviews
  memzoi.last_write = nil
  vim.lsp.buf.code_action()
  local res, err = wait_answer(title .. ' from the code-action menu')
  if not (#reviews > seen and review_answer ~= 'Apply') then
    -- a write (after its review, when it has one): `last_write` is its result, not that of a list an
    -- inboxChanged refresh asked for meanwhile
    vim.wait(TIMEOUT, function() return memzoi.last_error ~= nil or memzoi.last_write ~= nil end, 20)
    res, err = memzoi.last_write, memzoi.last_error
  end
  result[key .. '_reviews'] = #reviews - seen
  result[key .. '_review'] = reviews[seen + 1]
  result[key .. '_menu'], result[key .. '_prompts'] = menus[1], vim.deepcopy(prompts)
  result[key .. '_result'], result[key .. '_error'] = res, err and err.message
  log(title, vim.json.encode(res), tostring(err and err.message))
  return res
end
-- :Memzoi inbox: the pending proposals with the server's verdict (the core's can-apply rule) in the quickfix list.
memzoi.last_result, memzoi.last_error = nil, nil
vim.cmd('Memzoi inbox')
wait_answer(':Memzoi inbox')
result.inbox = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
local rejected = from_menu('reject', 'Reject proposal…', 'duplicate of an existing record')
result.code_action_menu = result.reject_menu
result.rejected_moved = vim.uv.fs_stat(pending_path) == nil

-- :Memzoi history fills the quickfix list without moving the cursor; :Memzoi undo completes the change ids.
memzoi.last_result, memzoi.last_error = nil, nil
local win = vim.api.nvim_get_current_win()
vim.cmd('Memzoi history')
wait_answer(':Memzoi history')
-- The list shows the reject's change (waited for: an answer left over from an earlier step must not stand in).
local reject_change = type(rejected) == 'table' and rejected.change_id or nil
lib.wait(function()
  return reject_change == nil or vim.iter(vim.fn.getqflist()):any(function(i) return i.text:find(reject_change, 1, true) ~= nil end)
end)
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
result.undo_questions = vim.deepcopy(undo_questions)
result.proposal_restored = vim.uv.fs_stat(pending_path) ~= nil
vim.cmd.edit({ args = { vim.fn.fnameescape(pending_path) }, bang = true })
pbuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(pbuf) ~= nil end, 20)

-- 4c. :Memzoi preview: the planned files of applying the proposal as diff splits in a new tab; nothing written.
memzoi.last_result = nil
reviews, review_answer = {}, 'Cancel'
vim.cmd('Memzoi preview')
wait_answer(':Memzoi preview')
result.preview_files = vim.tbl_map(function(f) return f.path end, (memzoi.last_result or {}).files or {})
result.preview_review = reviews[1]
result.preview_diff_windows = reviews[1] and #vim.tbl_filter(function(w) return w.diff end, reviews[1].windows) or 0
result.preview_tabs_after = #vim.api.nvim_list_tabpages()
-- memzoi.review, the contract's Review proposal… action: handled by the client (never sent), the same flow.
reviews, review_answer = {}, 'Cancel'
memzoi.last_result = nil
client:exec_cmd({ title = 'Review proposal…', command = 'memzoi.review', arguments = { { uri = vim.uri_from_fname(pending_path) } } },
  { bufnr = pbuf })
wait_answer('memzoi.review')
result.review_command = { reviews = #reviews, tabs = reviews[1] and reviews[1].tabs,
  tabs_after = #vim.api.nvim_list_tabpages(), wrote_nothing = vim.uv.fs_stat(pending_path) ~= nil }
result.preview_wrote_nothing = vim.uv.fs_stat(pending_path) ~= nil
  and vim.uv.fs_stat(root .. '/.memzoi/records/protected-routes-must-validate-sessions-server-side.md') == nil
vim.cmd('tabonly!')
vim.cmd.edit({ args = { vim.fn.fnameescape(pending_path) }, bang = true })
pbuf = vim.api.nvim_get_current_buf()

-- 4d. Started without a target (from a record's buffer): :Memzoi apply asks which pending proposal, never guesses;
-- the chosen packet's review is shown, Cancel writes nothing.
vim.api.nvim_set_current_buf(buf)
reviews, review_answer, menus = {}, 'Cancel', {}
pick_title = 'Protected routes must validate sessions server-side*'
memzoi.last_result, memzoi.last_error = nil, nil
vim.cmd('Memzoi apply')
vim.wait(TIMEOUT, function() return #reviews > 0 end, 20)
result.picked_apply = { menu = menus[1], reviews = #reviews, question = reviews[1] and reviews[1].prompt,
  wrote_nothing = vim.uv.fs_stat(pending_path) ~= nil, buffer = vim.api.nvim_buf_get_name(0) }
pick_title = nil
vim.cmd('tabonly!')
vim.cmd.edit({ args = { vim.fn.fnameescape(pending_path) }, bang = true })
pbuf = vim.api.nvim_get_current_buf()

-- 5. A lifecycle command from any buffer's command line: :Memzoi apply on the pending proposal.
memzoi.last_result, memzoi.last_error = nil, nil
result.lifecycle = 'Apply'
-- Preview, then write, in one flow: :Memzoi apply shows the diff tab, the user answers Apply, the change is written.
-- 'splitright' is on, which would put a plain :vnew on the right: before must still be on the left.
vim.o.splitright = true
reviews, review_answer, prompts = {}, 'Apply', {}
local pending_text = table.concat(vim.api.nvim_buf_get_lines(pbuf, 0, -1, false), '\n')
vim.cmd('Memzoi apply')
wait_answer(':Memzoi apply')
vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil and memzoi.last_result.change_id ~= nil or memzoi.last_error ~= nil end, 20)
result.apply_review = reviews[1]
result.apply_reviews = #reviews
result.apply_prompts = vim.deepcopy(prompts)
result.apply_pending_text = pending_text
result.apply_tabs_after = #vim.api.nvim_list_tabpages()
vim.o.splitright = false
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
review_answer = 'Cancel'
local planned = from_menu('supersede_preview', 'Preview: supersede record…', 'files grew', 'Prefer source files below 800 lines')
review_answer = 'Apply'
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

local function text_of(b) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') end
local function disk_of(path)
  local fh = io.open(path, 'r')
  if not fh then return nil end
  local t = fh:read('*a'); fh:close()
  return (t:gsub('\n$', ''))
end

-- 5a'. Hidden-buffer reload after apply: the superseded record stays loaded but hidden while its supersede packet is
-- applied (through the review flow); its buffer then shows the new disk text.
do
  local sup = result.supersede_result or {}
  local packet
  for _, f in ipairs(sup.files or {}) do
    if f.before == 'absent' then packet = f.path end
  end
  if packet then
    vim.cmd.edit(vim.fn.fnameescape(root .. '/' .. packet))
    local sbuf = vim.api.nvim_get_current_buf()
    vim.wait(TIMEOUT, function() return client_of(sbuf) ~= nil end, 20)
    -- A stale verdict is refused: the superseded record is edited on disk while the diff tab is shown; Apply sends
    -- the preview's fingerprint, the server refuses (preview_stale), nothing is written, a new preview is offered.
    local fh0 = io.open(other, 'rb')
    local original = fh0:read('*a')
    fh0:close()
    review_hook = function()
      local fa = io.open(other, 'ab')
      fa:write('A line added by hand while the diff was open.\n')
      fa:close()
    end
    memzoi.last_result, memzoi.last_error, reviews, stale_questions = nil, nil, {}, {}
    vim.cmd('Memzoi apply')
    vim.wait(TIMEOUT, function() return #stale_questions > 0 or (type(memzoi.last_result) == 'table'
      and memzoi.last_result.change_id ~= nil) end, 20)
    review_hook = nil
    local edited = disk_of(other)
    result.stale_apply = { reviews = #reviews, again = stale_questions[1],
      code = memzoi.last_error and type(memzoi.last_error.data) == 'table' and memzoi.last_error.data.code or nil,
      error = memzoi.last_error and memzoi.last_error.message,
      edit_kept = edited ~= nil and edited:find('added by hand', 1, true) ~= nil,
      packet_kept = vim.uv.fs_stat(root .. '/' .. packet) ~= nil }
    log('stale apply:', vim.json.encode(result.stale_apply))
    local fw = io.open(other, 'wb')
    fw:write(original)
    fw:close()
    local old_text = text_of(obuf)
    memzoi.last_result, memzoi.last_error, reviews = nil, nil, {}
    vim.cmd('Memzoi apply')
    vim.wait(TIMEOUT, function()
      return memzoi.last_error ~= nil or (type(memzoi.last_result) == 'table' and memzoi.last_result.change_id ~= nil)
    end, 20)
    local info = vim.fn.getbufinfo(obuf)[1] or {}
    local disk = disk_of(other)
    vim.wait(TIMEOUT, function() return text_of(obuf) == disk end, 20)
    result.supersede_apply = { result = memzoi.last_result, error = memzoi.last_error and memzoi.last_error.message,
      reviews = #reviews, files = reviews[1] and #vim.tbl_filter(function(l) return l:match('^=== ') end,
        reviews[1].windows[1].lines) or 0,
      hidden = info.hidden == 1, loaded = info.loaded == 1, changed_on_disk = disk ~= old_text,
      buffer_is_disk = text_of(obuf) == disk, superseded = disk ~= nil and disk:find('status: superseded', 1, true) ~= nil }
    log('supersede apply:', vim.json.encode(result.supersede_apply))
  end
end

-- 5a''. Reject of a packet with error diagnostics while its buffer is hidden, started with an explicit target (as
-- an inbox row or a lens does): the reason is asked, and the deleted file's diagnostics are gone.
do
  local bad = root .. '/.memzoi/proposals/pending/mem_bad_lane.md'
  vim.cmd.edit(vim.fn.fnameescape(bad))
  local bbuf = vim.api.nvim_get_current_buf()
  vim.wait(TIMEOUT, function() return #vim.diagnostic.get(bbuf) > 0 end, 20)
  local before = #vim.diagnostic.get(bbuf)
  -- Its blocked Apply is in the code-action menu with the reason, and picking it runs nothing: it says why.
  memzoi.last_result, memzoi.last_error, prompts, menus = nil, nil, {}, {}
  local picked = pick_title
  pick_title = 'Apply proposal (blocked: *'
  vim.lsp.buf.code_action()
  vim.wait(TIMEOUT, function() return memzoi.last_error ~= nil end, 20)
  result.blocked_menu = { menu = menus[1], error = memzoi.last_error and memzoi.last_error.message,
    result = memzoi.last_result, prompts = vim.deepcopy(prompts), still_pending = vim.uv.fs_stat(bad) ~= nil }
  log('blocked menu:', vim.json.encode(result.blocked_menu))
  pick_title = picked
  vim.cmd.edit(vim.fn.fnameescape(other))
  memzoi.last_result, memzoi.last_error, prompts, answers = nil, nil, {}, { 'lane is not one of Memzoi\'s' }
  client:exec_cmd({ title = 'Reject', command = 'memzoi.reject', arguments = { { uri = vim.uri_from_fname(bad) } } },
    { bufnr = vim.api.nvim_get_current_buf() })
  vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil or memzoi.last_error ~= nil end, 20)
  vim.wait(TIMEOUT, function() return #vim.diagnostic.get(bbuf) == 0 end, 20)
  result.deleted_diagnostics = { before = before, after = #vim.diagnostic.get(bbuf), prompts = vim.deepcopy(prompts),
    hidden = (vim.fn.getbufinfo(bbuf)[1] or {}).hidden == 1, file_gone = vim.uv.fs_stat(bad) == nil,
    status = type(memzoi.last_result) == 'table' and memzoi.last_result.status or nil,
    error = memzoi.last_error and memzoi.last_error.message }
  log('deleted diagnostics:', vim.json.encode(result.deleted_diagnostics))
end

-- 5a'''. The memzoi/changed handler with the contract's params, sent directly: a hidden buffer whose file changed
-- is re-read, a modified one is left alone, a deleted file's diagnostics go; memzoi/inboxChanged refreshes the
-- inbox quickfix list in place.
do
  local changed = vim.lsp.get_client_by_id(client.id).handlers['memzoi/changed']
  local notes_path = root .. '/NOTES.md'
  local gone = root .. '/gone.md'
  local fh = io.open(gone, 'w'); fh:write('# Gone\n'); fh:close()
  vim.cmd.edit(vim.fn.fnameescape(gone))
  local gbuf = vim.api.nvim_get_current_buf()
  vim.diagnostic.set(vim.lsp.diagnostic.get_namespace(client.id, false), gbuf,
    { { lnum = 0, col = 0, message = 'stale finding', severity = vim.diagnostic.severity.ERROR } })
  local mod = root .. '/modified.md'
  fh = io.open(mod, 'w'); fh:write('disk\n'); fh:close()
  vim.cmd.edit(vim.fn.fnameescape(mod))
  local mbuf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(mbuf, 0, -1, false, { 'typed by the user' })
  vim.cmd.edit(vim.fn.fnameescape(other))
  os.remove(gone)
  fh = io.open(notes_path, 'w'); fh:write('# Notes\n\nRewritten on disk.\n'); fh:close()
  fh = io.open(mod, 'w'); fh:write('disk changed\n'); fh:close()
  changed(nil, { changeId = 'chg_test', operation = 'apply', message = 'Applied "x" -> records/x.md',
    touched = { { uri = vim.uri_from_fname(notes_path), deleted = false }, { uri = vim.uri_from_fname(gone), deleted = true },
      { uri = vim.uri_from_fname(mod), deleted = false } } }, { client_id = client.id, method = 'memzoi/changed' })
  result.changed_handler = {
    notes_hidden = (vim.fn.getbufinfo(outside)[1] or {}).hidden == 1,
    notes_reloaded = text_of(outside) == '# Notes\n\nRewritten on disk.',
    deleted_cleared = #vim.diagnostic.get(gbuf) == 0,
    modified_kept = text_of(mbuf) == 'typed by the user',
  }
  vim.api.nvim_buf_delete(mbuf, { force = true })
  -- inboxChanged: the shown inbox is refreshed without a manual Refresh
  memzoi.last_result = nil
  vim.cmd('Memzoi inbox')
  wait_answer(':Memzoi inbox')
  local before = #vim.fn.getqflist()
  fh = io.open(root .. '/.memzoi/proposals/pending/mem_from_cli.md', 'w')
  fh:write(os.getenv('MEMZOI_EXTRA_PACKET') or ''); fh:close()
  memzoi.last_result = nil
  vim.lsp.get_client_by_id(client.id).handlers['memzoi/inboxChanged'](nil, vim.empty_dict(),
    { client_id = client.id, method = 'memzoi/inboxChanged' })
  vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20)
  result.inbox_refresh = { before = before, after = #vim.fn.getqflist(),
    title = vim.fn.getqflist({ title = 0 }).title,
    texts = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist()) }
  os.remove(root .. '/.memzoi/proposals/pending/mem_from_cli.md')
  vim.cmd('cclose')
  log('changed handler:', vim.json.encode(result.changed_handler), vim.json.encode(result.inbox_refresh))
end

-- 5b. Tombstone… from the code-action menu of a clean record, the reason answered: a pending packet is created.
vim.cmd.edit(vim.fn.fnameescape(root .. '/.memzoi/records/rust-msrv-is-1-96-1.md'))
local cbuf = vim.api.nvim_get_current_buf()
vim.wait(TIMEOUT, function() return client_of(cbuf) ~= nil end, 20)
from_menu('tombstone', 'Tombstone record…', 'the MSRV moved on')

-- 5c. Re-attest of a hand-edited attested record: the review flow (optional reason asked once), the diff of the
-- attested revision and the current text, then Apply.
do
  local hand = root .. '/.memzoi/records/hand-edited-rule.md'
  vim.cmd.edit(vim.fn.fnameescape(hand))
  local hbuf = vim.api.nvim_get_current_buf()
  vim.wait(TIMEOUT, function() return client_of(hbuf) ~= nil end, 20)
  local before = disk_of(hand)
  local pv = client:request_sync('workspace/executeCommand', { command = 'memzoi.preview',
    arguments = { { uri = vim.uri_from_fname(hand), operation = 'reattest' } } }, TIMEOUT, hbuf)
  reviews, review_answer, prompts, answers = {}, 'Apply', {}, { 'typo fixed' }
  memzoi.last_write, memzoi.last_error = nil, nil
  vim.cmd('Memzoi reattest')
  vim.wait(TIMEOUT, function() return memzoi.last_write ~= nil or memzoi.last_error ~= nil end, 20)
  local r = reviews[1]
  result.reattest = { supported = pv ~= nil and pv.err == nil, prompts = vim.deepcopy(prompts), reviews = #reviews,
    error = memzoi.last_error and memzoi.last_error.message,
    status = type(memzoi.last_write) == 'table' and memzoi.last_write.status or nil,
    written = disk_of(hand) ~= before,
    left = r and table.concat(r.windows[1].lines, '\n'), right = r and table.concat(r.windows[2].lines, '\n'),
    screen = r and r.screen, question = r and r.prompt }
  log('reattest:', vim.json.encode({ result.reattest.supported, result.reattest.status, result.reattest.error }))
end

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
  local lens
  for _, l in ipairs(vim.lsp.codelens.get(rbuf)) do
    if l.command and l.command.title:find('pending candidate', 1, true) then
      lens = l
    elseif l.command then
      -- an informational lens (cap usage): running it is a no-op, with no warning
      client_of(rbuf):exec_cmd(l.command, { bufnr = rbuf })
      result.resident_info_lens = l.command.title
    end
  end
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
  -- Reject candidate… from the code-action menu asks a reason (required, as for a proposal).
  local reject_id = os.getenv('MEMZOI_RESIDENT_REJECT_ID')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  from_menu('resident_reject', 'Reject candidate ' .. reject_id:sub(1, 12) .. '*', 'not house style')
  -- Approve: through the review flow when the server previews a resident candidate (contract §4), else at once.
  local pv = client:request_sync('workspace/executeCommand', { command = 'memzoi.preview',
    arguments = { { uri = vim.uri_from_bufnr(rbuf), operation = 'approve', candidateId = resident_id } } }, TIMEOUT, rbuf)
  result.resident_preview_supported = pv ~= nil and pv.err == nil
  memzoi.options.confirm_writes = result.resident_preview_supported
  local notes_before = #all_notes
  from_menu('resident_approve', 'Approve candidate ' .. resident_id:sub(1, 12) .. '*')
  memzoi.options.confirm_writes = true
  result.resident_approve = result.resident_approve_result
  vim.wait(TIMEOUT, function() return text_of(rbuf) == disk_of(root .. '/.zuno/RULES.md') end, 20)
  result.resident_approve_buffer = text_of(rbuf)
  result.resident_approve_notes = vim.list_slice(all_notes, notes_before + 1)
  notes_before = #all_notes
  from_menu('resident_undo', 'Undo candidate ' .. resident_id:sub(1, 12) .. '*')
  vim.wait(TIMEOUT, function() return text_of(rbuf) == disk_of(root .. '/.zuno/RULES.md') end, 20)
  result.resident_undo_buffer = text_of(rbuf)
  result.resident_undo_disk = disk_of(root .. '/.zuno/RULES.md')
  result.resident_undo_notes = vim.list_slice(all_notes, notes_before + 1)
  log('resident:', vim.json.encode(result.resident_approve), vim.json.encode(result.resident_undo_result))
end

-- Hover of a record after the changes above (its ledger history included): plain text, no Markdown escapes.
vim.cmd.edit(vim.fn.fnameescape(other))
do
  local hb = vim.api.nvim_get_current_buf()
  vim.wait(TIMEOUT, function() return client_of(hb) ~= nil end, 20)
  vim.api.nvim_win_set_cursor(0, { 2, 6 })
  local hp = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local hr = vim.lsp.buf_request_sync(hb, 'textDocument/hover', hp, TIMEOUT) or {}
  local h = hr[client.id] and hr[client.id].result
  result.late_hover = h and h.contents and (h.contents.value or vim.json.encode(h.contents))
  result.late_hover_kind = h and h.contents and h.contents.kind
end

result.notes = all_notes
result.full_messages = require('memzoi.ui').full
result.messages = vim.split(vim.fn.execute('messages'), '\n', { trimempty = true })
result.echospace = vim.v.echospace
result.columns = vim.o.columns

-- 6. Clean shutdown.
write_result()
client:stop()
vim.wait(3000, function()
  return client:is_stopped()
end, 20)
log('stopped:', tostring(client:is_stopped()))
vim.cmd('qall!')
