--- Memzoi for Neovim: messages, the quickfix list and server requests shared by the other modules.
local X = {}

--- `msg` as one line that fits the command line without a hit-enter prompt: its first line, cut to the room
--- 'columns' leaves (`v:echospace`, less the "Memzoi: " prefix) with "…". The full text stays in the result.
---@return string
function X.fit(msg)
  local line = tostring(msg or ''):gsub('\r', ''):match('^[^\n]*')
  local room = math.max(20, vim.v.echospace - #'Memzoi: ' - 1)
  if vim.fn.strdisplaywidth(line) <= room then
    return line
  end
  return vim.fn.strcharpart(line, 0, room - 1) .. '…'
end

--- The full text of the last notifications (newest last, at most 50), before `fit` cut them.
X.full = {}

--- One notification line: "Memzoi: " and `msg` fitted to the command line (`fit`); the full text is kept in
--- `full` (and the result it came from in `require('memzoi').last_result`).
function X.notify(msg, level)
  table.insert(X.full, tostring(msg))
  if #X.full > 50 then
    table.remove(X.full, 1)
  end
  vim.notify('Memzoi: ' .. X.fit(msg), level or vim.log.levels.INFO)
end

--- Fills the quickfix list without moving the cursor: the list opens, the cursor stays where the user was.
--- `action` is setqflist's (' ' a new list, 'r' replace the current one in place, as a refresh does).
function X.show_quickfix(title, items, action)
  vim.fn.setqflist({}, action or ' ', { title = title, items = items })
  if #items > 0 and action ~= 'r' then
    local win = vim.api.nvim_get_current_win()
    vim.cmd('botright copen')
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_set_current_win(win)
    end
  end
end

--- The first line of a server refusal (a JSON-RPC error): its message, one piece of advice.
function X.refusal(err)
  return (tostring(err.message or vim.inspect(err)):match('^[^\n]*'))
end

--- Sends `command` with the one argument `arg` to the server and reports a refusal (an error response) once, as
--- "`what` refused: …"; the outcome is kept as `require('memzoi').last_result` / `.last_error` for inspection.
--- `on_refused(err)`, when given, is called after a refusal is shown (a review offers a new preview when stale).
function X.request(client, bufnr, command, arg, what, on_result, on_refused)
  client:request('workspace/executeCommand', { command = command, arguments = { arg } }, function(err, result)
    local memzoi = require('memzoi')
    if err then
      memzoi.last_error = err
      X.notify(('%s refused: %s'):format(what, X.refusal(err)), vim.log.levels.ERROR)
      if on_refused then
        on_refused(err)
      end
      return
    end
    memzoi.last_result = result
    on_result(result)
  end, bufnr)
end

local PAST = { apply = 'Applied', reject = 'Rejected', supersede = 'Proposed supersede', tombstone = 'Proposed tombstone',
  reattest = 'Re-attested', route_local = 'Routed to local memory', materialize = 'Materialized', undo = 'Undid change',
  recover = 'Recovered' }

--- One-line summary of a command result: the server's `message` (what happened, and to what) when it sends one,
--- else one built from the change (operation, status, first file); a list or a report otherwise. The change id
--- and the files stay in `require('memzoi').last_result`.
---@return string
function X.describe_result(result)
  if type(result) ~= 'table' then
    return tostring(result)
  end
  if type(result.message) == 'string' and result.message ~= '' then
    return result.message
  end
  if result.change_id then
    -- the file the change is about: the first one it leaves in place, without the `.memzoi/` prefix
    local main
    for _, f in ipairs(result.files or {}) do
      if not main and f.after ~= 'absent' then
        main = f.path
      end
    end
    main = (main or (result.files and result.files[1] and result.files[1].path) or ''):gsub('^%.memzoi/', '')
    local verb = result.status == 'undone' and ('Undid ' .. tostring(result.operation))
      or PAST[result.operation] or tostring(result.operation)
    return ('%s -> %s'):format(verb, main)
  end
  if vim.islist(result) then
    return ('%d result(s)'):format(#result)
  end
  return vim.json.encode(result)
end

return X
