--- Memzoi for Neovim: nothing stale after a write (issue 28, the review-flow contract §1/§2).
---
--- `memzoi/changed` `{changeId, operation, message, touched = {{uri, deleted}}}` comes after every change the server
--- wrote: every loaded buffer of a touched file (shown or hidden) that the user did not modify is brought in line
--- with the disk (`:checktime`, then `:edit` where that left it behind: `:checktime` never reloads a buffer whose
--- file did not exist when it was opened), a modified one is kept and the user told its file changed on disk, and
--- the diagnostics Neovim holds for a deleted file are removed. Neovim 0.11 has no `workspace/diagnostic/refresh`:
--- the client advertises it and answers it here by pulling its buffers' diagnostics again (`repull`). A buffer whose file such a change removed keeps its text and is marked, and
--- writing it, or a pending packet whose identity is already resolved on disk (the CLI applied it), warns first
--- (`before_write`). `memzoi/inboxChanged` `{}` refreshes the inbox or resident quickfix list when it is the one
--- shown.
local X = {}

--- Loaded buffers (hidden ones included) whose file is `fname`.
---@return integer[]
function X.buffers_of(fname)
  local want = vim.fs.normalize(fname)
  local real = vim.uv.fs_realpath(want)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' then
        name = vim.fs.normalize(name)
        if name == want or (real and vim.uv.fs_realpath(name) == real) then
          table.insert(out, b)
        end
      end
    end
  end
  return out
end

--- Removes every diagnostic of `bufnr` that a Memzoi client put there (push and pull namespaces).
function X.clear_diagnostics(bufnr)
  for _, c in ipairs(vim.lsp.get_clients({ name = 'memzoi' })) do
    for _, pull in ipairs({ false, true }) do
      local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, c.id, pull)
      if ok and ns then
        vim.diagnostic.reset(ns, bufnr)
      end
    end
  end
end

--- Whether the unmodified buffer `b` shows what `fname` holds on disk (an empty file is one empty line). A plain
--- UTF-8 Unix buffer compares its byte count with the file's size (no read: after `:checktime`, a buffer left
--- behind is one whose file did not exist when it was opened, so its text is empty, or one `:checktime` cannot
--- judge); any other buffer compares its lines with the file's.
local function same_as_disk(b, fname)
  local bo = vim.bo[b]
  if bo.fileformat == 'unix' and not bo.bomb and (bo.fileencoding == '' or bo.fileencoding == 'utf-8') then
    local st = vim.uv.fs_stat(fname)
    return st == nil or st.size == vim.api.nvim_buf_get_offset(b, vim.api.nvim_buf_line_count(b))
  end
  local ok, disk = pcall(vim.fn.readfile, fname, 'b')
  if not ok then
    return true -- unreadable now: nothing to bring in line
  end
  if #disk > 0 and disk[#disk] == '' then
    table.remove(disk) -- 'b' keeps the empty piece after a final newline
  end
  if #disk == 0 then
    disk = { '' }
  end
  if bo.fileformat == 'dos' then
    disk = vim.tbl_map(function(l) return (l:gsub('\r$', '')) end, disk)
  end
  return vim.deep_equal(disk, vim.api.nvim_buf_get_lines(b, 0, -1, false))
end

--- Re-reads the unmodified buffer `b` of the existing file `fname`: `:checktime` (which keeps the cursor and
--- reloads only a file it knows changed), then `:edit` when the buffer still differs from the disk (a file created
--- after the buffer was opened, e.g. a resident file's first approved entry: `:checktime` skips it).
local function reload(b, fname)
  vim.cmd(('silent! checktime %d'):format(b))
  if not vim.bo[b].modified and not same_as_disk(b, fname) then
    vim.api.nvim_buf_call(b, function()
      vim.cmd('silent! edit')
    end)
  end
end

--- The file name of buffer `b`, relative to the current directory when it is below it (for one short line).
local function shown(b)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':~:.')
end

--- Applies one `memzoi/changed` notification's `params`; returns what it did per buffer (for tests and the log):
--- `{reloaded = {bufnr…}, cleared = {bufnr…}, kept = {bufnr…}}` (kept: modified by the user, left alone and the
--- user told). A buffer whose file is gone is marked (`vim.b.memzoi_gone`, the change's operation) for
--- `before_write`.
function X.changed(params)
  local done = { reloaded = {}, cleared = {}, kept = {} }
  for _, t in ipairs((params or {}).touched or {}) do
    local ok, fname = pcall(vim.uri_to_fname, t.uri)
    if ok then
      for _, b in ipairs(X.buffers_of(fname)) do
        local gone = t.deleted == true or not vim.uv.fs_stat(fname)
        vim.b[b].memzoi_gone = gone and (params.operation or 'change') or nil -- for before_write
        if gone then
          X.clear_diagnostics(b)
          table.insert(done.cleared, b)
        elseif vim.bo[b].modified then
          table.insert(done.kept, b)
        else
          reload(b, fname)
          table.insert(done.reloaded, b)
        end
      end
    end
  end
  if #done.kept > 0 then
    -- cause first: a long path must not push it out of the one line (ui.fit)
    require('memzoi.ui').notify(('your edits kept; file changed on disk: %s')
      :format(table.concat(vim.tbl_map(shown, done.kept), ', ')), vim.log.levels.WARN)
  end
  X.last_changed = { params = params, done = done }
  return done
end

--- Why writing buffer `bufnr` now would bring back what a Memzoi change moved (nil when it would not): its file is
--- gone and a Memzoi change removed it (`vim.b.memzoi_gone`), or it is a pending packet whose file is gone while
--- `resolved/applied/` or `resolved/rejected/` holds the same file (an applied or rejected identity is final:
--- `memzoi check` refuses the copy as `duplicate_identity`).
---@return string?
function X.write_warning(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.uv.fs_stat(name) then
    return nil
  end
  local root, rel = vim.fs.normalize(name):match('^(.*)/%.memzoi/proposals/pending/(.+%.md)$')
  for _, outcome in ipairs(root and { 'applied', 'rejected' } or {}) do
    if vim.uv.fs_stat(('%s/.memzoi/proposals/resolved/%s/%s'):format(root, outcome, rel)) then
      return ('packet already %s: this write re-creates it in pending/, which memzoi check refuses '
        .. '(duplicate_identity; see resolved/%s/%s)'):format(outcome, outcome, rel)
    end
  end
  if vim.b[bufnr].memzoi_gone then
    return ('a Memzoi %s removed this file: writing re-creates it'):format(vim.b[bufnr].memzoi_gone)
  end
  return nil
end

--- The BufWritePre check (installed by `require('memzoi').setup`): warns once per write when `write_warning` says
--- the write brings back what a Memzoi change moved. The write goes ahead (the user asked for it); the warning
--- stays in `last_write_warning` and is shown once the write is done (its own "written" line would hide it).
function X.before_write(bufnr)
  local why = X.write_warning(bufnr)
  X.last_write_warning = why
  if why then
    vim.schedule(function()
      require('memzoi.ui').notify(why, vim.log.levels.WARN)
    end)
  end
end

--- The quickfix lists the inbox and resident views fill, by title, and the `:Memzoi` subcommand that refills them.
X.VIEWS = { ['Memzoi inbox'] = 'inbox', ['Memzoi resident memory'] = 'resident' }

--- Refreshes the shown inbox or resident quickfix list in place (same title, the cursor's entry kept when it still
--- exists); returns the view refreshed, or nil when neither is the current quickfix list.
function X.inbox_changed(client)
  local title = vim.fn.getqflist({ title = 0 }).title
  local view = X.VIEWS[title]
  if not view or not client then
    return nil
  end
  local memzoi = require('memzoi')
  local bufnr = vim.api.nvim_get_current_buf()
  if view == 'inbox' then
    memzoi.inbox(client, bufnr, client.root_dir, 'r')
  else
    memzoi.resident(client, bufnr, '', 'r')
  end
  X.last_inbox_refresh = view
  return view
end

--- Pulls the diagnostics of every loaded buffer `client` is attached to again (Neovim 0.11 pulls only on didOpen
--- and didChange, and has no `workspace/diagnostic/refresh`): what the server re-judged without an edit of the
--- buffer (its configuration, git's state, the ledger, a retention boundary, another file) reaches the open buffers.
--- Returns how many buffers were asked for.
function X.repull(client)
  local n = 0
  for b in pairs(client and client.attached_buffers or {}) do
    if vim.api.nvim_buf_is_loaded(b) then
      client:request('textDocument/diagnostic', { textDocument = { uri = vim.uri_from_bufnr(b) } },
        vim.lsp.diagnostic.on_diagnostic, b)
      n = n + 1
    end
  end
  X.last_repull = n
  return n
end

--- The client config's `handlers` for the two notifications and the diagnostics refresh request.
function X.handlers()
  return {
    ['workspace/diagnostic/refresh'] = function(_, _, ctx)
      X.repull(vim.lsp.get_client_by_id(ctx.client_id))
      return vim.NIL
    end,
    ['memzoi/changed'] = function(_, params)
      X.changed(params)
    end,
    ['memzoi/inboxChanged'] = function(_, _, ctx)
      X.inbox_changed(vim.lsp.get_client_by_id(ctx.client_id))
    end,
  }
end

return X
