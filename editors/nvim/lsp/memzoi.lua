---@brief
--- Memzoi language server (`memzoi-lsp`, from the memzoi-lsp Python distribution): diagnostics, provenance
--- hovers, code actions and lifecycle commands for Memzoi records and proposal packets.
---
--- Attaches only to files inside a `.memzoi/` directory, to materialization candidate / plan / decision JSON
--- (recognised by their `schema`) in a project that has one, and to Zuno's resident memory files (`.zuno/RULES.md`
--- and the global `MEMORY.md`); the root is the directory holding `.memzoi/` (or `.zuno/`).
--- Buffer-local `:Memzoi…` commands are created on attach (see `:help` in editors/nvim/README.md).
---
--- Override the program with `vim.lsp.config('memzoi', { cmd = { '/path/to/.venv/bin/memzoi-lsp' } })`
--- and server settings with `settings = { memzoi = { severity = { duplicate_content = 'information' } } }`.

---@type vim.lsp.Config
return {
  cmd = { 'memzoi-lsp' },
  filetypes = { 'markdown', 'json' },
  root_dir = function(bufnr, on_dir)
    local memzoi = require('memzoi')
    local name = vim.api.nvim_buf_get_name(bufnr)
    local root = memzoi.root_of(name) or memzoi.resident_root(name) or memzoi.artifact_root(bufnr)
    if root then
      on_dir(root)
    end
  end,
  settings = { memzoi = vim.empty_dict() },
  on_attach = function(client, bufnr)
    require('memzoi').on_attach(client, bufnr)
  end,
}
