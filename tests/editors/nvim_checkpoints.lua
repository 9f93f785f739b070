-- Headless Neovim run of `:Memzoi checkpoints` and `:Memzoi health` (editors/nvim) against a real memzoi-lsp: list
-- the checkpoints, continue the open one (previewed, confirmed through vim.ui.select), close it, list again, then
-- open the memory health view.
-- Usage: nvim --headless --clean -l nvim_checkpoints.lua <record-path> <checkpoint-id> <out.json>
-- Env: MEMZOI_LSP_CMD, MEMZOI_NVIM_DIR, MEMZOI_TIMEOUT_MS. Exits 2 (cquit) with "FAIL: ..." when a step fails.
local record, cid, out_path = arg[1], arg[2], arg[3]
local TIMEOUT = tonumber(os.getenv('MEMZOI_TIMEOUT_MS') or '30000')
local result = { prompts = {} }
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
-- The reviewer's answer to the confirmation: Apply (the prompt, the preview's summary, is kept for the test).
vim.ui.select = function(choices, opts, on_choice)
  table.insert(result.prompts, opts.prompt)
  on_choice(choices[1])
end

vim.cmd.edit(vim.fn.fnameescape(record))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
  return client ~= nil and client.initialized == true and vim.fn.exists(':Memzoi') == 2
end, 20) then
  return finish('client did not attach')
end

local function step(cmd, key, done)
  memzoi.last_result, memzoi.last_write = nil, nil
  vim.cmd(cmd)
  if not vim.wait(TIMEOUT, done, 20) then
    return false
  end
  result[key] = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
  return true
end

if not step('Memzoi checkpoints', 'listed', function() return memzoi.last_result ~= nil end) then
  return finish('no answer to :Memzoi checkpoints')
end
if not step('Memzoi checkpoints continue ' .. cid, 'after_continue', function() return memzoi.last_write ~= nil end) then
  return finish('no answer to :Memzoi checkpoints continue')
end
result.continued = memzoi.last_write
if not step('Memzoi checkpoints close ' .. cid, 'after_close', function() return memzoi.last_write ~= nil end) then
  return finish('no answer to :Memzoi checkpoints close')
end
result.closed = memzoi.last_write
if not step('Memzoi checkpoints', 'relisted', function() return memzoi.last_result ~= nil end) then
  return finish('no answer to the second :Memzoi checkpoints')
end
if not step('Memzoi health', 'health', function() return memzoi.last_result ~= nil end) then
  return finish('no answer to :Memzoi health')
end
finish(nil)
