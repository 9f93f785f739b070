--- Memzoi for Neovim: messages, the quickfix list and server requests shared by the other modules.
local X = {}

function X.notify(msg, level)
  vim.notify('Memzoi: ' .. msg, level or vim.log.levels.INFO)
end

--- Fills the quickfix list without moving the cursor: the list opens, the cursor stays where the user was.
function X.show_quickfix(title, items)
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if #items > 0 then
    local win = vim.api.nvim_get_current_win()
    vim.cmd('botright copen')
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_set_current_win(win)
    end
  end
end

--- Sends `command` with the one argument `arg` to the server and reports a refusal (an error response) once, as
--- "`what` refused: …"; the outcome is kept as `require('memzoi').last_result` / `.last_error` for inspection.
function X.request(client, bufnr, command, arg, what, on_result)
  client:request('workspace/executeCommand', { command = command, arguments = { arg } }, function(err, result)
    local memzoi = require('memzoi')
    if err then
      memzoi.last_error = err
      return X.notify(('%s refused: %s'):format(what, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    memzoi.last_result = result
    on_result(result)
  end, bufnr)
end

return X
