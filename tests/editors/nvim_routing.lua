-- Headless Neovim run of `:Memzoi route` (editors/nvim) against a real memzoi-lsp on an agent's session-end file:
-- the diagnostics, the preview in the quickfix list (nothing written yet), then Apply.
-- Usage: nvim --headless --clean -l nvim_routing.lua <session.yml> <out.json>
-- Env: MEMZOI_LSP_CMD, MEMZOI_NVIM_DIR, MEMZOI_TIMEOUT_MS. Exits 2 (cquit) with "FAIL: ..." when a step fails.
local input, out_path = arg[1], arg[2]
local TIMEOUT = tonumber(os.getenv('MEMZOI_TIMEOUT_MS') or '30000')
local result = {}
local function finish(err)
  result.error = err
  local fh = assert(io.open(out_path, 'w'))
  fh:write(vim.json.encode(result), '\n')
  fh:close()
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  if err then
    io.stderr:write('FAIL: ' .. err .. '\n')
    vim.cmd('cquit 2')
  end
  vim.cmd('qall!')
end

vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
vim.lsp.config('memzoi', { cmd = { (assert(os.getenv('MEMZOI_LSP_CMD'), 'MEMZOI_LSP_CMD')) } })
vim.lsp.enable('memzoi')
local memzoi = require('memzoi')

vim.cmd.edit(vim.fn.fnameescape(input))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
  return client ~= nil and client.initialized == true and vim.fn.exists(':Memzoi') == 2
end, 20) then
  return finish('client did not attach to the session-end file')
end
if not vim.wait(TIMEOUT, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  return finish('no diagnostics on the session-end file')
end
result.diagnostics = vim.tbl_map(function(d) return { code = d.code, lnum = d.lnum } end, vim.diagnostic.get(buf))

-- The preview, answered Cancel: nothing is written.
local prompts = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(prompts, opts.prompt)
  on_choice(result.answer)
end
result.answer = 'Cancel'
memzoi.last_result = nil
vim.cmd('Memzoi route')
if not vim.wait(TIMEOUT, function() return #prompts == 1 end, 20) then
  return finish('no routing preview')
end
result.preview = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
result.prompts = prompts
-- Fix the file (the unsafe candidate becomes needs_review), then preview again and Apply.
vim.cmd([[%s/sensitivity: unknown/sensitivity: repo-safe/]])
vim.cmd('silent write')
if not vim.wait(TIMEOUT, function() return #vim.diagnostic.get(buf) == 0 end, 50) then
  return finish('diagnostics did not clear after the fix')
end
result.answer = 'Apply'
memzoi.last_result = nil
vim.cmd('Memzoi route')
if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil and memzoi.last_result.status ~= nil end, 20) then
  return finish('no answer to the routing apply')
end
result.applied = memzoi.last_result
result.prompts = prompts
finish(nil)
