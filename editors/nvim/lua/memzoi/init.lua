--- Memzoi for Neovim: buffer-local `:Memzoi…` commands that call the memzoi-lsp server's commands
--- (`workspace/executeCommand`), prompting with `vim.ui.input` for the reasons lifecycle changes record.
local M = {}

--- Commands: the user command suffix, the server commands that implement it (the first one the server advertises
--- is used), what it acts on, whether it records a reason, and how its arguments are shaped. Keep in step with
--- vscode-extension/src/logic/commands.ts (a test compares the two tables).
M.commands = {
  { name = 'Apply', server = { 'memzoi.apply', 'memzoi.proposals.apply' }, target = 'proposal' },
  { name = 'Reject', server = { 'memzoi.reject', 'memzoi.proposals.reject' }, target = 'proposal', reason = 'required' },
  { name = 'RouteLocal', server = { 'memzoi.routeLocal', 'memzoi.route_local', 'memzoi.proposals.routeLocal' }, target = 'proposal' },
  { name = 'Supersede', server = { 'memzoi.supersede' }, target = 'record', reason = 'required' },
  { name = 'Tombstone', server = { 'memzoi.tombstone' }, target = 'record', reason = 'required' },
  { name = 'Reattest', server = { 'memzoi.reattest' }, target = 'record', reason = 'optional' },
  { name = 'MaterializePlan', server = { 'memzoi.materialize.plan' }, target = 'candidate' },
  { name = 'MaterializeDecide', server = { 'memzoi.materialize.decide' }, target = 'candidate' },
  { name = 'Materialize', server = { 'memzoi.materialize', 'memzoi.materialize.apply' }, target = 'candidate' },
  { name = 'Undo', server = { 'memzoi.undo' }, target = 'change' },
  {
    name = 'Recover',
    server = { 'memzoi.recover' },
    target = 'change',
    reason = 'optional',
    modes = { 'restore-before', 'complete-after', 'accept' },
  },
  { name = 'History', server = { 'memzoi.history' }, target = 'memzoiFile' },
  { name = 'Reconcile', server = { 'memzoi.reconcile' }, target = 'none' },
  { name = 'Rebuild', server = { 'memzoi.rebuild', 'memzoi.rebuildIndex' }, target = 'none' },
  { name = 'Doctor', server = { 'memzoi.doctor' }, target = 'none' },
  { name = 'Check', server = { 'memzoi.check', 'memzoi.checkWorkspace' }, target = 'none' },
  { name = 'Search', server = { 'memzoi.search' }, target = 'none', query = 'Search records: ', args = 'query' },
}

--- The directory holding the `.memzoi/` tree that contains `fname`, or nil when `fname` is not inside one.
---@param fname string
---@return string?
function M.root_of(fname)
  if fname == '' then
    return nil
  end
  local path = vim.fs.normalize(vim.fs.abspath(fname))
  for dir in vim.fs.parents(path) do
    if vim.fs.basename(dir) == '.memzoi' then
      return vim.fs.dirname(dir)
    end
  end
  return nil
end

--- Zuno's global resident memory file: `$ZUNO_CONFIG_DIR/memory/MEMORY.md`, else `~/.config/zuno/memory/MEMORY.md`.
---@return string
function M.global_resident()
  local base = os.getenv('ZUNO_CONFIG_DIR')
  if not base or base == '' then
    base = vim.fs.joinpath(vim.fs.normalize('~'), '.config', 'zuno')
  end
  return vim.fs.normalize(vim.fs.joinpath(base, 'memory', 'MEMORY.md'))
end

--- For a resident memory file (a project's `.zuno/RULES.md`, or the global MEMORY.md), the root the server gets:
--- the folder holding `.zuno/` (or the global file's folder); nil otherwise. Locations changed under `[resident]` in
--- `.memzoi/config.toml` are not recognised here; add them with your own `root_dir`.
---@param fname string
---@return string?
function M.resident_root(fname)
  if fname == '' then
    return nil
  end
  local path = vim.fs.normalize(vim.fs.abspath(fname))
  if path:match('/%.zuno/RULES%.md$') then
    return vim.fs.dirname(vim.fs.dirname(path))
  end
  if path == M.global_resident() then
    return vim.fs.root(path, '.memzoi') or vim.fs.dirname(path)
  end
  return nil
end

--- For a JSON buffer that is a Memzoi materialization artifact (its `schema` says so; these files live outside
--- `.memzoi/`), the nearest ancestor directory holding `.memzoi/`; nil otherwise.
---@param bufnr integer
---@return string?
function M.artifact_root(bufnr)
  if vim.bo[bufnr].filetype ~= 'json' then
    return nil
  end
  local head = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, 40, false), '\n')
  if not head:find('"schema"%s*:%s*"memzoi/repository%-materialization%-') then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  return vim.fs.root(name, '.memzoi')
end

--- The first of `spec.server` that `client` advertises in `executeCommandProvider.commands`.
---@return string?
function M.resolve(client, spec)
  local caps = client.server_capabilities or {}
  local advertised = (caps.executeCommandProvider or {}).commands or {}
  for _, name in ipairs(spec.server) do
    if vim.tbl_contains(advertised, name) then
      return name
    end
  end
  return nil
end

local function notify(msg, level)
  vim.notify('Memzoi: ' .. msg, level or vim.log.levels.INFO)
end

--- One-line summary of a command result (the CLI's --json shapes: a change, an error, a list, or a report).
---@return string
function M.describe_result(result)
  if type(result) ~= 'table' then
    return vim.inspect(result)
  end
  if result.error then
    return ('refused: %s'):format(result.error.message or vim.inspect(result.error))
  end
  if result.change_id then
    local files = {}
    for _, f in ipairs(result.files or {}) do
      table.insert(files, ('%s (%s -> %s)'):format(f.path, f.before, f.after))
    end
    return ('change %s %s: %s'):format(result.change_id, result.status or '', table.concat(files, ', '))
  end
  if vim.islist(result) then
    return ('%d result(s)'):format(#result)
  end
  return vim.json.encode(result)
end

local function is_pending_proposal(fname)
  return fname:match('/%.memzoi/proposals/pending/[^/]+%.md$') ~= nil
end

--- Builds the `arguments` of workspace/executeCommand for `spec` from what was gathered.
---@return table
function M.build_arguments(spec, ctx)
  if spec.args == 'query' then
    return { ctx.query or '' }
  end
  local arg = vim.empty_dict()
  if ctx.uri then
    arg.uri = ctx.uri
  end
  if ctx.change_id then
    arg.change_id = ctx.change_id
  end
  if ctx.mode then
    arg.mode = ctx.mode
  end
  if ctx.reason then
    arg.reason = ctx.reason
  end
  return { arg }
end

local function execute(client, bufnr, spec, server_cmd, ctx)
  local command = { title = 'Memzoi ' .. spec.name, command = server_cmd, arguments = M.build_arguments(spec, ctx) }
  client:exec_cmd(command, { bufnr = bufnr }, function(err, result)
    if err then
      M.last_error = err
      notify(('%s failed: %s'):format(spec.name, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.last_result = result
    if spec.args == 'query' and type(result) == 'table' and vim.islist(result) then
      local items = {}
      for _, r in ipairs(result) do
        table.insert(items, { filename = vim.uri_to_fname(r.uri), lnum = 1, text = (r.title or '') .. ' [' .. tostring(r.id) .. ']' })
      end
      vim.fn.setqflist({}, ' ', { title = 'Memzoi search: ' .. (ctx.query or ''), items = items })
      if #items > 0 then
        vim.cmd('botright copen')
      end
    end
    notify(('%s: %s'):format(spec.name, M.describe_result(result)))
    -- Lifecycle commands write files on disk: reload unmodified buffers that changed.
    vim.cmd('silent! checktime')
  end)
end

--- Gathers what `spec` needs (target file, change id, query, reason) and runs it.
--- `fargs` is the text typed after the user command (`:MemzoiReject duplicate of X` gives the reason).
function M.run(bufnr, spec, fargs)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = 'memzoi' })[1]
  if not client then
    notify('the memzoi language server is not attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local server_cmd = M.resolve(client, spec)
  if not server_cmd then
    notify(('this memzoi-lsp does not offer %s; update memzoi-lsp'):format(spec.name), vim.log.levels.WARN)
    return
  end
  local ctx = {}
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local text = vim.trim(fargs or '')
  if spec.target == 'change' then
    local id, rest = text:match('^(%S+)%s*(.*)$')
    if not id then
      notify(('usage: :Memzoi%s CHANGE_ID%s (see :MemzoiHistory)'):format(spec.name, spec.modes and ' [MODE]' or ''), vim.log.levels.WARN)
      return
    end
    ctx.change_id = id
    text = ''
    if spec.modes then
      if rest ~= '' then
        if not vim.tbl_contains(spec.modes, rest) then
          notify('MODE is one of: ' .. table.concat(spec.modes, ', '), vim.log.levels.WARN)
          return
        end
        ctx.mode = rest
      else
        -- Recovering is an explicit choice: ask which way to settle the change.
        vim.ui.select(spec.modes, { prompt = 'Recover change ' .. id .. ':' }, function(choice)
          if choice then
            M.run(bufnr, spec, id .. ' ' .. choice)
          end
        end)
        return
      end
    end
    if vim.uri_from_bufnr(bufnr):match('^file:') then
      ctx.uri = vim.uri_from_bufnr(bufnr)
    end
  elseif spec.target ~= 'none' then
    if spec.target == 'proposal' and not is_pending_proposal(fname) then
      notify(spec.name .. ' works on a pending proposal (.memzoi/proposals/pending/*.md)', vim.log.levels.WARN)
      return
    end
    if vim.bo[bufnr].modified then
      -- Lifecycle commands are disk transactions: the server refuses files with unsaved changes.
      notify('write the buffer first: lifecycle commands work on the file on disk', vim.log.levels.WARN)
      return
    end
    ctx.uri = vim.uri_from_bufnr(bufnr)
  end
  local function with_reason()
    if not spec.reason then
      return execute(client, bufnr, spec, server_cmd, ctx)
    end
    if text ~= '' then
      ctx.reason = text
      return execute(client, bufnr, spec, server_cmd, ctx)
    end
    local prompt = spec.reason == 'required' and 'Reason (required): ' or 'Reason (optional): '
    vim.ui.input({ prompt = prompt }, function(input)
      if input == nil then
        return -- cancelled
      end
      input = vim.trim(input)
      if input == '' and spec.reason == 'required' then
        notify(spec.name .. ' needs a reason: it is recorded with the change', vim.log.levels.WARN)
        return
      end
      ctx.reason = input ~= '' and input or nil
      execute(client, bufnr, spec, server_cmd, ctx)
    end)
  end
  if spec.query then
    if text ~= '' then
      ctx.query = text
      return with_reason()
    end
    vim.ui.input({ prompt = spec.query }, function(input)
      if input ~= nil then
        ctx.query = input
        with_reason()
      end
    end)
    return
  end
  with_reason()
end

--- Pending proposal packets under `root` as quickfix items (`:MemzoiInbox`).
function M.inbox_items(root)
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

--- Resident memory as quickfix items (`:MemzoiResident`): candidates waiting for a decision first, then the
--- others, each on its resident file; `listing` is the result of the server's `memzoi.resident.list`.
function M.resident_items(listing)
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

--- `:MemzoiResident [approve ID | reject ID [REASON] | undo ID]`: without arguments, lists both resident files and
--- their candidates in the quickfix list; with a verb, runs it on the candidate.
function M.resident(client, bufnr, fargs)
  local verb, id, rest = vim.trim(fargs or ''):match('^(%S*)%s*(%S*)%s*(.*)$')
  local arg = vim.empty_dict()
  if vim.uri_from_bufnr(bufnr):match('^file:') then
    arg.uri = vim.uri_from_bufnr(bufnr)
  end
  if verb == '' then
    client:exec_cmd({ title = 'Memzoi resident', command = 'memzoi.resident.list', arguments = { arg } }, { bufnr = bufnr },
      function(err, result)
        if err or type(result) ~= 'table' or result.error then
          return notify('resident: ' .. (err and err.message or M.describe_result(result)), vim.log.levels.WARN)
        end
        M.last_result = result
        local items = M.resident_items(result)
        vim.fn.setqflist({}, ' ', { title = 'Memzoi resident memory', items = items })
        vim.cmd('botright copen')
        vim.cmd('wincmd p') -- back to the resident file, where `:MemzoiResident approve ID` is defined
      end)
    return
  end
  if not vim.tbl_contains({ 'approve', 'reject', 'undo' }, verb) or id == '' then
    return notify('usage: :MemzoiResident [approve ID | reject ID [REASON] | undo ID]', vim.log.levels.WARN)
  end
  arg.candidate_id = id
  if rest ~= '' then
    arg.reason = rest
  end
  client:exec_cmd({ title = 'Memzoi resident ' .. verb, command = 'memzoi.resident.' .. verb, arguments = { arg } },
    { bufnr = bufnr }, function(err, result)
      if err then
        return notify(('resident %s failed: %s'):format(verb, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      M.last_result = result
      local text = result.error and ('refused: ' .. result.error.message) or ('candidate %s %s'):format(result.id, result.status)
      notify(('resident %s: %s'):format(verb, text))
      vim.cmd('silent! checktime')
    end)
end

--- Creates the buffer-local `:Memzoi…` commands. Call it from your own `on_attach` if you replace the config's.
function M.on_attach(client, bufnr)
  for _, spec in ipairs(M.commands) do
    local takes = (spec.reason or spec.query) and '?' or 0
    if spec.target == 'change' then
      takes = '+'
    end
    vim.api.nvim_buf_create_user_command(bufnr, 'Memzoi' .. spec.name, function(opts)
      M.run(bufnr, spec, opts.args)
    end, { nargs = takes, desc = 'Memzoi: ' .. spec.name })
  end
  vim.api.nvim_buf_create_user_command(bufnr, 'MemzoiInbox', function()
    local root = client.root_dir or M.root_of(vim.api.nvim_buf_get_name(bufnr))
    if not root then
      return notify('no .memzoi directory for this buffer', vim.log.levels.WARN)
    end
    local items = M.inbox_items(root)
    vim.fn.setqflist({}, ' ', { title = 'Memzoi inbox', items = items })
    notify(('%d pending proposal(s)'):format(#items))
    if #items > 0 then
      vim.cmd('botright copen')
    end
  end, { desc = 'Memzoi: pending proposals in the quickfix list' })
  -- The resident files' code lens "N pending candidates: Review" opens them in the quickfix list.
  vim.lsp.commands['memzoi.resident.review'] = function(_, ctx)
    M.resident(vim.lsp.get_client_by_id(ctx.client_id) or client, ctx.bufnr or bufnr, '')
  end
  vim.api.nvim_buf_create_user_command(bufnr, 'MemzoiResident', function(opts)
    M.resident(client, bufnr, opts.args)
  end, { nargs = '*', desc = 'Memzoi: resident memory candidates (approve ID, reject ID [REASON], undo ID)' })
  vim.api.nvim_buf_create_user_command(bufnr, 'MemzoiRestart', function()
    local name = client.name
    client:stop()
    vim.defer_fn(function()
      vim.cmd('edit')
      if #vim.lsp.get_clients({ bufnr = bufnr, name = name }) == 0 then
        vim.lsp.enable(name)
      end
    end, 500)
  end, { desc = 'Memzoi: restart the language server' })
end

return M
