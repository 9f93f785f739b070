-- Headless Neovim run of how editors/nvim words a change's files, with no server: the history list's quickfix
-- items and the review diff's headers, given `memzoi.history` and `memzoi.preview` answers whose files carry the
-- server's `change`. Usage: nvim --headless --clean -l nvim_words.lua <out.json>
-- Env: MEMZOI_NVIM_DIR (editors/nvim). Exit status 0; the report holds what each case saw.
local out_path = arg[1]
vim.opt.runtimepath:prepend((assert(os.getenv('MEMZOI_NVIM_DIR'), 'MEMZOI_NVIM_DIR')))
local history, review = require('memzoi.history'), require('memzoi.review')
local result = {}

local recover = {
  change_id = 'chg_rec', operation = 'recover', status = 'applied', actor = 'ada', undo_available = false,
  files = {
    { path = '.memzoi/records/a.md', before = 'present', after = 'present', change = 'modified' },
    { path = '.memzoi/records/b.md', before = 'absent', after = 'absent', change = 'unchanged' },
  },
}
-- an older server's entry, without the word
local older = { change_id = 'chg_old', operation = 'apply', status = 'applied',
  files = { { path = 'c.md', before = 'absent', after = 'present' } } }
result.history = vim.tbl_map(function(i)
  return i.text
end, history.history_items('/ws', { recover, older }))

local before, after = review.sides({ files = {
  { path = 'gone.md', before = vim.NIL, after = vim.NIL, change = 'unchanged' },
  { path = 'new.md', before = vim.NIL, after = 'x', change = 'created' },
  { path = 'old.md', before = 'y', after = vim.NIL, change = 'deleted' },
  { path = 'edit.md', before = 'y', after = 'z', change = 'modified' },
} })
local headers = {}
for _, l in ipairs(before) do
  if l:match('^===') then
    table.insert(headers, l)
  end
end
result.headers = headers
result.same = vim.deep_equal(vim.tbl_filter(function(l)
  return l:match('^===') ~= nil
end, after), headers)

local fh = assert(io.open(out_path, 'w'))
fh:write(vim.json.encode(result), '\n')
fh:close()
vim.cmd('qall!')
