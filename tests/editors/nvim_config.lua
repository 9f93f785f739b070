-- Headless Neovim run on a project's `.memzoi/config.toml` (editors/nvim) against a real memzoi-lsp: the client
-- attaches to it and shows the server's findings (those `memzoi check .memzoi/config.toml` reports).
-- Usage: nvim --headless --clean -l nvim_config.lua <config.toml> <out.json>
-- Env and exit status: nvim_lib.lua.
package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
local lib = require('nvim_lib')
local config, out_path = arg[1], arg[2]
local result = lib.result
lib.setup(out_path)
local buf, client = lib.attach(config, 'client did not attach to .memzoi/config.toml')
result.filetype = vim.bo[buf].filetype
result.root_dir = client.root_dir
if not lib.wait(function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'invalid_config' then
      return true
    end
  end
  return false
end, 50) then
  lib.finish('no invalid_config diagnostic on .memzoi/config.toml')
end
result.diagnostics = vim.tbl_map(function(d)
  return { code = d.code, lnum = d.lnum, message = d.message }
end, vim.diagnostic.get(buf))
lib.finish(nil)
