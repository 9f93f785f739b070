-- Headless Neovim run of editors/nvim's "nothing stale" rules with no server: the `memzoi/changed` handler given
-- the contract's params (as memzoi-lsp sends them after a change it wrote), the BufWritePre warning, and the one
-- line of a refusal. Usage: nvim --headless --clean -l nvim_reload.lua <project root> <out.json>
-- Env: MEMZOI_NVIM_DIR (editors/nvim). Exit status 0; the report holds what each case saw.
local root, out_path = arg[1], arg[2]
vim.fn.chdir(root) -- as a user in their project: messages show paths relative to it
vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
vim.o.columns = 80
local memzoi = require('memzoi')
memzoi.setup({})
local sync, ui = require('memzoi.sync'), require('memzoi.ui')
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end
local result = {}

local function write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local fh = assert(io.open(path, 'wb'))
  fh:write(text)
  fh:close()
end
local function lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end
local function open(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end
local function changed(operation, touched)
  local t = {}
  for path, deleted in pairs(touched) do
    table.insert(t, { uri = vim.uri_from_fname(path), deleted = deleted })
  end
  return sync.changed({ changeId = 'chg_test', operation = operation, message = 'test', touched = t })
end

-- D4: a resident file that did not exist when its buffer was opened; the first approved entry creates it. The
-- buffer is unmodified and empty: it must show the entry (`:checktime` alone leaves it empty), shown or hidden.
local rules = root .. '/.zuno/RULES.md'
local global = root .. '/memory/MEMORY.md'
local rb = open(rules)
local gb = open(global)
vim.cmd.enew() -- the global file's buffer stays loaded, hidden
vim.bo.bufhidden = 'hide'
vim.cmd.buffer(rb)
write(rules, '- Always run pytest -q before committing.\n')
write(global, '- Answer in English.\n')
vim.fn.setbufvar(gb, '&bufhidden', 'hide')
changed('resident_approve', { [rules] = false, [global] = false })
result.created = { shown = lines(rb), hidden = lines(gb), modified = vim.bo[rb].modified,
  hidden_loaded = vim.api.nvim_buf_is_loaded(gb) }
-- Then :w writes without E13 (the buffer now knows its file)
local ok, err = pcall(vim.cmd, 'silent write')
result.created.write_ok, result.created.write_err = ok, ok and nil or tostring(err)

-- The same with a buffer that is not plain UTF-8 Unix text (its lines are compared, not its size): a DOS one.
local dos = root .. '/memory/DOS.md'
local db = open(dos)
vim.bo[db].fileformat = 'dos'
vim.bo[db].modified = false
vim.cmd.buffer(rb)
write(dos, '- one\r\n- two\r\n')
changed('resident_approve', { [dos] = false })
result.created.dos = lines(db)

-- An existing file rewritten by the change: reloaded (`:checktime`, as before).
write(rules, '- Always run pytest -q before committing.\n- Keep modules short.\n')
changed('resident_approve', { [rules] = false })
result.rewritten = lines(rb)

-- A modified buffer is kept, and the user told its file changed on disk (cause first).
vim.api.nvim_buf_set_lines(rb, 0, -1, false, { 'typed by the user' })
write(rules, '- Changed again on disk.\n')
notes = {}
local done = changed('resident_approve', { [rules] = false })
result.modified = { kept = #done.kept, text = lines(rb), notes = vim.deepcopy(notes) }
vim.cmd('silent! edit!')

-- D12: a pending packet with unsaved edits that the CLI then applies (moved to resolved/applied/): writing it
-- warns that it re-creates an applied packet (no memzoi/changed comes from the CLI).
local rel = 'mem_2026_07_06_auth_001.md'
local pending = root .. '/.memzoi/proposals/pending/' .. rel
write(pending, '---\nid: mem_2026_07_06_auth_001\n---\n\n# Auth\n\nBody.\n')
local pb = open(pending)
vim.api.nvim_buf_set_lines(pb, -1, -1, false, { 'A reviewer note.' })
write(root .. '/.memzoi/proposals/resolved/applied/' .. rel, 'applied\n')
os.remove(pending)
notes = {}
vim.cmd('silent! write')
vim.wait(2000, function() return #notes > 0 end, 10) -- shown after the write's own line
result.resurrect = { warning = sync.last_write_warning, notes = vim.deepcopy(notes) }

-- A file a Memzoi change removed (memzoi/changed, deleted): its diagnostics go, the buffer is marked, and writing
-- it warns. A file that was never Memzoi's to move writes silently.
local rejected = root .. '/.memzoi/proposals/pending/other.md'
write(rejected, 'x\n')
local xb = open(rejected)
os.remove(rejected)
changed('reject', { [rejected] = true })
notes = {}
vim.cmd('silent! write')
result.removed = { cleared = sync.last_changed.done.cleared[1] == xb, gone = vim.b[xb].memzoi_gone,
  warning = sync.last_write_warning }
local plain = root .. '/.memzoi/records/fresh.md'
open(plain)
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'new' })
vim.cmd('silent! write')
result.plain_warning = sync.last_write_warning or vim.NIL

-- D11: a refusal's one line gives the cause first, the path last (and a candidate's id short), so the cause fits
-- the 80-column line.
local long = '.memzoi/proposals/pending/mem_2026_07_06_auth_001_protected_routes_must_validate.md'
local refusal = { code = -32803, message = long .. ': apply is blocked by record_exists (the record exists); '
  .. 'fix what is named or reject it', data = { code = 'record_exists', message = '', path = long } }
notes = {}
result.refusal = ui.refusal(refusal)
ui.notify('apply refused: ' .. ui.refusal(refusal), vim.log.levels.ERROR)
result.refusal_line = notes[1] and notes[1].msg
result.refusal_plain = ui.refusal({ message = 'no such change chg_x', data = { code = 'not_found' } })
result.refusal_candidate = ui.refusal({ message = 'candidate mem_e1f8b611fc3e40939a1b2c3d4e5f6071 is applied; only a '
  .. 'pending or failed candidate can be approved', data = { code = 'not_applicable' } })

local fh = assert(io.open(out_path, 'w'))
fh:write(vim.json.encode(result), '\n')
fh:close()
vim.cmd('qall!')
