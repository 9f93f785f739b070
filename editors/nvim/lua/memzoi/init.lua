--- Memzoi for Neovim: one global `:Memzoi {subcommand}` command (with completion, from any buffer) that calls the
--- memzoi-lsp server's commands (`workspace/executeCommand`), and client-side handlers (the config's `commands`
--- field) for the server commands that code actions and code lenses run, which prompt with `vim.ui.input` for the
--- reasons lifecycle changes record, and run every change that has a preview through the review flow
--- (lua/memzoi/review.lua: ask once, show the diff, then Apply or Cancel).
local M = {}
local ui = require('memzoi.ui')
local prompts = require('memzoi.prompts')
local review = require('memzoi.review')
local sync = require('memzoi.sync')

--- Options (`require('memzoi').setup{ confirm_writes = true }`): `confirm_writes` sends a change that has a preview
--- (apply, supersede, tombstone, re-attest, materialize, resident approve) through the review flow when it is
--- started from a code action, a lens or `:Memzoi`; false writes at once.
M.options = { confirm_writes = true }
local notify, show_quickfix = ui.notify, ui.show_quickfix
-- The helper modules' functions are part of this module's interface (`require('memzoi').root_of`, …).
for _, name in ipairs({ 'memzoi.roots', 'memzoi.history', 'memzoi.candidates', 'memzoi.routing', 'memzoi.checkpoints' }) do
  for k, v in pairs(require(name)) do
    M[k] = v
  end
end

--- Commands: the subcommand name, the server command that implements it, what it acts on, whether it records a
--- reason, and how its arguments are shaped. Keep in step with vscode-extension/src/logic/commands.ts (a test
--- compares the two tables).
M.commands = {
  { name = 'Apply', server = { 'memzoi.apply' }, target = 'proposal' },
  { name = 'Reject', server = { 'memzoi.reject' }, target = 'proposal', reason = 'required' },
  { name = 'RouteLocal', server = { 'memzoi.routeLocal' }, target = 'proposal' },
  { name = 'Supersede', server = { 'memzoi.supersede' }, target = 'record', reason = 'required', new_title = true },
  { name = 'Tombstone', server = { 'memzoi.tombstone' }, target = 'record', reason = 'required' },
  { name = 'Reattest', server = { 'memzoi.reattest' }, target = 'record', reason = 'optional' },
  { name = 'MaterializePlan', server = { 'memzoi.materialize.plan' }, target = 'candidate' },
  { name = 'MaterializeDecide', server = { 'memzoi.materialize.decide' }, target = 'candidate' },
  { name = 'Materialize', server = { 'memzoi.materialize' }, target = 'candidate' },
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
  { name = 'Rebuild', server = { 'memzoi.rebuild' }, target = 'none' },
  { name = 'Doctor', server = { 'memzoi.doctor' }, target = 'none' },
  { name = 'Check', server = { 'memzoi.checkWorkspace' }, target = 'none' },
  { name = 'Search', server = { 'memzoi.search' }, target = 'none', query = 'Search records: ', args = 'query' },
}

--- The `:Memzoi` subcommand of a command spec: `RouteLocal` -> `route-local`.
---@return string
function M.subcommand(spec)
  return (spec.name:gsub('(%l)(%u)', '%1-%2'):lower())
end

--- The server command of `spec` when `client` advertises it in `executeCommandProvider.commands`.
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

--- One-line summary of a command result (lua/memzoi/ui.lua `describe_result`).
M.describe_result = ui.describe_result

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
  for _, k in ipairs({ 'uri', 'change_id', 'mode', 'reason', 'title', 'operation', 'previewed' }) do
    if ctx[k] then
      arg[k] = ctx[k]
    end
  end
  return { arg }
end

--- Sends one command to the server (never through `vim.lsp.commands`, which would call our own handler again) and
--- reports the outcome once: an error response as one error notification, a result as one line. `on_refused(err)`,
--- when given, is called after a refusal is shown (the review flow offers a new preview when the files changed).
local function execute(client, bufnr, spec, server_cmd, ctx, on_result, on_refused)
  local params = { command = server_cmd, arguments = M.build_arguments(spec, ctx) }
  client:request('workspace/executeCommand', params, function(err, result)
    if err then
      M.last_error = err
      notify(('%s refused: %s'):format(M.subcommand(spec), ui.refusal(err)), vim.log.levels.ERROR)
      if on_refused then
        on_refused(err)
      end
      return
    end
    M.last_result = result
    if on_result then
      return on_result(result)
    end
    if spec.args == 'query' and type(result) == 'table' and vim.islist(result) then
      local items = {}
      for _, r in ipairs(result) do
        table.insert(items, { filename = vim.uri_to_fname(r.uri), lnum = 1, text = (r.title or '') .. ' [' .. tostring(r.id) .. ']' })
      end
      show_quickfix('Memzoi search: ' .. (ctx.query or ''), items)
      return notify(('%d matching record(s)'):format(#items))
    end
    if spec.name == 'History' then
      local items = M.history_items(client.root_dir, result)
      local subject = ctx.uri and M.history_subject(client.root_dir, vim.uri_to_fname(ctx.uri)) or nil
      show_quickfix(subject and ('Memzoi history of ' .. subject) or 'Memzoi history', items)
      return notify(M.history_note(subject, #items))
    end
    M.last_write = result
    notify(M.describe_result(result))
    -- The change is on disk: reload the buffers of its files (the server's memzoi/changed does the same; this
    -- covers a server that does not send it).
    M.reload_result(client, result)
  end, bufnr)
end

--- Reloads the buffers of every file of a change result (`files = {{path, before, after}}`, paths relative to the
--- client's root) through the `memzoi/changed` handler; a file the change removed loses its diagnostics.
function M.reload_result(client, result)
  if type(result) ~= 'table' or type(result.files) ~= 'table' or not client or not client.root_dir then
    return
  end
  local touched = {}
  for _, f in ipairs(result.files) do
    if type(f) == 'table' and type(f.path) == 'string' then
      table.insert(touched, { uri = vim.uri_from_fname(vim.fs.joinpath(client.root_dir, f.path)), deleted = f.after == 'absent' })
    end
  end
  sync.changed({ touched = touched })
end

--- Runs `spec`'s server command `server_cmd` with `ctx`: through the review flow when it has a preview and
--- `confirm_writes` is on, else after asking for its reason.
local function run_or_review(client, bufnr, spec, server_cmd, ctx)
  if M.options.confirm_writes and review.PREVIEWABLE[server_cmd] then
    return review.review(client, bufnr, { command = server_cmd, arg = ctx }, function(cmd, arg, on_refused)
      execute(client, bufnr, spec, cmd, arg, nil, on_refused)
    end)
  end
  prompts.with_reason(spec, ctx, function()
    execute(client, bufnr, spec, server_cmd, ctx)
  end, M.subcommand(spec))
end

--- The memzoi client of `bufnr`, else any running memzoi client (commands work from any buffer).
function M.client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'memzoi' })[1] or vim.lsp.get_clients({ name = 'memzoi' })[1]
end

--- Asks for the reason `spec` records and a new title where it takes one (lua/memzoi/prompts.lua), then `go`.
--- Gathers what `spec` needs (target file, change id, query, reason) and runs it. `text` is what was typed after
--- the subcommand (`:Memzoi reject duplicate of X` gives the reason, `:Memzoi undo ID` the change).
function M.run(bufnr, spec, text)
  local client = M.client_for(bufnr)
  if not client then
    return notify('no memzoi language server is running: open a file under .memzoi first', vim.log.levels.ERROR)
  end
  local server_cmd = M.resolve(client, spec)
  if not server_cmd then
    return notify(('this memzoi-lsp does not offer %s; update memzoi-lsp'):format(M.subcommand(spec)), vim.log.levels.WARN)
  end
  local ctx = {}
  local fname = vim.api.nvim_buf_get_name(bufnr)
  text = vim.trim(text or '')
  if spec.target == 'change' then
    local id, rest = text:match('^(%S+)%s*(.*)$')
    if not id then
      -- No id typed: choose among the changes of the history.
      return M.pick_change(client, bufnr, function(choice)
        M.run(bufnr, spec, choice)
      end)
    end
    ctx.change_id = id
    text = ''
    if spec.modes then
      if rest == '' then
        -- Recovering is an explicit choice: ask which way to settle the change.
        return vim.ui.select(spec.modes, { prompt = 'Recover change ' .. id .. ':' }, function(choice)
          if choice then
            M.run(bufnr, spec, id .. ' ' .. choice)
          end
        end)
      end
      if not vim.tbl_contains(spec.modes, rest) then
        return notify('MODE is one of: ' .. table.concat(spec.modes, ', '), vim.log.levels.WARN)
      end
      ctx.mode = rest
    end
  elseif spec.target ~= 'none' then
    if spec.target == 'proposal' and not is_pending_proposal(fname) then -- no target given: ask, never guess
      return M.pick_proposal(client, bufnr, function(uri)
        local b = vim.fn.bufadd(vim.uri_to_fname(uri))
        vim.fn.bufload(b)
        M.run(b, spec, text)
      end)
    end
    if spec.target ~= 'memzoiFile' and vim.bo[bufnr].modified then
      -- Lifecycle commands are disk transactions: the server refuses files with unsaved changes.
      return notify('write the buffer first: lifecycle commands work on the file on disk', vim.log.levels.WARN)
    end
    if spec.target == 'memzoiFile' and text == 'all' then
      text = '' -- `:Memzoi history all`: every change, whatever the buffer
    elseif fname ~= '' and (spec.target ~= 'memzoiFile' or M.root_of(fname)) then
      ctx.uri = vim.uri_from_bufnr(bufnr)
    elseif spec.target ~= 'memzoiFile' then
      return notify(M.subcommand(spec) .. ' needs a Memzoi file: open it first', vim.log.levels.WARN)
    end
  end
  if spec.reason and text ~= '' then
    ctx.reason = text
  end
  if spec.query then
    local function go()
      execute(client, bufnr, spec, server_cmd, ctx)
    end
    if text ~= '' then
      ctx.query = text
      return go()
    end
    return vim.ui.input({ prompt = spec.query }, function(input)
      if input ~= nil then
        ctx.query = input
        go()
      end
    end)
  end
  if spec.target == 'change' and not spec.modes and M.options.confirm_writes then -- undo: name the change first
    return M.confirm_undo(client, bufnr, ctx.change_id, function() run_or_review(client, bufnr, spec, server_cmd, ctx) end)
  end
  run_or_review(client, bufnr, spec, server_cmd, ctx)
end

--- `:Memzoi` subcommands beyond the command table: the inbox, resident memory, local candidates, checkpoints,
--- memory health, preview, routing of a session-end file or import manifest (lua/memzoi/routing.lua) and restart.
local EXTRA = { 'inbox', 'resident', 'local', 'checkpoints', 'health', 'preview', 'review', 'route', 'restart' }

--- Completion of `:Memzoi`: subcommands, then change ids for `undo`/`recover` and modes for `recover`.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local nth = #words + (cmdline:match('%s$') and 1 or 0)
  if nth <= 2 then
    local subs = vim.tbl_map(M.subcommand, M.commands)
    vim.list_extend(subs, EXTRA)
    table.sort(subs)
    return vim.tbl_filter(function(s)
      return vim.startswith(s, arglead)
    end, subs)
  end
  local sub = words[2]
  if (sub == 'undo' or sub == 'recover') and nth == 3 then
    local bufnr = vim.api.nvim_get_current_buf()
    local client = M.client_for(bufnr)
    local ids = {}
    for _, c in ipairs(client and M.changes(client, bufnr) or {}) do
      if (sub == 'recover') == (c.status == 'uncertain') and vim.startswith(c.change_id, arglead) then
        table.insert(ids, c.change_id)
      end
    end
    return ids
  end
  if sub == 'history' and nth == 3 then
    return vim.startswith('all', arglead) and { 'all' } or {}
  end
  if sub == 'recover' and nth == 4 then
    return { 'restore-before', 'complete-after', 'accept' }
  end
  if sub == 'resident' and nth == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end,
      { 'approve', 'reject', 'undo', 'edit', 'remove', 'jobs', 'job' })
  end
  if sub == 'local' and nth == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'approve', 'reject' })
  end
  if sub == 'checkpoints' and nth == 3 then
    return vim.tbl_filter(function(s) return vim.startswith(s, arglead) end, { 'continue', 'close' })
  end
  return {}
end

--- Runs `:Memzoi {subcommand} [args]` from the current buffer.
function M.dispatch(args)
  local sub, rest = vim.trim(args or ''):match('^(%S+)%s*(.*)$')
  local bufnr = vim.api.nvim_get_current_buf()
  for _, spec in ipairs(M.commands) do
    if M.subcommand(spec) == sub then
      return M.run(bufnr, spec, rest)
    end
  end
  local client = M.client_for(bufnr)
  if sub == 'inbox' then
    local root = (client and client.root_dir) or M.root_of(vim.api.nvim_buf_get_name(bufnr))
    if not root then
      return notify('no .memzoi directory: open a file of the project first', vim.log.levels.WARN)
    end
    return M.inbox(client, bufnr, root)
  elseif sub == 'resident' and client then
    return M.resident(client, bufnr, rest)
  elseif sub == 'local' and client then
    return M.local_candidates(client, bufnr, rest)
  elseif sub == 'route' and client then
    return M.route(client, bufnr)
  elseif sub == 'checkpoints' and client then
    return M.checkpoints(client, bufnr, rest)
  elseif sub == 'health' and client then
    return M.health(client, bufnr)
  elseif (sub == 'preview' or sub == 'review') and client then
    local name = vim.api.nvim_buf_get_name(bufnr)
    local op = rest ~= '' and rest or (is_pending_proposal(name) and 'apply' or 'materialize')
    return M.preview(client, bufnr, { uri = vim.uri_from_bufnr(bufnr), operation = op })
  elseif sub == 'restart' and client then
    local name = client.name
    client:stop()
    return vim.defer_fn(function()
      vim.cmd('edit')
      if #vim.lsp.get_clients({ bufnr = bufnr, name = name }) == 0 then
        vim.lsp.enable(name)
      end
    end, 500)
  elseif not client then
    return notify('no memzoi language server is running: open a file under .memzoi first', vim.log.levels.ERROR)
  end
  notify(('unknown subcommand %q; see :Memzoi <Tab>'):format(sub or ''), vim.log.levels.WARN)
end

--- The review flow of `arg` (`{uri, operation, reason?, title?, candidate_id?}`): asks what the change itself
--- would (once), shows its preview as one diff tab, then offers Apply / Cancel (lua/memzoi/review.lua).
function M.preview(client, bufnr, arg)
  local command = review.command_of(arg.operation)
  if not command then
    return notify(('nothing to preview for %q'):format(tostring(arg.operation)), vim.log.levels.WARN)
  end
  local spec = M.spec_of(command) or { name = review.PREVIEWABLE[command].label, server = { command } }
  local given = vim.deepcopy(arg)
  given.operation = nil
  local req = { command = command, arg = given }
  review.review(client, bufnr, req, function(cmd, a, on_refused)
    execute(client, bufnr, spec, cmd, a, nil, on_refused)
  end)
end

--- The entry of `M.commands` whose server command is `command`, or nil.
function M.spec_of(command)
  for _, s in ipairs(M.commands) do
    if vim.tbl_contains(s.server, command) then
      return s
    end
  end
  return nil
end

--- Client-side handlers of the server commands that code actions and code lenses run (the config's `commands`
--- field): they ask for what the command needs (`vim.ui.input` for reasons), go through the review flow where the
--- change has a preview, send it with the target the action named, and report once.
function M.client_commands()
  local handlers = {}
  local function with_client(fn)
    return function(command, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client then
        local given = (command.arguments or {})[1]
        fn(client, ctx.bufnr, type(given) == 'table' and vim.deepcopy(given) or {}, command.command)
      end
    end
  end
  for _, spec in ipairs(M.commands) do
    handlers[spec.server[1]] = with_client(function(client, bufnr, arg, name)
      run_or_review(client, bufnr, spec, name, arg)
    end)
  end
  handlers['memzoi.preview'] = with_client(M.preview)
  -- *Plan memory routing*: the preview in the quickfix list, then Apply or Cancel (lua/memzoi/routing.lua).
  handlers['memzoi.routing.preview'] = with_client(function(client, bufnr)
    M.route(client, bufnr)
  end)
  -- Review first (contract §3): the default action on a pending proposal / a resident candidate.
  handlers['memzoi.review'] = with_client(function(client, bufnr, arg)
    M.preview(client, bufnr, { uri = arg.uri, operation = 'apply' })
  end)
  handlers['memzoi.reviewCandidate'] = with_client(function(client, bufnr, arg)
    M.resident_decide(client, bufnr, 'approve', { uri = arg.uri, candidate_id = arg.candidateId or arg.candidate_id })
  end)
  for _, verb in ipairs({ 'approve', 'reject', 'undo', 'recover' }) do
    handlers['memzoi.resident.' .. verb] = with_client(function(client, bufnr, arg)
      M.resident_decide(client, bufnr, verb, arg)
    end)
  end
  -- A blocked action (see M.show_disabled): picking it only says why it cannot run.
  handlers['memzoi.blocked'] = function(command)
    local arg = (command.arguments or {})[1] or {}
    M.last_error = { message = (arg.title or 'action') .. ' cannot run: ' .. (arg.reason or '?') }
    notify(M.last_error.message, vim.log.levels.WARN)
  end
  -- An informational lens (the resident file's cap usage) has an empty command: running it does nothing.
  handlers[''] = function() end
  -- The resident files' code lens "N pending candidates: Review" opens them in the quickfix list.
  handlers['memzoi.resident.review'] = with_client(function(client, bufnr)
    M.resident(client, bufnr, '')
  end)
  return handlers
end

--- Neovim's code-action menu has no disabled entries (it would run one), so the client asks the server for them
--- (`codeAction.disabledSupport`, lsp/memzoi.lua) and this turns each into a menu entry titled with why it is
--- blocked, `Title (blocked: reason)`, whose command (`memzoi.blocked`) only shows the reason. Wraps the
--- client's `request` once, for `textDocument/codeAction` answers only.
function M.show_disabled(client)
  if client._memzoi_disabled then
    return
  end
  client._memzoi_disabled = true
  local request = client.request
  local function wrapped(self, method, params, handler, bufnr)
    if method == 'textDocument/codeAction' and handler then
      local inner = handler
      handler = function(err, result, ...)
        for i, a in ipairs(type(result) == 'table' and result or {}) do
          if type(a) == 'table' and type(a.disabled) == 'table' then
            local reason = tostring(a.disabled.reason or '')
            result[i] = { title = a.title .. ' (blocked: ' .. reason .. ')', kind = a.kind,
              command = 'memzoi.blocked', arguments = { { title = a.title, reason = reason } } }
          end
        end
        return inner(err, result, ...)
      end
    end
    return request(self, method, params, handler, bufnr)
  end
  client.request = function(first, ...) -- client:request(...), or the deprecated client.request(...)
    if first == client then
      return wrapped(client, ...)
    end
    return wrapped(client, first, ...)
  end
end

--- Creates the global `:Memzoi` command (once) and takes `opts` (`{confirm_writes = bool}`, see `M.options`). The
--- server config (lsp/memzoi.lua) calls it, so it exists whatever `on_attach` the user sets.
function M.setup(opts)
  M.options = vim.tbl_extend('force', M.options, opts or {})
  if M._setup then
    return
  end
  M._setup = true
  vim.api.nvim_create_user_command('Memzoi', function(opts)
    M.dispatch(opts.args)
  end, { nargs = '+', complete = M.complete, desc = 'Memzoi: :Memzoi {subcommand} [args] (see :Memzoi <Tab>)' })
  -- Writing a buffer whose file a Memzoi change moved (an applied packet) warns first (lua/memzoi/sync.lua).
  vim.api.nvim_create_autocmd('BufWritePre', {
    pattern = { '*/.memzoi/*' },
    callback = function(args)
      sync.before_write(args.buf)
    end,
  })
  -- On attach, whatever on_attach or on_init the user sets.
  vim.api.nvim_create_autocmd('LspAttach', {
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == 'memzoi' then
        M.show_disabled(client)
      end
    end,
  })
end

return M
