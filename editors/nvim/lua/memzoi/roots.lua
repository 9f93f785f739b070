--- Memzoi for Neovim: the root a buffer belongs to (the folder holding `.memzoi/` or `.zuno/`).
local X = {}

--- The directory holding the `.memzoi/` tree that contains `fname`, or nil when `fname` is not inside one.
---@param fname string
---@return string?
function X.root_of(fname)
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
function X.global_resident()
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
function X.resident_root(fname)
  if fname == '' then
    return nil
  end
  local path = vim.fs.normalize(vim.fs.abspath(fname))
  if path:match('/%.zuno/RULES%.md$') then
    return vim.fs.dirname(vim.fs.dirname(path))
  end
  if path == X.global_resident() then
    return vim.fs.root(path, '.memzoi') or vim.fs.dirname(path)
  end
  return nil
end

--- For a JSON buffer that is a Memzoi materialization artifact (its `schema` says so; these files live outside
--- `.memzoi/`), the nearest ancestor directory holding `.memzoi/`; nil otherwise.
---@param bufnr integer
---@return string?
function X.artifact_root(bufnr)
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

return X
