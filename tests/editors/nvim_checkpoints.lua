-- Headless Neovim run of `:Memzoi checkpoints` and `:Memzoi health` (editors/nvim) against a real memzoi-lsp: list
-- the checkpoints, continue the open one (previewed, confirmed through vim.ui.select), close it, list again, then
-- open the memory health view.
-- Usage: nvim --headless --clean -l nvim_checkpoints.lua <record-path> <checkpoint-id> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local record, cid, out_path = arg[1], arg[2], arg[3]
local result = lib.result
local memzoi = lib.setup(out_path)
-- The reviewer's answer to the confirmation: Apply (the first choice; the prompt, the preview's summary, is kept).
lib.answer_select()
lib.attach(record)

local function answered(m) return m.last_result ~= nil end
local function written(m) return m.last_write ~= nil end
local function step(cmd, key, done)
  lib.must_run(memzoi, cmd, done)
  result[key] = lib.quickfix()
end

step('Memzoi checkpoints', 'listed', answered)
step('Memzoi checkpoints continue ' .. cid, 'after_continue', written)
result.continued = memzoi.last_write
step('Memzoi checkpoints close ' .. cid, 'after_close', written)
result.closed = memzoi.last_write
step('Memzoi checkpoints', 'relisted', answered)
step('Memzoi health', 'health', answered)
lib.finish(nil)
