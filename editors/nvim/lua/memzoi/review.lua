--- Memzoi for Neovim: preview, then write, as one flow (issue 28, the review-flow contract §3/§4).
---
--- `review(client, bufnr, req)` asks the reason (and the title where the change takes one) ONCE, asks the server
--- for the preview (`memzoi.preview`), shows every file of the change in ONE diff tab (before on the left, after on
--- the right, whatever 'splitright' says), then offers Apply / Cancel; Apply runs the real command with exactly the
--- answers given. Nothing is written before Apply.
local X = {}
local ui = require('memzoi.ui')
local prompts = require('memzoi.prompts')

--- The changes that have a preview: server command -> preview `operation`, what it asks (reason, new title) and how
--- its arguments are built. A resident approve previews with `candidateId`, the command itself takes
--- `candidate_id`.
X.PREVIEWABLE = {
  ['memzoi.apply'] = { operation = 'apply', label = 'Apply' },
  ['memzoi.supersede'] = { operation = 'supersede', label = 'Supersede', reason = 'required', new_title = true },
  ['memzoi.tombstone'] = { operation = 'tombstone', label = 'Tombstone', reason = 'required' },
  ['memzoi.reattest'] = { operation = 'reattest', label = 'Re-attest', reason = 'optional' },
  ['memzoi.materialize'] = { operation = 'materialize', label = 'Materialize' },
  ['memzoi.resident.approve'] = { operation = 'approve', label = 'Approve' },
  -- approve with edited `content`, and the one-step removal (issue 34); `alias`: not what `command_of` returns
  ['memzoi.resident.edit'] = { operation = 'approve', label = 'Approve edited', alias = true },
  ['memzoi.resident.remove'] = { operation = 'remove_entry', label = 'Remove', alias = true },
}

--- The server command of a preview `operation` (the inverse of `PREVIEWABLE`), or nil.
---@return string?
function X.command_of(operation)
  for cmd, p in pairs(X.PREVIEWABLE) do
    if p.operation == operation and not p.alias then
      return cmd
    end
  end
  return nil
end

local function lines_of(text)
  if text == nil or text == vim.NIL then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- The header's word for one file of a preview: the server's `change` (as the CLI words it: absent before and after
--- is ` (unchanged)`), nothing for `modified`; an older server's answer is read from the two sides.
function X.state(f)
  local word = f.change
  if type(word) ~= 'string' or word == '' then
    local absent_before = f.before == nil or f.before == vim.NIL
    local absent_after = f.after == nil or f.after == vim.NIL
    word = absent_before and (absent_after and 'unchanged' or 'created') or (absent_after and 'deleted' or 'modified')
  end
  return word == 'modified' and '' or (' (%s)'):format(word)
end

--- The two texts of the diff tab: every file of `result` (a `memzoi.preview` answer) under the same header line on
--- both sides, so the diff lines the files up and one diff shows them all. A file the change creates is empty on the left,
--- one it deletes empty on the right (the header says which).
---@return string[] before, string[] after
function X.sides(result)
  local before, after = {}, {}
  for _, f in ipairs(result.files or {}) do
    local header = ('=== %s%s ==='):format(f.path, X.state(f))
    table.insert(before, header)
    table.insert(after, header)
    vim.list_extend(before, lines_of(f.before))
    vim.list_extend(after, lines_of(f.after))
  end
  return before, after
end

local function scratch(win, name, lines)
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].swapfile = false
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, b, name)
  vim.bo[b].modifiable = false
  vim.bo[b].filetype = 'markdown'
  vim.api.nvim_win_set_buf(win, b)
  vim.api.nvim_win_call(win, function() vim.cmd('diffthis') end)
  return b
end

--- Opens ONE tab holding the whole change: the left window is before, the right one after (`leftabove` /
--- `rightbelow` are explicit, so 'splitright' does not matter). Returns the tab page.
---@return integer tab
function X.show(result)
  local before, after = X.sides(result)
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local left = vim.api.nvim_get_current_win()
  local empty = vim.api.nvim_get_current_buf()
  vim.cmd('rightbelow vsplit')
  local right = vim.api.nvim_get_current_win()
  local id = tostring(vim.uv.hrtime())
  scratch(left, ('memzoi-preview://%s/before'):format(id), before)
  scratch(right, ('memzoi-preview://%s/after'):format(id), after)
  if vim.api.nvim_buf_is_valid(empty) then
    pcall(vim.api.nvim_buf_delete, empty, { force = true })
  end
  vim.api.nvim_set_current_win(right)
  X.last_tab = { tab = tab, left = left, right = right, files = #(result.files or {}) }
  X.last_preview = result
  vim.cmd('redraw')
  return tab
end

local function close(tab)
  if tab and vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd(('tabclose %d'):format(vim.api.nvim_tabpage_get_number(tab)))
  end
end

--- The preview's own argument (`memzoi.preview`) for the change `req` (`{command, arg}`).
local function preview_arg(req, p)
  local a = { uri = req.arg.uri, operation = p.operation }
  for _, k in ipairs({ 'reason', 'title', 'body', 'content', 'scope', 'locator' }) do
    a[k] = req.arg[k]
  end
  if req.arg.candidate_id then
    a.candidateId = req.arg.candidate_id
  end
  return a
end

--- One short line naming the change and its files: `Apply "T": 2 files (records/x.md, …)`.
function X.question(p, result)
  local paths = vim.tbl_map(function(f) return f.path end, result.files or {})
  local n = #paths
  local what = result.summary and result.summary ~= '' and result.summary or (p.label .. ' ' .. (paths[1] or ''))
  local t = type(result.target) == 'table' and result.target or nil -- the target, named: title, then path
  if t and t.path then
    local named = (t.title and t.title ~= vim.NIL) and ('"%s" (%s)'):format(t.title, t.path) or t.path
    return ui.fit(('%s %d file%s of %s? '):format(p.label, n, n == 1 and '' or 's', named))
  end
  return ui.fit(('%s (%d file%s)? '):format(what, n, n == 1 and '' or 's'))
end

--- Whether the error response `err` is the server's `preview_stale` refusal (a file changed since the preview).
function X.is_stale(err)
  return type(err) == 'table' and type(err.data) == 'table' and err.data.code == 'preview_stale'
end

--- The review flow of the change `req` = `{command = server command, arg = its argument table}`: ask (once), preview,
--- show, then Apply or Cancel. Apply runs `run(command, arg, on_refused)` with the preview's fingerprint
--- (`previewed`), so the server acts on exactly what was shown or refuses (`preview_stale`): then the refusal is shown
--- and a new preview offered. `run` sends the real command and reports it.
function X.review(client, bufnr, req, run)
  local p = X.PREVIEWABLE[req.command]
  if not p then
    return run(req.command, req.arg)
  end
  local spec = { reason = p.reason, new_title = p.new_title }
  prompts.with_reason(spec, req.arg, function()
    ui.request(client, bufnr, 'memzoi.preview', preview_arg(req, p), p.label .. ' preview', function(result)
      local tab = X.show(result)
      vim.ui.select({ 'Apply', 'Cancel' }, { prompt = X.question(p, result) }, function(choice)
        close(tab)
        if choice == 'Apply' then
          local arg = vim.deepcopy(req.arg)
          arg.previewed = result.previewed
          run(req.command, arg, function(err)
            if X.is_stale(err) then
              vim.ui.select({ 'Preview again', 'Cancel' }, { prompt = 'The files changed since the preview. ' }, function(again)
                if again == 'Preview again' then
                  X.review(client, bufnr, req, run)
                end
              end)
            end
          end)
        else
          ui.notify(p.label .. ' cancelled; nothing written')
        end
      end)
    end)
  end, p.label)
end

return X
