-- Headless Neovim run of the resident views of issue 34 (editors/nvim) against a real memzoi-lsp: the reflection
-- jobs in the quickfix list, one job's request and outcome in a buffer, approve with edited content and a one-step
-- removal, both through the review flow (preview, then Apply).
-- Usage: nvim --headless --clean -l nvim_reflection.lua <RULES.md> <job-id> <candidate-id> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local rules, job_id, cand_id, out_path = arg[1], arg[2], arg[3], arg[4]
local result = lib.result
local memzoi = lib.setup(out_path)
memzoi.options.confirm_writes = true
lib.answer_select('Apply') -- the review flow's question: answered Apply, the question kept
local buf = lib.attach(rules)

local function step(cmd, name)
  lib.must_run(memzoi, cmd)
  result[name] = memzoi.last_result
  result[name .. '_error'] = memzoi.last_error and memzoi.last_error.message or nil
end

step('Memzoi resident jobs', 'state')
result.jobs_quickfix = lib.quickfix()
vim.api.nvim_set_current_buf(buf)
step('Memzoi resident job ' .. job_id, 'job')
result.job_buffer_name = vim.api.nvim_buf_get_name(0)
result.job_buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
vim.api.nvim_set_current_buf(buf)
-- edit: the preview answers first, then the approve itself; wait for the approve's answer
local function written(m) return m.last_write ~= nil end
if not lib.run(memzoi, 'Memzoi resident edit ' .. cand_id .. ' Run make lint and make test before pushing.', written) then
  lib.finish('no answer to the edit')
end
result.edited = memzoi.last_write
vim.api.nvim_set_current_buf(buf)
if not lib.run(memzoi, 'Memzoi resident remove tabs', written) then
  lib.finish('no answer to the removal')
end
result.removed = memzoi.last_write
lib.finish(nil)
