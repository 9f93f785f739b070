--- Memzoi for Neovim: the inbox, resident-memory candidates and local-memory candidates in the quickfix list.
local X = {}
local ui = require('memzoi.ui')

--- The server's `memzoi.proposals.list` answer as quickfix items: each pending packet with the core's verdict
--- (`ready` or `blocked` with every blocking code), the same rule the code lens and the code actions follow.
function X.proposal_items(listing)
  local items = {}
  for _, p in ipairs(listing.proposals or {}) do
    local codes = {}
    for _, b in ipairs(p.blockers or {}) do
      if not vim.tbl_contains(codes, b.code) then
        table.insert(codes, b.code)
      end
    end
    local verdict = p.can_apply and 'ready' or ('blocked (%s)'):format(table.concat(codes, ', '))
    table.insert(items, { filename = vim.uri_to_fname(p.uri), lnum = 1, text = ('%s: %s'):format(verdict, p.title or p.id) })
  end
  return items
end

--- `:Memzoi inbox`: the pending proposals with the server's verdict on each in the quickfix list (the packet files
--- alone, from `root`, when no server offers the listing). `action` 'r' refreshes the shown list in place, quietly
--- (after `memzoi/inboxChanged`).
function X.inbox(client, bufnr, root, action)
  local caps = client and (client.server_capabilities.executeCommandProvider or {}).commands or {}
  if not vim.tbl_contains(caps, 'memzoi.proposals.list') then
    local items = X.inbox_items(root)
    ui.show_quickfix('Memzoi inbox', items, action)
    if action ~= 'r' then
      ui.notify(('%d pending proposal(s)'):format(#items))
    end
    return
  end
  ui.request(client, bufnr, 'memzoi.proposals.list', vim.empty_dict(), 'inbox', function(listing)
    local items = X.proposal_items(listing)
    ui.show_quickfix('Memzoi inbox', items, action)
    local blocked = #vim.tbl_filter(function(p) return not p.can_apply end, listing.proposals or {})
    if action ~= 'r' then
      ui.notify(('%d pending proposal(s), %d blocked'):format(#items, blocked))
    end
  end)
end

--- Lets the user choose a pending proposal (`vim.ui.select` over the server's `memzoi.proposals.list`: title, id,
--- and whether it can be applied), then calls `on_choice(uri)`. A command started without a target asks, never
--- guesses (issue 28).
function X.pick_proposal(client, bufnr, on_choice)
  ui.request(client, bufnr, 'memzoi.proposals.list', vim.empty_dict(), 'pending proposals', function(listing)
    local rows = listing.proposals or {}
    if #rows == 0 then
      return ui.notify('no pending proposal', vim.log.levels.WARN)
    end
    vim.ui.select(rows, {
      prompt = 'Pending proposal:',
      format_item = function(p)
        return ('%s (%s, %s)'):format(p.title or p.id, p.id, p.can_apply and 'ready' or 'blocked')
      end,
    }, function(p)
      if p then
        on_choice(p.uri)
      end
    end)
  end)
end

--- Pending proposal packets under `root` as quickfix items (their files only, no verdict).
function X.inbox_items(root)
  local items = {}
  local dir = vim.fs.joinpath(root, '.memzoi', 'proposals', 'pending')
  for name, kind in vim.fs.dir(dir) do
    if kind == 'file' and name:match('%.md$') then
      local path = vim.fs.joinpath(dir, name)
      local title = name
      local ok, lines = pcall(vim.fn.readfile, path, '', 60)
      if ok then
        for _, l in ipairs(lines) do
          local t = l:match('^title:%s*(.-)%s*$')
          if t and t ~= '' then
            title = t:gsub('^["\'](.*)["\']$', '%1')
            break
          end
        end
      end
      table.insert(items, { filename = path, lnum = 1, text = 'pending: ' .. title })
    end
  end
  table.sort(items, function(a, b)
    return a.filename < b.filename
  end)
  return items
end

--- Resident memory as quickfix items (`:Memzoi resident`): candidates waiting for a decision first, then the
--- others, each on its resident file; `listing` is the result of the server's `memzoi.resident.list`.
function X.resident_items(listing)
  local items = {}
  local order = { pending = 0, failed = 1, uncertain = 2 }
  local cands = vim.deepcopy(listing.candidates or {})
  table.sort(cands, function(a, b)
    local x, y = order[a.status] or 3, order[b.status] or 3
    if x ~= y then
      return x < y
    end
    return (a.time_created or 0) > (b.time_created or 0)
  end)
  for _, c in ipairs(cands) do
    local what = c.content or c.locator or c.recovery_mode or ''
    table.insert(items, {
      filename = c.target_path,
      lnum = 1,
      text = ('%s %s %s %s: %s (%s)'):format(c.status, c.id, c.scope, c.action, what:gsub('\n', ' '), c.reason or ''),
    })
  end
  for _, s in ipairs(listing.scopes or {}) do
    table.insert(items, { filename = s.path, lnum = 1, text = ('%s resident memory %s'):format(s.scope, s.usage) })
  end
  return items
end

X.RESIDENT_USAGE = 'usage: :Memzoi resident [approve ID | reject ID [REASON] | undo ID | edit ID [CONTENT] | '
  .. 'remove LOCATOR | jobs | job ID]'

--- `:Memzoi resident [approve ID | reject ID [REASON] | undo ID | edit ID [CONTENT] | remove LOCATOR | jobs | job ID]`:
--- without arguments, lists both resident files and their candidates in the quickfix list (`action` 'r': refresh it
--- in place); with a verb, decides the candidate (`resident_decide`); `jobs`, `job`, `edit` and `remove`:
--- `resident_more`. Works from any buffer: the buffer's URI is sent only when it is a resident file
--- (`roots.resident_root`), since the server refuses any other file as "not a resident memory file"; from another
--- buffer the server takes the workspace's project.
function X.resident(client, bufnr, fargs, action)
  local verb, id, rest = vim.trim(fargs or ''):match('^(%S*)%s*(%S*)%s*(.*)$')
  local arg = vim.empty_dict()
  local uri = vim.uri_from_bufnr(bufnr)
  if uri:match('^file:') and require('memzoi.roots').resident_root(vim.uri_to_fname(uri)) then
    arg.uri = uri
  end
  if verb == '' then
    return ui.request(client, bufnr, 'memzoi.resident.list', arg, 'resident list', function(result)
      ui.show_quickfix('Memzoi resident memory', X.resident_items(result), action)
    end)
  end
  if verb == 'jobs' or verb == 'job' or verb == 'edit' or verb == 'remove' then
    return X.resident_more(client, bufnr, verb, id, rest, arg, action)
  end
  if not vim.tbl_contains({ 'approve', 'reject', 'undo' }, verb) or id == '' then
    return ui.notify(X.RESIDENT_USAGE, vim.log.levels.WARN)
  end
  arg.candidate_id = id
  if rest ~= '' then
    arg.reason = rest
  end
  X.resident_decide(client, bufnr, verb, arg)
end

--- Reflection jobs as quickfix items (`:Memzoi resident jobs`), from the WorkStateProjection
--- (`memzoi.resident.state`): newest first, each on the project's resident file, with its status, trigger, message,
--- the candidates it proposed and its diagnostic; and each candidate a job proposed, naming the job.
function X.job_items(state)
  local items = {}
  local project = '.zuno/RULES.md'
  for _, f in ipairs(state.files or {}) do
    if f.scope == 'project' then
      project = f.path
    end
  end
  for _, j in ipairs(state.reflection_jobs or {}) do
    local out = type(j.outcome) == 'table' and j.outcome or {}
    local made = type(out.candidates) == 'table' and #out.candidates > 0 and (' candidates: ' .. table.concat(out.candidates, ', ')) or ''
    local err = type(j.error) == 'string' and (' (' .. j.error .. ')') or ''
    table.insert(items, { filename = project, lnum = 1,
      text = ('reflection %s %s %s message %s%s%s'):format(j.status, j.id, j.trigger, j.source_message_id, made, err) })
  end
  for _, c in ipairs(state.memory_candidates or {}) do
    if type(c.job) == 'string' then
      table.insert(items, { filename = c.path, lnum = 1,
        text = ('%s %s %s %s: %s (job %s)'):format(c.status, c.id, c.scope, c.action, tostring(c.content or c.locator or ''):gsub('\n', ' '), c.job) })
    end
  end
  return items
end

--- Opens one reflection job's records (request exactly as sent, outcome; secrets screened by the server) in a
--- read-only scratch buffer named `memzoi-job://ID`.
function X.show_job(result)
  local b = vim.api.nvim_create_buf(false, true)
  vim.bo[b].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(b, 0, -1, false, vim.split(result.text or '', '\n', { plain = true }))
  pcall(vim.api.nvim_buf_set_name, b, 'memzoi-job://' .. tostring(result.job and result.job.id or '?'))
  vim.bo[b].modifiable = false
  vim.bo[b].filetype = 'markdown'
  vim.api.nvim_set_current_buf(b)
  return b
end

--- `:Memzoi resident jobs | job ID | edit ID [CONTENT] | remove LOCATOR`: the reflection jobs in the quickfix list,
--- one job's records, approve with edited content (asked with the candidate's content as default when not given),
--- remove one entry in one audited step; the last two go through the review flow like an approve.
function X.resident_more(client, bufnr, verb, id, rest, arg, action)
  if verb == 'jobs' then
    return ui.request(client, bufnr, 'memzoi.resident.state', arg, 'reflection jobs', function(result)
      ui.show_quickfix('Memzoi reflection jobs', X.job_items(result), action)
    end)
  end
  if id == '' then
    return ui.notify(X.RESIDENT_USAGE, vim.log.levels.WARN)
  end
  if verb == 'job' then
    return ui.request(client, bufnr, 'memzoi.resident.job', { job_id = id }, 'reflection job', X.show_job)
  end
  if verb == 'remove' then
    arg.locator = vim.trim(id .. ' ' .. rest)
    return X.resident_decide(client, bufnr, 'remove', arg)
  end
  arg.candidate_id = id
  if rest ~= '' then
    arg.content = rest
    return X.resident_decide(client, bufnr, 'edit', arg)
  end
  ui.request(client, bufnr, 'memzoi.resident.list', { uri = arg.uri }, 'resident list', function(listing)
    local current = ''
    for _, c in ipairs(listing.candidates or {}) do
      if c.id == id and type(c.content) == 'string' then
        current = c.content
      end
    end
    vim.ui.input({ prompt = 'Edited content: ', default = current }, function(text)
      if text == nil or vim.trim(text) == '' then
        return ui.notify('edit cancelled; nothing written')
      end
      arg.content = text
      X.resident_decide(client, bufnr, 'edit', arg)
    end)
  end)
end

local VERBS = { approve = 'Approved', reject = 'Rejected', undo = 'Undid', recover = 'Recovered', edit = 'Approved edited',
  remove = 'Removed' }

--- Decides the resident candidate `arg.candidate_id` of the file `arg.uri` (`verb`: approve, reject, undo,
--- recover): a reject asks its reason (required, as for proposals); an approve goes through the review flow while
--- `confirm_writes` is on. One message on the command line, and the resident file's buffers are re-read.
function X.resident_decide(client, bufnr, verb, arg)
  local memzoi = require('memzoi')
  local command = 'memzoi.resident.' .. verb
  local function run(cmd, a, on_refused)
    ui.request(client, bufnr, cmd, a, ('%s candidate'):format(verb), function(result)
      local msg = type(result) == 'table' and type(result.message) == 'string' and result.message
        or ('%s candidate %s (%s)'):format(VERBS[verb] or verb, tostring(a.candidate_id):sub(1, 16),
          type(result) == 'table' and result.status or 'done')
      memzoi.last_write = result
      ui.notify(msg)
      local target = type(result) == 'table' and result.target_path
      local fname = type(target) == 'string' and target or (a.uri and vim.uri_to_fname(a.uri))
      if fname then
        require('memzoi.sync').changed({ touched = { { uri = vim.uri_from_fname(fname), deleted = false } } })
      end
    end, on_refused) -- the review flow offers a new preview on `preview_stale`
  end
  if (verb == 'approve' or verb == 'edit' or verb == 'remove') and memzoi.options.confirm_writes then
    return require('memzoi.review').review(client, bufnr, { command = command, arg = arg }, run)
  end
  local spec = { reason = verb == 'reject' and 'required' or nil }
  require('memzoi.prompts').with_reason(spec, arg, function()
    run(command, arg)
  end, 'Reject candidate')
end

--- Local-memory candidates as quickfix items (`:Memzoi local`); `listing` is the result of the server's
--- `memzoi.local.list` (`{candidates = [{id, title, reason, confidence, actor, root}]}`). A candidate has no file:
--- each item names the project's `.memzoi` folder.
function X.local_items(listing)
  local items = {}
  for _, c in ipairs(listing.candidates or {}) do
    table.insert(items, {
      filename = vim.fs.joinpath(c.root or '.', '.memzoi'),
      lnum = 1,
      text = ('pending local %s: %s (confidence %s, by %s; %s)'):format(
        c.id, (c.title or ''):gsub('\n', ' '), tostring(c.confidence or '?'), c.actor or '?', c.reason or ''),
    })
  end
  return items
end

--- `:Memzoi local [approve ID | reject ID REASON]`: without arguments, lists the local-memory candidates agents
--- proposed (memzoi-mcp, destination local) in the quickfix list; with a verb, decides one (rejecting needs a
--- reason).
function X.local_candidates(client, bufnr, fargs)
  local verb, id, rest = vim.trim(fargs or ''):match('^(%S*)%s*(%S*)%s*(.*)$')
  local arg = vim.empty_dict()
  if client.root_dir then
    arg.root = client.root_dir
  end
  local function call(command, on_result)
    ui.request(client, bufnr, command, arg, ('local %s'):format(verb ~= '' and verb or 'list'), on_result)
  end
  if verb == '' then
    return call('memzoi.local.list', function(result)
      local items = X.local_items(result)
      ui.show_quickfix('Memzoi local-memory candidates', items)
      ui.notify(('%d pending local candidate(s)'):format(#items))
    end)
  end
  if not vim.tbl_contains({ 'approve', 'reject' }, verb) or id == '' or (verb == 'reject' and rest == '') then
    return ui.notify('usage: :Memzoi local [approve ID | reject ID REASON]', vim.log.levels.WARN)
  end
  arg.candidate_id = id
  if rest ~= '' then
    arg.reason = rest
  end
  call('memzoi.local.' .. verb, function(result)
    ui.notify(('local %s: candidate %s %s'):format(verb, id, result.state or result.status or ''))
  end)
end

return X
