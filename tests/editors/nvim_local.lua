-- Headless Neovim run of `:Memzoi local` (editors/nvim) against a real memzoi-lsp: list the local-memory candidates,
-- approve the first, reject the second with a reason.
-- Usage: nvim --headless --clean -l nvim_local.lua <record-path> <approve-id> <reject-id> <out.json>
-- Env: MEMZOI_LSP_CMD, MEMZOI_NVIM_DIR, MEMZOI_TIMEOUT_MS. Exits 2 (cquit) with "FAIL: ..." when a step fails.
local record, approve_id, reject_id, out_path = arg[1], arg[2], arg[3], arg[4]
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

vim.cmd.edit(vim.fn.fnameescape(record))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
  return client ~= nil and client.initialized == true and vim.fn.exists(':Memzoi') == 2
end, 20) then
  return finish('client did not attach')
end

memzoi.last_result = nil
vim.cmd('Memzoi local')
if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20) then
  return finish('no answer to :Memzoi local')
end
result.listed = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())

memzoi.last_result = nil
vim.cmd('Memzoi local approve ' .. approve_id)
if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20) then
  return finish('no answer to :Memzoi local approve')
end
result.approved = memzoi.last_result

memzoi.last_result = nil
vim.cmd('Memzoi local reject ' .. reject_id .. ' not durable')
if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil end, 20) then
  return finish('no answer to :Memzoi local reject')
end
result.rejected = memzoi.last_result
finish(nil)
