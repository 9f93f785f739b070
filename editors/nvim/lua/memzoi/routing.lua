--- Memzoi for Neovim: an agent's session-end file (`{task, candidates}` YAML) or an import manifest
--- (`version: memzoi/import`) routed from the editor. `:Memzoi route` (or the *Plan memory routing* code action)
--- asks the server for the preview (`memzoi.routing.preview`: per candidate the packet path or runtime route it
--- would create, or the reason codes that block it), shows it in the quickfix list, and only on "Apply" runs
--- `memzoi.routing.apply` with what the preview saw (the import `plan_id`, the session-end `expected_version` and
--- `previewed`, the fingerprint of the file and plan shown): one ledgered change, refused when the state moved
--- since; a file changed since the preview (`preview_stale`) gets "Preview again".
local X = {}
local ui = require('memzoi.ui')

local function first_lines(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, 400, false), '\n')
end

--- Whether the buffer's text is a routing input (the server's rule: a `.yml`/`.yaml` file whose top level is
--- `version: memzoi/import`, or has `task` and `candidates`).
function X.is_input(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if not (name:match('%.ya?ml$')) then
    return false
  end
  local text = '\n' .. first_lines(bufnr)
  if text:match('\nversion:%s*["\']?memzoi/import') then
    return true
  end
  return text:match('\ntask%s*:') ~= nil and text:match('\ncandidates%s*:') ~= nil
end

--- The project root of a routing input buffer: the nearest directory above it holding `.memzoi/`.
---@return string?
function X.routing_root(bufnr)
  if not X.is_input(bufnr) then
    return nil
  end
  local found = vim.fs.find('.memzoi', { upward = true, type = 'directory',
    path = vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)) })[1]
  return found and vim.fs.dirname(found) or nil
end

--- One quickfix line per candidate of a routing preview.
function X.preview_items(preview, fname)
  local items = {}
  for _, c in ipairs(preview.candidates or {}) do
    local where = c.path or c.route or ''
    if c.reasons then
      where = table.concat(c.reasons, ', ')
    elseif c.matches then
      where = table.concat(vim.tbl_map(function(m) return m.kind .. ' ' .. m.id end, c.matches), ', ')
    end
    table.insert(items, { filename = fname, lnum = 1,
      text = ('[%d] %s %s %s'):format(c.index, c.destination, c.outcome or c.action or '', where) })
  end
  return items
end

--- Preview the routing of the buffer, then apply it when the user chooses Apply.
function X.route(client, bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  ui.request(client, bufnr, 'memzoi.routing.preview', { uri = uri }, 'routing preview', function(preview)
    ui.show_quickfix('Memzoi routing preview', X.preview_items(preview, vim.api.nvim_buf_get_name(bufnr)))
    local writes = #vim.tbl_filter(function(c)
      return c.outcome == 'create_proposal' or c.outcome == 'create_runtime'
    end, preview.candidates or {})
    local prompt = ('Route %d candidate(s) (%d write)%s?'):format(#(preview.candidates or {}), writes,
      preview.blocked and ' — some are blocked' or '')
    vim.ui.select({ 'Apply', 'Cancel' }, { prompt = prompt }, function(choice)
      if choice ~= 'Apply' then
        return ui.notify('routing cancelled: nothing written')
      end
      local arg = { uri = uri, plan_id = preview.plan_id, expected_version = preview.expected_version,
        actor = preview.actor, previewed = preview.previewed }
      ui.request(client, bufnr, 'memzoi.routing.apply', arg, 'routing', function(result)
        local n = #(result.writes or {})
        if result.candidates then
          n = #vim.tbl_filter(function(c) return c.outcome == 'created' end, result.candidates)
        end
        ui.notify(('routed: %d written%s'):format(n, result.change_id and (', change ' .. result.change_id) or ''))
      end, function(err)
        if require('memzoi.review').is_stale(err) then
          vim.ui.select({ 'Preview again', 'Cancel' }, { prompt = 'The file changed since the preview. ' }, function(again)
            if again == 'Preview again' then
              X.route(client, bufnr)
            end
          end)
        end
      end)
    end)
  end)
end

return X
