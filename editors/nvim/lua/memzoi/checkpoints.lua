--- Memzoi for Neovim: session checkpoints (`:Memzoi checkpoints`) and the Memory health view (`:Memzoi health`).
--- The server decides everything (memzoi.checkpoints.*, memzoi.memoryHealth); this module renders and asks.
local X = {}
local ui = require('memzoi.ui')

local function root_arg(client)
  local arg = vim.empty_dict()
  if client.root_dir then
    arg.root = client.root_dir
  end
  return arg
end

--- Checkpoints as quickfix items; `listing` is the server's `memzoi.checkpoints.list` result. A checkpoint has no
--- file (it is a runtime row, never repository truth): each item names the project's `.memzoi` folder.
function X.checkpoint_items(listing)
  local items = {}
  for _, project in ipairs(listing.projects or {}) do
    for _, c in ipairs(project.checkpoints or {}) do
      local acts = #(c.actions or {}) > 0 and table.concat(c.actions, ', ') or 'none'
      local boundary = (c.retention_decision or {}).effective_boundary or '?'
      table.insert(items, {
        filename = vim.fs.joinpath(project.root or '.', '.memzoi'),
        lnum = 1,
        text = ('%s checkpoint %s v%s (actions: %s): %s: %s [boundary %s; provenance %s]'):format(
          c.status, c.id, tostring(c.version), acts, (c.task or ''):gsub('\n', ' '),
          (c.title or ''):gsub('\n', ' '), boundary, c.provenance or 'runtime'),
      })
    end
  end
  return items
end

--- Previews `verb` (continue or close) of checkpoint `id`, shows what it would change, and applies it with the
--- previewed version once confirmed (`confirm_writes`; vim.ui.select: Apply / Cancel).
function X.transition(client, bufnr, verb, id)
  local memzoi = require('memzoi')
  local arg = root_arg(client)
  arg.checkpoint_id, arg.operation = id, verb
  ui.request(client, bufnr, 'memzoi.checkpoints.preview', arg, 'checkpoint ' .. verb, function(pre)
    memzoi.last_preview = pre
    local function apply()
      local a = root_arg(client)
      a.checkpoint_id, a.operation, a.expected_version = id, verb, pre.expected_version
      ui.request(client, bufnr, 'memzoi.checkpoints.apply', a, 'checkpoint ' .. verb, function(result)
        memzoi.last_write = result
        ui.notify(('checkpoint %s: %s (version %s)'):format(verb, id,
          tostring((result.checkpoint or {}).version or '?')))
      end)
    end
    if not memzoi.options.confirm_writes then
      return apply()
    end
    vim.ui.select({ 'Apply', 'Cancel' }, { prompt = pre.summary }, function(choice)
      if choice == 'Apply' then
        apply()
      else
        memzoi.last_result = { cancelled = true }
        ui.notify('checkpoint ' .. verb .. ' cancelled: nothing written')
      end
    end)
  end)
end

--- `:Memzoi checkpoints [continue ID | close ID]`: without arguments, lists the checkpoints in the quickfix list
--- (open ones first, with the actions each accepts now); with a verb, previews and applies it.
function X.checkpoints(client, bufnr, fargs)
  local verb, id = vim.trim(fargs or ''):match('^(%S*)%s*(%S*)')
  if verb == '' then
    return ui.request(client, bufnr, 'memzoi.checkpoints.list', root_arg(client), 'checkpoints', function(result)
      local items = X.checkpoint_items(result)
      ui.show_quickfix('Memzoi checkpoints', items)
      ui.notify(('%d checkpoint(s)'):format(#items))
    end)
  end
  if not vim.tbl_contains({ 'continue', 'close' }, verb) or id == '' then
    return ui.notify('usage: :Memzoi checkpoints [continue ID | close ID]', vim.log.levels.WARN)
  end
  X.transition(client, bufnr, verb, id)
end

local KINDS = { { 'duplicates', 'exact duplicate' }, { 'contradictions', 'contradiction (no winner chosen)' },
  { 'expiring', 'expiring' }, { 'expired', 'expired' }, { 'stale', 'stale' } }

--- The Memory health view as quickfix items: one per record of each finding, opening the record's file.
function X.health_items(result)
  local items = {}
  for _, project in ipairs(result.projects or {}) do
    for _, kind in ipairs(KINDS) do
      for _, f in ipairs(project[kind[1]] or {}) do
        local ids = table.concat(f.record_ids or {}, ', ')
        for _, rid in ipairs(f.record_ids or {}) do
          local rel = (f.records or {})[rid]
          table.insert(items, {
            filename = rel ~= vim.NIL and rel and vim.fs.joinpath(project.root, rel) or project.root,
            lnum = 1,
            text = ('%s: %s [%s]%s'):format(kind[2], rid, ids, f.boundary and (' until ' .. f.boundary) or ''),
          })
        end
      end
    end
  end
  return items
end

--- `:Memzoi health`: the maintenance plan's duplicates, contradictions and expiring records in the quickfix list.
function X.health(client, bufnr)
  ui.request(client, bufnr, 'memzoi.memoryHealth', root_arg(client), 'memory health', function(result)
    local items = X.health_items(result)
    ui.show_quickfix('Memzoi memory health', items)
    ui.notify(('%d record finding(s) in the memory health view'):format(#items))
  end)
end

return X
