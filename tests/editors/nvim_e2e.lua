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
vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
vim.lsp.config('memzoi', { cmd = { (assert(os.getenv('MEMZOI_LSP_CMD'), 'MEMZOI_LSP_CMD')) } })
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

-- 4. The pending proposal: buffer-local commands exist; Reject prompts for a reason (cancelled here).
vim.cmd.edit(vim.fn.fnameescape(root .. '/.memzoi/proposals/pending/mem_2026_07_06_auth_001.md'))
local pbuf = vim.api.nvim_get_current_buf()
if not vim.wait(TIMEOUT, function()
  return client_of(pbuf) ~= nil
end, 20) then
  fail('client did not attach to the proposal')
end
result.same_client = client_of(pbuf).id == client.id
local cmds = vim.tbl_keys(vim.api.nvim_buf_get_commands(pbuf, {}))
table.sort(cmds)
result.buffer_commands = cmds
result.global_memzoi_commands = vim.tbl_filter(function(n)
  return n:match('^Memzoi') ~= nil
end, vim.tbl_keys(vim.api.nvim_get_commands({})))

local prompts = {}
local answers = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(prompts, opts.prompt)
  on_confirm(table.remove(answers, 1))
end
local memzoi = require('memzoi')
local reject = vim.iter(memzoi.commands):find(function(s) return s.name == 'Reject' end)
if memzoi.resolve(client, reject) then
  answers = { nil } -- the user cancels the reason prompt: nothing is executed
  vim.cmd('MemzoiReject')
  result.reject_prompts = vim.deepcopy(prompts)
  result.proposal_still_pending = vim.uv.fs_stat(vim.api.nvim_buf_get_name(pbuf)) ~= nil
end

-- 5. A lifecycle command: Apply the pending proposal (when the server offers it), else Check Workspace.
local apply = vim.iter(memzoi.commands):find(function(s) return s.name == 'Apply' end)
memzoi.last_result, memzoi.last_error = nil, nil
if memzoi.resolve(client, apply) then
  result.lifecycle = 'Apply'
  vim.cmd('MemzoiApply')
  if not vim.wait(TIMEOUT, function()
    return memzoi.last_result ~= nil or memzoi.last_error ~= nil
  end, 20) then
    fail('no answer to :MemzoiApply')
  end
  result.lifecycle_result = memzoi.last_result
  result.lifecycle_error = memzoi.last_error and (memzoi.last_error.message or vim.inspect(memzoi.last_error))
  log('Apply:', vim.json.encode(memzoi.last_result), tostring(result.lifecycle_error))
  -- the file moved on disk: :checktime / a new :edit sees the applied packet and the new record
  result.record_exists = vim.uv.fs_stat(root .. '/.memzoi/records/' .. 'protected-routes-must-validate-sessions-server-side.md') ~= nil
end

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
  vim.cmd('MemzoiResident')
  vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20)
  result.resident_quickfix = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
  memzoi.last_result = nil
  vim.cmd('MemzoiResident approve ' .. resident_id)
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
