--- Memzoi for Neovim: the ledger history in the quickfix list and `vim.ui.select`.
local X = {}
local ui = require('memzoi.ui')

--- What a change did to one file, in the words the CLI prints: the server's `change` (`created`, `deleted`,
--- `modified`, `unchanged`: absent before and after is `unchanged`); an older server's two states otherwise.
function X.file_word(f)
  if type(f.change) == 'string' and f.change ~= '' then
    return f.change
  end
  return ('%s->%s'):format(tostring(f.before), tostring(f.after))
end

--- Ledger changes (`memzoi.history` results, newest first) as quickfix items: time, actor, operation, status,
--- whether undo is available, files (`path (created)`), and the change id (`:Memzoi undo ID`).
function X.history_items(root, changes)
  local items = {}
  for _, c in ipairs(changes or {}) do
    local files = vim.tbl_map(function(f)
      return ('%s (%s)'):format(f.path, X.file_word(f))
    end, c.files or {})
    local undo = c.undo_available and 'undo available' or 'no undo' -- the server's word: the ledger would undo it
    table.insert(items, {
      filename = root and c.files and c.files[1] and vim.fs.joinpath(root, c.files[1].path) or nil,
      lnum = 1,
      text = ('%s %s %s %s (%s) %s [%s]'):format(c.applied_at or c.created_at or '', c.actor or '?', c.operation or '',
        c.status or '', undo, table.concat(files, ', '), c.change_id),
      user_data = { change_id = c.change_id },
    })
  end
  return items
end

--- Whose history `:Memzoi history` lists from the file `fname` of the project `root`: its path as the server's
--- messages show it (relative to the root, without `.memzoi/`: `records/x.md`), or nil for the whole history.
function X.history_subject(root, fname)
  if not fname or fname == '' then
    return nil
  end
  local rel = root and vim.fs.relpath(root, fname) or nil
  return ((rel or vim.fs.basename(fname)):gsub('^%.memzoi/', ''))
end

--- The one line `:Memzoi history` ends with: whose history it is (`subject`, from `history_subject`) and how many
--- changes, so a file's history is never taken for the whole one.
function X.history_note(subject, count)
  if subject then
    return ('history of %s: %d change(s); :Memzoi history all for every change'):format(subject, count)
  end
  return ('%d change(s) in the history; :Memzoi undo ID'):format(count)
end

--- The project's ledger changes, newest first (synchronously, for completion), or `{}`.
function X.changes(client, bufnr)
  local res = client:request_sync('workspace/executeCommand', { command = 'memzoi.history', arguments = { vim.empty_dict() } }, 3000, bufnr)
  return res and not res.err and type(res.result) == 'table' and res.result or {}
end

--- Lets the user choose a change of the history (`vim.ui.select`), then calls `on_choice(change_id)`.
function X.pick_change(client, bufnr, on_choice)
  local changes = X.changes(client, bufnr)
  if #changes == 0 then
    return ui.notify('the ledger has no changes yet', vim.log.levels.WARN)
  end
  vim.ui.select(changes, {
    prompt = 'Change:',
    format_item = function(c)
      return ('%s %s %s %s'):format(c.change_id:sub(1, 12), c.operation or '', c.status or '', c.summary or '')
    end,
  }, function(c)
    if c then
      on_choice(c.change_id)
    end
  end)
end

--- Asks before an undo, naming the change: its operation, the files it would restore and when it was made (from
--- the history), then calls `go` on Undo.
function X.confirm_undo(client, bufnr, change_id, go)
  local found
  for _, c in ipairs(X.changes(client, bufnr)) do
    if c.change_id == change_id or vim.startswith(c.change_id, change_id)
        or vim.startswith(c.change_id, 'chg_' .. change_id) then
      found = c
      break
    end
  end
  local files = found and vim.tbl_map(function(f) return f.path:gsub('^%.memzoi/', '') end, found.files or {}) or {}
  local prompt = found and ('Undo %s of %s (%s)?'):format(found.operation or 'change', table.concat(files, ', '),
    found.applied_at or found.created_at or '?') or ('Undo change %s?'):format(change_id)
  vim.ui.select({ 'Undo', 'Cancel' }, { prompt = prompt }, function(choice)
    if choice == 'Undo' then
      go()
    end
  end)
end

return X
