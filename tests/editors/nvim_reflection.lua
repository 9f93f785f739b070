-- Headless Neovim run of the resident views of issue 34 (editors/nvim) against a real memzoi-lsp: the reflection
-- jobs in the quickfix list, one job's request and outcome in a buffer, approve with edited content and a one-step
-- removal, both through the review flow (preview, then Apply).
-- Usage: nvim --headless --clean -l nvim_reflection.lua <RULES.md> <job-id> <candidate-id> <out.json>
-- Env: MEMZOI_LSP_CMD, MEMZOI_NVIM_DIR, MEMZOI_TIMEOUT_MS. Exits 2 (cquit) with "FAIL: ..." when a step fails.
local rules, job_id, cand_id, out_path = arg[1], arg[2], arg[3], arg[4]
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
memzoi.options.confirm_writes = true
vim.ui.select = function(items, opts, cb) -- the review flow's question: answered Apply, the question kept
  table.insert(result.prompts, opts.prompt)
  cb('Apply')
end

vim.cmd.edit(vim.fn.fnameescape(rules))
local buf = vim.api.nvim_get_current_buf()
local client
if not vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
  return client ~= nil and client.initialized == true and vim.fn.exists(':Memzoi') == 2
end, 20) then
  return finish('client did not attach')
end

local function step(cmd, name)
  memzoi.last_result, memzoi.last_error = nil, nil
  vim.cmd(cmd)
  if not vim.wait(TIMEOUT, function() return memzoi.last_result ~= nil or memzoi.last_error ~= nil end, 20) then
    finish('no answer to ' .. cmd)
    return false
  end
  result[name] = memzoi.last_result
  result[name .. '_error'] = memzoi.last_error and memzoi.last_error.message or nil
  return true
end

if not step('Memzoi resident jobs', 'state') then return end
result.jobs_quickfix = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
vim.api.nvim_set_current_buf(buf)
if not step('Memzoi resident job ' .. job_id, 'job') then return end
result.job_buffer_name = vim.api.nvim_buf_get_name(0)
result.job_buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
vim.api.nvim_set_current_buf(buf)
-- edit: the preview answers first, then the approve itself; wait for the approve's answer
memzoi.last_write = nil
vim.cmd('Memzoi resident edit ' .. cand_id .. ' Run make lint and make test before pushing.')
if not vim.wait(TIMEOUT, function() return memzoi.last_write ~= nil end, 20) then
  return finish('no answer to the edit')
end
result.edited = memzoi.last_write
vim.api.nvim_set_current_buf(buf)
memzoi.last_write = nil
vim.cmd('Memzoi resident remove tabs')
if not vim.wait(TIMEOUT, function() return memzoi.last_write ~= nil end, 20) then
  return finish('no answer to the removal')
end
result.removed = memzoi.last_write
finish(nil)
