-- The shared driver of the headless Neovim tests (nvim_*.lua): load editors/nvim as a user does, attach to a file,
-- wait for conditions, run :Memzoi commands and wait for their answer, and write the JSON report the pytest side
-- reads. A script loads it with
--   package.path = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/?.lua;' .. package.path
--   local lib = require('nvim_lib')
-- Env: MEMZOI_LSP_CMD (the memzoi-lsp program), MEMZOI_NVIM_DIR (editors/nvim), MEMZOI_TIMEOUT_MS.
-- A failed step ends the run with exit status 2 (cquit) and "FAIL: <what>" on stderr; the report holds `error`.
local M = {}

--- How long one wait may take (ms): MEMZOI_TIMEOUT_MS, else `default` (30 s).
function M.timeout(default)
  return tonumber(os.getenv('MEMZOI_TIMEOUT_MS') or tostring(default or 30000))
end

M.TIMEOUT = M.timeout()
--- The report written to the output file (each script adds its keys).
M.result = {}
M.out_path = nil

--- Write the report to `M.out_path` (JSON, one line).
function M.write_result()
  local fh = assert(io.open(assert(M.out_path, 'nvim_lib: out_path not set'), 'w'))
  fh:write(vim.json.encode(M.result), '\n')
  fh:close()
end

--- End the run: the report (with `error` when `err` is given) is written, every client stopped, then Neovim
--- quits (status 2 and "FAIL: err" on stderr when `err` is given).
function M.finish(err)
  M.result.error = err
  M.write_result()
  pcall(function()
    for _, c in ipairs(vim.lsp.get_clients()) do
      c:stop(true)
    end
  end)
  if err then
    io.stderr:write('FAIL: ' .. err .. '\n')
    vim.cmd('cquit 2')
  end
  vim.cmd('qall!')
end

--- Load editors/nvim the way a user does (on 'runtimepath', then vim.lsp.config/enable), with the server command
--- from MEMZOI_LSP_CMD and `extra` merged into the config (e.g. a user's on_attach). `out_path` is where the
--- report goes. Returns require('memzoi').
function M.setup(out_path, extra)
  M.out_path = out_path
  vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
  local config = { cmd = { (assert(os.getenv('MEMZOI_LSP_CMD'), 'MEMZOI_LSP_CMD')) } }
  vim.lsp.config('memzoi', vim.tbl_extend('force', config, extra or {}))
  vim.lsp.enable('memzoi')
  return require('memzoi')
end

--- The memzoi client attached to buffer `buf`, or nil.
function M.client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'memzoi' })[1]
end

--- Wait (up to M.TIMEOUT, or `timeout`) until `cond()` is true; checks every `interval` ms (20). Returns whether it held.
function M.wait(cond, interval, timeout)
  return vim.wait(timeout or M.TIMEOUT, cond, interval or 20) == true
end

--- Edit `path` and wait until the memzoi client is attached and initialized there and :Memzoi exists. Returns the
--- buffer and the client; on timeout the run ends with "client did not attach" (or `what`).
function M.attach(path, what)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local client
  if not M.wait(function()
    client = M.client_of(buf)
    return client ~= nil and client.initialized == true and vim.fn.exists(':Memzoi') == 2
  end) then
    M.finish(what or 'client did not attach')
  end
  return buf, client
end

--- Run the Ex command `cmd` (a :Memzoi subcommand) after clearing the memzoi module's last answer, result, write
--- and error, and wait until `done(memzoi)` holds (default: an answer or an error came). Returns whether it did.
function M.run(memzoi, cmd, done)
  memzoi.last_result, memzoi.last_write, memzoi.last_error = nil, nil, nil
  vim.cmd(cmd)
  return M.wait(function()
    if done then
      return done(memzoi)
    end
    return memzoi.last_result ~= nil or memzoi.last_error ~= nil
  end)
end

--- Like M.run, but the run ends with "no answer to <cmd>" when no answer comes.
function M.must_run(memzoi, cmd, done)
  if not M.run(memzoi, cmd, done) then
    M.finish('no answer to :' .. cmd)
  end
end

--- The texts of the quickfix list.
function M.quickfix()
  return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())
end

--- Answer every vim.ui.select with `answer` (a function of the choices, or a value; default: the first choice),
--- recording each prompt in `M.result.prompts`.
function M.answer_select(answer)
  M.result.prompts = M.result.prompts or {}
  vim.ui.select = function(choices, opts, on_choice)
    table.insert(M.result.prompts, opts.prompt)
    local pick = answer
    if type(answer) == 'function' then
      pick = answer(choices)
    elseif answer == nil then
      pick = choices[1]
    end
    on_choice(pick)
  end
end

--- The diagnostics of `buf` as { code, lnum } pairs (what the tests compare).
function M.diagnostic_codes(buf)
  return vim.tbl_map(function(d) return { code = d.code, lnum = d.lnum } end, vim.diagnostic.get(buf))
end

return M
