-- Headless Neovim run of `:Memzoi route` (editors/nvim) against a real memzoi-lsp on an agent's session-end file:
-- the diagnostics, the preview in the quickfix list (nothing written yet), then Apply.
-- Usage: nvim --headless --clean -l nvim_routing.lua <session.yml> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local input, out_path = arg[1], arg[2]
local result = lib.result
local memzoi = lib.setup(out_path)
local buf = lib.attach(input, 'client did not attach to the session-end file')
if not lib.wait(function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  lib.finish('no diagnostics on the session-end file')
end
result.diagnostics = lib.diagnostic_codes(buf)

-- The preview, answered Cancel: nothing is written.
lib.answer_select(function() return result.answer end)
result.answer = 'Cancel'
memzoi.last_result = nil
vim.cmd('Memzoi route')
if not lib.wait(function() return #result.prompts == 1 end) then
  lib.finish('no routing preview')
end
result.preview = lib.quickfix()
-- Fix the file (the unsafe candidate becomes needs_review), then preview again and Apply.
vim.cmd([[%s/sensitivity: unknown/sensitivity: repo-safe/]])
vim.cmd('silent write')
if not lib.wait(function() return #vim.diagnostic.get(buf) == 0 end, 50) then
  lib.finish('diagnostics did not clear after the fix')
end
result.answer = 'Apply'
if not lib.run(memzoi, 'Memzoi route', function(m) return m.last_result ~= nil and m.last_result.status ~= nil end) then
  lib.finish('no answer to the routing apply')
end
result.applied = memzoi.last_result
lib.finish(nil)
