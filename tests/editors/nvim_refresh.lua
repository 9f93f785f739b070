-- Headless Neovim run on an open record (editors/nvim) against a real memzoi-lsp: the project's configuration
-- changes on disk while the buffer stays untouched, and the buffer's diagnostic follows it (the server's
-- workspace/diagnostic/refresh, answered by the client pulling again: Neovim 0.11 has no refresh of its own).
-- Usage: nvim --headless --clean -l nvim_refresh.lua <record.md> <config.toml> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local record, config, out_path = arg[1], arg[2], arg[3]
local result = lib.result
lib.setup(out_path)
local buf = lib.attach(record, 'client did not attach to the record')
local CODE = 'id_path_mismatch'

local function severity()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == CODE then
      return d.severity
    end
  end
end

if not lib.wait(function() return severity() == vim.diagnostic.severity.WARN end, 50) then
  result.seen = vim.tbl_map(function(d) return { code = d.code, severity = d.severity } end, vim.diagnostic.get(buf))
  lib.finish('no ' .. CODE .. ' warning on the record')
end
result.before = severity()
result.changedtick = vim.b[buf].changedtick
local f = assert(io.open(config, 'a'))
f:write('\n[rules]\nseverity = { ' .. CODE .. ' = "information" }\n')
f:close()
if not lib.wait(function() return severity() == vim.diagnostic.severity.INFO end, 50) then
  result.after = severity()
  lib.finish(CODE .. ' kept its old severity after the configuration changed')
end
result.after = severity()
result.untouched = vim.b[buf].changedtick == result.changedtick
result.repulled = require('memzoi.sync').last_repull
lib.finish(nil)
