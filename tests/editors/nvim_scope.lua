-- Headless Neovim run of which file editors/nvim's commands are about, with no server (a stand-in client records
-- each request and answers it): `:Memzoi resident` from a packet, a record and the resident file, and
-- `:Memzoi history` from a record and with `all`; and the one line of a runtime refusal the core words.
-- Usage: nvim --headless --clean -l nvim_scope.lua <project root> <out.json>
-- Env: MEMZOI_NVIM_DIR (editors/nvim), MEMZOI_RUNTIME_REFUSAL (a core runtime error's message). Exit status 0.
local root, out_path = arg[1], arg[2]
vim.fn.chdir(root)
vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
vim.o.columns = 80
local memzoi = require('memzoi')
memzoi.setup({ confirm_writes = false })
local ui = require('memzoi.ui')
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end
local result = {}

-- The stand-in client: every command advertised, each request recorded and answered with `answers[command]`.
local sent, answers = {}, {}
local client = {
  name = 'memzoi',
  root_dir = root,
  server_capabilities = { executeCommandProvider = { commands = { 'memzoi.history', 'memzoi.resident.list' } } },
}
function client:request(_, params, handler)
  table.insert(sent, { command = params.command, arg = params.arguments[1] })
  handler(nil, answers[params.command])
  return true, 1
end
memzoi.client_for = function()
  return client
end
answers['memzoi.resident.list'] = { scopes = {}, candidates = {} }
answers['memzoi.history'] = { { change_id = 'chg_1', operation = 'apply', status = 'applied', files = {} } }

local function run(path, cmd)
  vim.cmd.edit(vim.fn.fnameescape(path))
  sent, notes = {}, {}
  vim.cmd(cmd)
  local s = sent[1] or {}
  return { command = s.command, uri = type(s.arg) == 'table' and s.arg.uri or vim.NIL,
    note = notes[#notes] and notes[#notes].msg or vim.NIL, title = vim.fn.getqflist({ title = 1 }).title }
end

-- D2: `:Memzoi resident` works from any buffer; the URI goes only with a resident file.
result.resident_packet = run(root .. '/.memzoi/proposals/pending/mcp-run-cargo-fmt.md', 'Memzoi resident')
result.resident_record = run(root .. '/.memzoi/records/use-node-22.md', 'Memzoi resident')
result.resident_rules = run(root .. '/.zuno/RULES.md', 'Memzoi resident')
-- D5: `:Memzoi history` from a record names whose history it lists; `all` lists every change.
result.history_record = run(root .. '/.memzoi/records/use-node-22.md', 'Memzoi history')
result.history_all = run(root .. '/.memzoi/records/use-node-22.md', 'Memzoi history all')
result.complete_history = memzoi.complete('a', 'Memzoi history a', 0)
-- D9: a runtime refusal as the core words it, in one 80-column line.
notes = {}
local runtime = { code = -32803, message = os.getenv('MEMZOI_RUNTIME_REFUSAL'),
  data = { code = 'disk_full', message = os.getenv('MEMZOI_RUNTIME_REFUSAL') } }
ui.notify('Apply preview refused: ' .. ui.refusal(runtime), vim.log.levels.ERROR)
result.runtime_line = notes[1] and notes[1].msg

local fh = assert(io.open(out_path, 'w'))
fh:write(vim.json.encode(result), '\n')
fh:close()
vim.cmd('qall!')
