-- Headless Neovim run of `:Memzoi local` (editors/nvim) against a real memzoi-lsp: list the local-memory candidates,
-- approve the first, reject the second with a reason.
-- Usage: nvim --headless --clean -l nvim_local.lua <record-path> <approve-id> <reject-id> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local record, approve_id, reject_id, out_path = arg[1], arg[2], arg[3], arg[4]
local result = lib.result
local memzoi = lib.setup(out_path)
lib.attach(record)

local function answered(m) return m.last_result ~= nil end
lib.must_run(memzoi, 'Memzoi local', answered)
result.listed = lib.quickfix()
lib.must_run(memzoi, 'Memzoi local approve ' .. approve_id, answered)
result.approved = memzoi.last_result
lib.must_run(memzoi, 'Memzoi local reject ' .. reject_id .. ' not durable', answered)
result.rejected = memzoi.last_result
lib.finish(nil)
