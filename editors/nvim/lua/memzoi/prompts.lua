--- Memzoi for Neovim: what a lifecycle command needs beyond its target, asked for with `vim.ui.input`: the reason it
--- records and, for supersede, a new title (the replacement needs an id of its own, the slug of its title).
local X = {}
local ui = require('memzoi.ui')

--- Asks for a new title when `spec` takes one (`new_title`; unless `ctx.title` is set), then calls `go`. An empty
--- answer sends none: the server then uses the record's title, and refuses (`record_exists`, "a new title is
--- needed") when that title gives the record's own id, as it does for every record made by applying a proposal.
--- Cancelling runs nothing.
function X.with_title(spec, ctx, go)
  if not spec.new_title or ctx.title then
    return go()
  end
  vim.ui.input({ prompt = "New title (say what changed: the replacement needs an id of its own): " }, function(input)
    if input == nil then
      return -- cancelled
    end
    input = vim.trim(input)
    ctx.title = input ~= '' and input or nil
    go()
  end)
end

--- Asks for the reason `spec` records (unless `ctx.reason` is set), then for a new title where it takes one, then
--- calls `go`. Cancelling runs nothing; an empty required reason is refused here (`label` names the command).
function X.with_reason(spec, ctx, go, label)
  local function next_step()
    X.with_title(spec, ctx, go)
  end
  if not spec.reason or ctx.reason then
    return next_step()
  end
  local prompt = spec.reason == 'required' and 'Reason (required): ' or 'Reason (optional): '
  vim.ui.input({ prompt = prompt }, function(input)
    if input == nil then
      return -- cancelled
    end
    input = vim.trim(input)
    if input == '' and spec.reason == 'required' then
      return ui.notify(label .. ' needs a reason: it is recorded with the change', vim.log.levels.WARN)
    end
    ctx.reason = input ~= '' and input or nil
    next_step()
  end)
end

return X
