--- Memzoi for Neovim: nothing stale after a write (issue 28, the review-flow contract §1/§2).
---
--- `memzoi/changed` `{changeId, operation, message, touched = {{uri, deleted}}}` comes after every change the server
--- wrote: every loaded buffer of a touched file (shown or hidden) is re-read with `:checktime` unless the user
--- modified it, and the diagnostics Neovim holds for a deleted file are removed (Neovim 0.11 has no
--- `workspace/diagnostic/refresh`). `memzoi/inboxChanged` `{}` refreshes the inbox or resident quickfix list when it
--- is the one shown.
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

--- Applies one `memzoi/changed` notification's `params`; returns what it did per buffer (for tests and the log):
--- `{reloaded = {bufnr…}, cleared = {bufnr…}, kept = {bufnr…}}` (kept: modified by the user, left alone).
function X.changed(params)
  local done = { reloaded = {}, cleared = {}, kept = {} }
  for _, t in ipairs((params or {}).touched or {}) do
    local ok, fname = pcall(vim.uri_to_fname, t.uri)
    if ok then
      for _, b in ipairs(X.buffers_of(fname)) do
        if t.deleted == true or not vim.uv.fs_stat(fname) then
          X.clear_diagnostics(b)
          table.insert(done.cleared, b)
        elseif vim.bo[b].modified then
          table.insert(done.kept, b)
        else
          vim.cmd(('silent! checktime %d'):format(b))
          table.insert(done.reloaded, b)
        end
      end
    end
  end
  X.last_changed = { params = params, done = done }
  return done
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

--- The client config's `handlers` for the two notifications.
function X.handlers()
  return {
    ['memzoi/changed'] = function(_, params)
      X.changed(params)
    end,
    ['memzoi/inboxChanged'] = function(_, _, ctx)
      X.inbox_changed(vim.lsp.get_client_by_id(ctx.client_id))
    end,
  }
end

return X
