---@brief
--- Memzoi language server (`memzoi-lsp`, from the memzoi-lsp Python distribution): diagnostics, provenance
--- hovers, code actions and lifecycle commands for Memzoi records and proposal packets.
---
--- Attaches only to files inside a `.memzoi/` directory (records, packets and `.memzoi/config.toml`), to materialization candidate / plan / decision JSON
--- (recognised by their `schema`) in a project that has one, to session-end files and import manifests (YAML,
--- recognised by their top-level keys) in such a project, and to Zuno's resident memory files (`.zuno/RULES.md`
--- and the global `MEMORY.md`); the root is the directory holding `.memzoi/` (or `.zuno/`).
--- A global `:Memzoi {subcommand}` command (with completion) works from any buffer; code actions that need a
--- reason ask for it with `vim.ui.input`, and a change that has a preview shows it first (one diff tab, then
--- Apply or Cancel; `require('memzoi').setup{ confirm_writes = false }` writes at once). See editors/nvim/README.md.
---
--- Override the program with `vim.lsp.config('memzoi', { cmd = { '/path/to/.venv/bin/memzoi-lsp' } })`
--- and server settings with `settings = { memzoi = { severity = { duplicate_content = 'information' } } }`.

local memzoi = require('memzoi')
memzoi.setup()

---@type vim.lsp.Config
return {
  cmd = { 'memzoi-lsp' },
  filetypes = { 'markdown', 'json', 'yaml', 'toml' },
  root_dir = function(bufnr, on_dir)
    local name = vim.api.nvim_buf_get_name(bufnr)
    local root = memzoi.root_of(name) or memzoi.resident_root(name) or memzoi.artifact_root(bufnr)
      or memzoi.routing_root(bufnr)
    if root then
      on_dir(root)
    end
  end,
  settings = { memzoi = vim.empty_dict() },
  -- Client-side handlers of the commands code actions and lenses run: they prompt for reasons and send every
  -- change that has a preview through the review flow (ask once, diff, then Apply or Cancel).
  commands = memzoi.client_commands(),
  -- memzoi/changed reloads the buffers of the files a change wrote (hidden ones too) and clears the diagnostics
  -- of deleted ones; memzoi/inboxChanged refreshes the inbox or resident quickfix list; workspace/diagnostic/refresh
  -- (advertised below: Neovim 0.11 has none of its own) pulls the open buffers' diagnostics again.
  handlers = require('memzoi.sync').handlers(),
  -- Hovers as plain text: Neovim's Markdown view shows backslash escapes literally (`https\://`), and the server
  -- writes plain text for a client that prefers it.
  -- Blocked code actions as disabled ones with their reason: lua/memzoi lists each as `Title (blocked: reason)`.
  capabilities = {
    workspace = { diagnostics = { refreshSupport = true } },
    textDocument = {
      hover = { contentFormat = { 'plaintext', 'markdown' } },
      codeAction = { disabledSupport = true },
    },
  },
}
