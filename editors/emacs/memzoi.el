;;; memzoi.el --- Memzoi records and proposals with eglot and memzoi-lsp  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Recommended: markdown-mode
;; Keywords: tools, languages
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Markdown files inside a `.memzoi/' directory and Zuno's resident memory files (a project's `.zuno/RULES.md',
;; the global `$ZUNO_CONFIG_DIR/memory/MEMORY.md') open in `memzoi-mode' (derived from `markdown-mode' when it is
;; installed, else `text-mode'), which eglot serves with memzoi-lsp.  Other Markdown files are untouched.
;; Recommended: the `markdown-mode' package (highlighting, and Markdown hovers).  Without it eglot asks for
;; plaintext hovers, which the server then sends.
;; Commands: `memzoi-apply', `memzoi-reject', `memzoi-route-local', `memzoi-supersede', `memzoi-tombstone',
;; `memzoi-reattest', `memzoi-preview', `memzoi-undo', `memzoi-history', `memzoi-check-workspace', `memzoi-search'.
;; Those that record a reason (reject, supersede, tombstone) ask for one in the minibuffer, also when they are
;; picked from `eglot-code-actions'; supersede then asks for the replacement's title (it needs an id of its own).
;; A change that has a preview (apply, supersede, tombstone, re-attest, materialize, resident approve) goes
;; through one review flow when `memzoi-confirm-writes' is on (the default): its reason and title are asked once,
;; every file it would write is shown as a diff in `*Memzoi preview*', then Apply or Cancel.  After any change
;; the server wrote, its `memzoi/changed' notification reverts the buffers of the touched files and clears the
;; diagnostics of deleted ones.
;; `memzoi-history' and `memzoi-undo' complete over the ledger's changes.
;; Session checkpoints and memory health: `memzoi-checkpoints', `memzoi-checkpoint-continue',
;; `memzoi-checkpoint-close', `memzoi-memory-health' (memzoi-checkpoints.el).
;;
;; Setup (see README.md):
;;   (add-to-list 'load-path "/path/to/memzoi-lsp/editors/emacs")
;;   (require 'memzoi)
;;   (setq memzoi-server-command '("/path/to/memzoi-lsp/.venv/bin/memzoi-lsp"))  ; when not on PATH

;;; Code:

(require 'cl-lib)
(require 'conf-mode)
(require 'diff-mode)
(require 'eglot)
(require 'seq)
(require 'subr-x)

(defgroup memzoi nil
  "Memzoi repository memory in Emacs."
  :group 'tools
  :prefix "memzoi-")

(defcustom memzoi-server-command '("memzoi-lsp")
  "Program and arguments that start the Memzoi language server."
  :type '(repeat string))

(defcustom memzoi-confirm-writes t
  "Non-nil: a change that has a preview is shown as a diff first and written only after Apply.
This holds for code actions (`eglot-code-actions'), lenses and the `memzoi-' commands alike."
  :type 'boolean)

(defcustom memzoi-settings '()
  "Server settings (the `memzoi' section), as a plist.
Example: \\='(:severity (:duplicate_content \"information\") :disabled [\"bom\"] :debounceMs 200)."
  :type 'plist)

(defalias 'memzoi--parent-mode
  (if (require 'markdown-mode nil t) #'markdown-mode #'text-mode)
  "The mode `memzoi-mode' derives from: `markdown-mode' when installed.")

;;;###autoload
(define-derived-mode memzoi-mode memzoi--parent-mode "Memzoi"
  "Major mode for Memzoi records and proposal packets (Markdown with YAML frontmatter)."
  (setq-local eglot-workspace-configuration
              (list :memzoi (or memzoi-settings (make-hash-table)))))

;;;###autoload
(add-to-list 'auto-mode-alist '("/\\.memzoi/.*\\.md\\'" . memzoi-mode))

;;;###autoload
(define-derived-mode memzoi-config-mode conf-toml-mode "Memzoi-Config"
  "Major mode for a Memzoi project's `.memzoi/config.toml': TOML, with the server's `invalid_config' and credential
findings (the ones `memzoi check .memzoi/config.toml' reports)."
  (setq-local eglot-workspace-configuration
              (list :memzoi (or memzoi-settings (make-hash-table)))))

;;;###autoload
(add-to-list 'auto-mode-alist '("/\\.memzoi/config\\.toml\\'" . memzoi-config-mode))

(defun memzoi--global-resident ()
  "Zuno's global resident memory file: $ZUNO_CONFIG_DIR/memory/MEMORY.md, else ~/.config/zuno/memory/MEMORY.md."
  (let ((base (getenv "ZUNO_CONFIG_DIR")))
    (expand-file-name "memory/MEMORY.md"
                      (if (and base (not (string-empty-p base))) base (expand-file-name "~/.config/zuno")))))

(defun memzoi-resident-file-p (&optional file)
  "Non-nil when FILE (default: this buffer's file) is a resident memory file Zuno reads: a project's
`.zuno/RULES.md' or the global MEMORY.md (zuno_paths: PROJECT_CONFIG_DIRECTORY, config()/memory)."
  (when-let ((f (or file buffer-file-name)))
    (let ((f (expand-file-name f)))
      (or (string-match-p "/\\.zuno/RULES\\.md\\'" f)
          (string= f (memzoi--global-resident))))))

;; Resident memory files: Zuno's project file by name; the global one by its path (it moves with ZUNO_CONFIG_DIR,
;; so it is recognised when visited rather than by a fixed pattern).
;;;###autoload
(add-to-list 'auto-mode-alist '("/\\.zuno/RULES\\.md\\'" . memzoi-mode))

(defun memzoi--maybe-resident-mode ()
  "Put the global resident memory file in `memzoi-mode' when it is visited."
  (when (and buffer-file-name (not (derived-mode-p 'memzoi-mode)) (memzoi-resident-file-p))
    (memzoi-mode)))

(add-hook 'find-file-hook #'memzoi--maybe-resident-mode)

(defclass memzoi-eglot-server (eglot-lsp-server) ()
  :documentation "The eglot connection to memzoi-lsp (adds window/showDocument for older eglot).")

(cl-defmethod eglot-handle-request
  ((_server memzoi-eglot-server) (_method (eql window/showDocument)) &key uri takeFocus &allow-other-keys)
  "Open URI, which the server shows after a lifecycle change (e.g. the resolved packet)."
  ;; eglot before 1.10 answers unknown requests with a null result, which is not a valid ShowDocumentResult.
  (let* ((file (eglot--uri-to-path uri))
         (buf (and (file-exists-p file) (find-file-noselect file))))
    (when (and buf takeFocus (not noninteractive))
      (pop-to-buffer buf))
    (list :success (if buf t :json-false))))

(defun memzoi--server-program (&rest _)
  "The server class and command, with the settings as initializationOptions."
  (cons 'memzoi-eglot-server
        (append memzoi-server-command
                (list :initializationOptions (list :memzoi (or memzoi-settings (make-hash-table)))))))

(add-to-list 'eglot-server-programs
             (cons '(memzoi-mode memzoi-routing-mode memzoi-config-mode) #'memzoi--server-program))

;; Routing inputs: an agent's session-end file ({task, candidates}) or an import manifest (version: memzoi/import),
;; YAML files anywhere in a project that has a `.memzoi' directory.  They get the server's diagnostics and
;; `memzoi-route' (preview per candidate, then Apply).

(defun memzoi-routing-input-p (&optional file)
  "Non-nil when FILE (default: this buffer's file, whose text is read) is a session-end file or an import
manifest of a Memzoi project: a .yml/.yaml file whose top level is `version: memzoi/import', or has `task' and
`candidates' (the server's rule), below a directory holding `.memzoi'."
  (when-let ((f (or file buffer-file-name)))
    (and (string-match-p "\\.ya?ml\\'" f)
         (locate-dominating-file f ".memzoi")
         (save-excursion
           (save-restriction
             (widen)
             (goto-char (point-min))
             (or (re-search-forward "^version:[ \t]*[\"']?memzoi/import" nil t)
                 (and (progn (goto-char (point-min)) (re-search-forward "^task[ \t]*:" nil t))
                      (progn (goto-char (point-min)) (re-search-forward "^candidates[ \t]*:" nil t)))))))))

;;;###autoload
(define-derived-mode memzoi-routing-mode text-mode "Memzoi-Routing"
  "Major mode for Memzoi session-end files and import manifests (YAML), checked and routed by memzoi-lsp."
  (setq-local eglot-workspace-configuration
              (list :memzoi (or memzoi-settings (make-hash-table)))))

(defun memzoi--maybe-routing-mode ()
  "Put a session-end file or import manifest of a Memzoi project in `memzoi-routing-mode' when it is visited."
  (when (and buffer-file-name (not (derived-mode-p 'memzoi-mode 'memzoi-routing-mode)) (memzoi-routing-input-p))
    (memzoi-routing-mode)))

(add-hook 'find-file-hook #'memzoi--maybe-routing-mode)

(defun memzoi-root (&optional file)
  "The directory holding the `.memzoi' tree that contains FILE (default: this buffer's file), or nil."
  (when-let* ((f (or file buffer-file-name))
              (dir (locate-dominating-file f ".memzoi")))
    (and (string-match-p "/\\.memzoi/" (expand-file-name f))
         (expand-file-name dir))))

(defvar-local memzoi--global-project nil
  "In the global resident file's buffer: the project it was first used from (`memzoi--session-project'), kept so
the buffer's project, and so its server, stays the same.")

(defun memzoi--session-project (dir)
  "The project the global resident file is used from, by the command line's rule (the global MEMORY.md from inside
a project): the project holding DIR's `.memzoi' if any, else the project of the most recent other buffer visiting
a file in one (the project this Emacs works in), else that of the folder Emacs was started in; nil outside
every project (Zuno's config folder is never made one, newuser5 D4).  Kept in the buffer, found or not."
  (unless memzoi--global-project
    (setq memzoi--global-project
          (let ((found (lambda (d) (and d (not (file-remote-p d)) (locate-dominating-file d ".memzoi")))))
            (or (funcall found dir)
                (seq-some (lambda (b) (and (not (eq b (current-buffer))) (buffer-file-name b)
                                           (funcall found (buffer-local-value 'default-directory b))))
                          (buffer-list))
                (funcall found command-line-default-directory)
                :none))))
  (and (stringp memzoi--global-project) memzoi--global-project))

(defun memzoi--project-find (dir)
  "Make the directory holding `.memzoi' (or `.zuno', for a resident file) the project root of files under it (for
eglot), from DIR; the global resident file's project is the project it is used from (`memzoi--session-project'),
none outside every project."
  (let ((d (expand-file-name dir)))
    (when-let* ((root (cond ((string-match-p "/\\.memzoi\\(/\\|\\'\\)" d) (locate-dominating-file d ".memzoi"))
                            ;; The root itself, when eglot asks (`eglot-lsp-context'): eglot looks its server up
                            ;; from the project root too (while connecting, `default-directory' is the root), and a
                            ;; (vc . ROOT) answer there missed the (memzoi . ROOT) server, so the buffer that
                            ;; started the connection never got didOpen when `initialize' returned quickly.
                            ((and (bound-and-true-p eglot-lsp-context)
                                  (file-directory-p (expand-file-name ".memzoi" d)))
                             d)
                            ((and buffer-file-name (derived-mode-p 'memzoi-routing-mode))
                             (locate-dominating-file d ".memzoi"))
                            ((string-match-p "/\\.zuno/?\\'" d) (locate-dominating-file d ".zuno"))
                            ((and buffer-file-name (string= (expand-file-name buffer-file-name) (memzoi--global-resident)))
                             (memzoi--session-project d)))))
      (cons 'memzoi (expand-file-name root)))))

(cl-defmethod project-root ((project (head memzoi)))
  "The root of a Memzoi PROJECT: the directory holding `.memzoi'."
  (cdr project))

(add-hook 'project-find-functions #'memzoi--project-find)

;; Connecting.  `eglot-ensure' connects from `post-command-hook', that is after the next command: a file visited
;; while no command follows (the file given on the command line of a batch run or of `emacsclient', a buffer
;; opened by a program) never got `didOpen'.  A timer runs as soon as Emacs waits, with or without a command, and
;; the connection of a project is started once (eglot 1.9 registers a server only when `initialize' returns, so a
;; second buffer of the project opened meanwhile must not start a second server).

(defcustom memzoi-connect-timeout 120
  "Seconds eglot waits for memzoi-lsp's answer to `initialize' (eglot's default, 30, is short for a large
workspace on a loaded machine)."
  :type 'integer)

(defvar memzoi--connecting nil
  "Project roots whose connection was started, with the time it was (an alist of (ROOT . FLOAT-TIME)); an entry
older than `memzoi-connect-timeout' no longer holds a new connection back.")

(defun memzoi--connect-buffer (buffer)
  "Connect BUFFER (a `memzoi-mode' buffer) to its project's memzoi-lsp unless it is managed or its project's
connection is under way; when that connection completes, eglot manages every buffer of the project."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (unless (or eglot--managed-mode (not buffer-file-name))
        (if (eglot-current-server)
            (eglot--maybe-activate-editing-mode)
          (let ((root (ignore-errors (expand-file-name (project-root (project-current))))))
            (unless (and root (< (- (float-time) (or (cdr (assoc root memzoi--connecting)) 0))
                                 memzoi-connect-timeout))
              (when root
                (setq memzoi--connecting (cons (cons root (float-time)) (assoc-delete-all root memzoi--connecting))))
              (let ((eglot-connect-timeout memzoi-connect-timeout))
                (apply #'eglot--connect (eglot--guess-contact))))))))))

(defun memzoi--connection-started (server)
  "Note that SERVER's connection (started here or by \\[eglot]) is under way for its project's root."
  (when (cl-typep server 'memzoi-eglot-server)
    (when-let ((root (ignore-errors (project-root (eglot--project server)))))
      (setq memzoi--connecting (cons (cons (expand-file-name root) (float-time))
                                     (assoc-delete-all (expand-file-name root) memzoi--connecting))))))

(add-hook 'eglot-server-initialized-hook #'memzoi--connection-started)

(defun memzoi-ensure ()
  "Connect this buffer to memzoi-lsp as soon as Emacs waits (see `memzoi--connect-buffer')."
  (let ((buffer (current-buffer)))
    (run-with-timer 0 nil #'memzoi--connect-buffer buffer)))

;;;###autoload
(add-hook 'memzoi-mode-hook #'memzoi-ensure)
;;;###autoload
(add-hook 'memzoi-routing-mode-hook #'memzoi-ensure)

;;; Commands

(defconst memzoi-commands
  '((apply      :server ("memzoi.apply") :target proposal)
    (reject     :server ("memzoi.reject") :target proposal :reason required)
    (route-local :server ("memzoi.routeLocal") :target proposal)
    (supersede  :server ("memzoi.supersede") :target record :reason required :title optional)
    (tombstone  :server ("memzoi.tombstone") :target record :reason required)
    (reattest   :server ("memzoi.reattest") :target record :reason optional)
    (undo       :server ("memzoi.undo") :target change)
    (history    :server ("memzoi.history") :target file)
    (check-workspace :server ("memzoi.checkWorkspace") :target none)
    (search     :server ("memzoi.search") :target none :query t))
  "Commands: name, server commands (the first one the server offers is used), target, reason, title, query.
Kept in step with vscode-extension/src/logic/commands.ts.")

(defconst memzoi-preview-buffer "*Memzoi preview*"
  "The read-only buffer where previews show the planned files.")

(defvar memzoi-last-result nil
  "The result of the last Memzoi command (for inspection and tests).")

(defun memzoi--server ()
  "The eglot server of this buffer, or a user error."
  (or (eglot-current-server)
      (user-error "Memzoi: no language server in this buffer (is it under .memzoi/ and memzoi-lsp installed?)")))

(defun memzoi--resolve (server names)
  "The first of NAMES that SERVER advertises in executeCommandProvider, or nil."
  (let* ((caps (eglot--capabilities server))
         (provider (plist-get caps :executeCommandProvider))
         (advertised (append (plist-get provider :commands) nil)))
    (seq-find (lambda (n) (member n advertised)) names)))

(defconst memzoi--past
  '(("apply" . "Applied") ("reject" . "Rejected") ("supersede" . "Proposed supersede")
    ("tombstone" . "Proposed tombstone") ("reattest" . "Re-attested") ("route_local" . "Routed to local memory")
    ("materialize" . "Materialized") ("undo" . "Undid change") ("recover" . "Recovered"))
  "What a change result's operation did, as the first words of its message.")

(defun memzoi--describe (result)
  "One sentence saying what RESULT (a command's answer) did, and to what.
The server's `:message' when it sends one; else built from the change (operation, main file) or the resident
candidate (decision, id); the change id and details stay in `memzoi-last-result'."
  (cond ((and (listp result) (stringp (plist-get result :message)) (not (string-empty-p (plist-get result :message))))
         (car (split-string (plist-get result :message) "\n")))
        ((and (listp result) (plist-get result :change_id))
         (let* ((files (append (plist-get result :files) nil))
                (main (or (seq-find (lambda (f) (not (equal (plist-get f :after) "absent"))) files) (car files)))
                (path (replace-regexp-in-string "\\`\\.memzoi/" "" (or (plist-get main :path) "")))
                (op (plist-get result :operation)))
           (format "%s %s" (if (equal (plist-get result :status) "undone") (format "Undid %s:" op)
                             (concat (or (cdr (assoc op memzoi--past)) op) ":"))
                   path)))
        ((and (listp result) (plist-get result :target_path) (plist-get result :id))
         (let ((status (plist-get result :status))
               (file (plist-get result :target_path)))
           (format "%s candidate %s -> %s"
                   (pcase status ("applied" "Approved") ("rejected" "Rejected") ("undone" "Undid")
                          (_ (format "Candidate is %s:" status)))
                   (substring (plist-get result :id) 0 (min 16 (length (plist-get result :id))))
                   (concat (file-name-nondirectory (directory-file-name (file-name-directory file))) "/"
                           (file-name-nondirectory file)))))
        ((and (listp result) (plist-get result :error))
         (format "refused: %s" (plist-get result :error)))
        ((vectorp result) (format "%d result(s)" (length result)))
        (t "Done")))

(defun memzoi--label (command)
  "A human name for the server COMMAND (a string): \"apply\", \"resident approve\", ..."
  (let ((spec (memzoi--spec-of command)))
    (cond (spec (replace-regexp-in-string "-" " " (symbol-name (car spec))))
          ((string-prefix-p "memzoi.resident." command) (concat "resident " (substring command 16)))
          (t (replace-regexp-in-string "\\." " " (replace-regexp-in-string "\\`memzoi\\." "" command))))))

(defun memzoi--error-code (err)
  "The server's reason code (a string, e.g. \"preview_stale\") of the JSON-RPC error ERR, or nil."
  (let ((data (alist-get 'jsonrpc-error-data (cdr-safe err))))
    (and (listp data) (plist-get data :code))))

(defun memzoi--error-message (err)
  "The first line of the server's message of the JSON-RPC error ERR (a refusal: one piece of advice)."
  (let ((msg (alist-get 'jsonrpc-error-message (cdr-safe err))))
    (if msg (car (split-string msg "\n")) "the server refused (see the events buffer)")))

;;; Nothing stale after a write

(defvar memzoi-inbox-changed-hook nil
  "Run when the server says the pending proposals or resident candidates changed (`memzoi/inboxChanged').")

(defun memzoi--changed (touched)
  "Bring the buffers of TOUCHED (a sequence of (:uri URI :deleted BOOL)) in line with the disk.
A buffer of a deleted file loses its diagnostics; the buffer of a rewritten or created file is reverted unless it
has unsaved changes (its visible or buried state does not matter; `revert-buffer' also reads a file created after
its buffer was opened); one with unsaved changes is kept and the user told.  Returns the reverted buffers."
  (let ((reverted nil) (kept nil))
    (seq-doseq (tch touched)
      (let* ((uri (plist-get tch :uri))
             (file (and (stringp uri) (eglot--uri-to-path uri)))
             (buf (and file (find-buffer-visiting file))))
        (when buf
          (if (or (eq (plist-get tch :deleted) t) (not (file-exists-p file)))
              ;; eglot's own handler with no diagnostics clears flymake's list for the buffer
              (eglot-handle-notification (with-current-buffer buf (eglot-current-server))
                                         'textDocument/publishDiagnostics :uri uri :diagnostics [])
            (with-current-buffer buf
              (if (buffer-modified-p)
                  (push (buffer-name buf) kept)
                (revert-buffer t t t)
                (push buf reverted)))))))
    (when kept
      (message "Memzoi: your edits kept; file changed on disk: %s" (string-join (nreverse kept) ", ")))
    reverted))

(cl-defmethod eglot-handle-notification
  ((_server memzoi-eglot-server) (_method (eql memzoi/changed)) &key touched &allow-other-keys)
  "After a change the server wrote: revert the buffers of its TOUCHED files, clear those of deleted ones."
  (memzoi--changed touched))

(cl-defmethod eglot-handle-notification
  ((_server memzoi-eglot-server) (_method (eql memzoi/inboxChanged)) &rest _)
  "Pending proposals or resident candidates changed somewhere: run `memzoi-inbox-changed-hook'."
  (run-hooks 'memzoi-inbox-changed-hook))

(defun memzoi--reload-result (result)
  "Revert the buffers of the files of RESULT (a change: `:files' with paths relative to the project root; a
resident candidate: its `:target_path'), for a server that does not send `memzoi/changed'."
  (when-let ((target (and (listp result) (plist-get result :target_path))))
    (when (stringp target)
      (memzoi--changed (vector (list :uri (eglot--path-to-uri target) :deleted :json-false)))))
  (when-let* ((files (and (listp result) (plist-get result :files)))
              (root (ignore-errors (project-root (eglot--project (eglot-current-server))))))
    (memzoi--changed
     (mapcar (lambda (f) (list :uri (eglot--path-to-uri (expand-file-name (plist-get f :path) root))
                               :deleted (if (equal (plist-get f :after) "absent") t :json-false)))
             (seq-filter (lambda (f) (stringp (plist-get f :path))) (append files nil))))))

(defvar memzoi--reviewing nil
  "Non-nil while the review flow asks for its preview.")

(defun memzoi--execute (server command arguments &optional name)
  "Send COMMAND with ARGUMENTS to SERVER; report the result or the refusal once, as a sentence.
Returns the result, or nil after a refusal (a JSON-RPC error response).  NAME labels the refusal."
  (let ((name (or name (memzoi--label command))))
    (condition-case err
        (let ((result (jsonrpc-request server :workspace/executeCommand
                                       (list :command command :arguments arguments))))
          (setq memzoi-last-result result)
          (if (equal command "memzoi.preview")
              (progn (memzoi--show-preview result)
                     (unless memzoi--reviewing ; the review flow's question follows at once
                       (message "Memzoi: preview of %d file(s) in %s; nothing written"
                                (length (plist-get result :files)) memzoi-preview-buffer)))
            (message "Memzoi: %s" (memzoi--describe result))
            (memzoi--reload-result result))
          result)
      (jsonrpc-error
       (setq memzoi-last-result (list :error (memzoi--error-message err) :code (memzoi--error-code err)))
       (message "Memzoi: %s refused: %s" name (memzoi--error-message err))
       nil))))

;;; Previews

(defun memzoi--file-diff (file)
  "A unified diff (a string) of FILE, one entry of a preview: its :path, :before and :after text (nil = absent)."
  (let* ((path (plist-get file :path))
         (before (plist-get file :before))
         (after (plist-get file :after))
         (old (make-temp-file "memzoi-before"))
         (new (make-temp-file "memzoi-after")))
    (unwind-protect
        (progn
          (let ((coding-system-for-write 'utf-8-unix))
            (write-region (or before "") nil old nil 'silent)
            (write-region (or after "") nil new nil 'silent))
          (with-temp-buffer
            (let ((coding-system-for-read 'utf-8))
              (call-process diff-command nil t nil "-u"
                            "--label" (if before (concat "a/" path) "/dev/null")
                            "--label" (if after (concat "b/" path) "/dev/null")
                            old new))
            (buffer-string)))
      (delete-file old)
      (delete-file new))))

(defun memzoi--show-preview (result)
  "Show RESULT (a `memzoi.preview' answer) as a diff in the read-only `memzoi-preview-buffer'; return the buffer."
  (let ((buf (get-buffer-create memzoi-preview-buffer)))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "# Preview of %s: %s (nothing is written)\n"
                        (plist-get result :operation) (or (plist-get result :summary) "")))
        (dolist (f (append (plist-get result :files) nil))
          (insert (memzoi--file-diff f)))
        (diff-mode)
        (setq buffer-read-only t)
        (goto-char (point-min))))
    (unless noninteractive (display-buffer buf))
    buf))

(defun memzoi--spec-of (command)
  "The entry of `memzoi-commands' whose server command is COMMAND (a string), or nil."
  (seq-find (lambda (entry) (member command (plist-get (cdr entry) :server))) memzoi-commands))

(defun memzoi--read-reason (required)
  "Read a reason in the minibuffer; REQUIRED refuses an empty one (a `user-error')."
  (let ((r (string-trim (read-string (if required "Reason (required): " "Reason (optional): ")))))
    (when (and required (string-empty-p r))
      (user-error "Memzoi: a reason is required; it is recorded with the change"))
    (unless (string-empty-p r) r)))

(defun memzoi--read-title ()
  "Read a new title in the minibuffer; nil when empty: the server then uses the record's title, and refuses
\(`record_exists') when that title gives the record's own id, as for every record made by applying a proposal."
  (let ((title (string-trim (read-string "New title (say what changed: the replacement needs an id of its own): "))))
    (unless (string-empty-p title) title)))

;;; Review: preview, then write, as one flow

(defconst memzoi--previewable
  '(("memzoi.apply" "apply" "Apply" nil nil)
    ("memzoi.supersede" "supersede" "Supersede" required t)
    ("memzoi.tombstone" "tombstone" "Tombstone" required nil)
    ("memzoi.reattest" "reattest" "Re-attest" optional nil)
    ("memzoi.materialize" "materialize" "Materialize" nil nil)
    ("memzoi.resident.approve" "approve" "Approve" nil nil)
    ("memzoi.resident.edit" "approve" "Approve edited" nil nil)
    ("memzoi.resident.remove" "remove_entry" "Remove" nil nil))
  "Changes that have a preview: server command, preview operation, label, reason (required, optional or nil), and
whether a new title is asked.")

(defun memzoi--ask (arg reason title)
  "A copy of the plist ARG with what the change needs and ARG lacks, asked once: the REASON (`required' or
`optional') and, when TITLE, a new title (`memzoi--read-title')."
  (let ((arg (copy-sequence arg)))
    (when (and reason (not (plist-member arg :reason)))
      (let ((r (memzoi--read-reason (eq reason 'required))))
        (setq arg (plist-put arg :reason r))))
    (when (and title (not (plist-member arg :title)))
      (setq arg (plist-put arg :title (memzoi--read-title))))
    ;; an optional answer left empty is not sent
    (let (out)
      (while arg
        (unless (and (memq (car arg) '(:reason :title)) (null (cadr arg)))
          (setq out (append out (list (car arg) (cadr arg)))))
        (setq arg (cddr arg)))
      out)))

(defun memzoi--question (label preview)
  "The Apply question of a PREVIEW: LABEL, its target named (title and path) or the server's summary, the files."
  (let* ((n (length (plist-get preview :files)))
         (target (plist-get preview :target))
         (title (and target (stringp (plist-get target :title)) (plist-get target :title)))
         (what (cond (title (format "\"%s\" (%s)" title (plist-get target :path)))
                     (target (plist-get target :path))
                     (t (or (plist-get preview :summary) "")))))
    (format "%s: %s, %d file%s.  Apply? " label what n (if (= n 1) "" "s"))))

(defun memzoi--review (server command arg)
  "Preview, then write: ask what COMMAND needs once, show its preview as a diff, then Apply or Cancel.
ARG is the plist argument of COMMAND (a key of `memzoi--previewable'); Apply sends exactly it with the preview's
fingerprint (:previewed), so the server acts on exactly what the diff showed or refuses (preview_stale) when a file
changed meanwhile: the refusal is shown and a new preview offered.  Returns the command's result, or nil when
cancelled or refused."
  (pcase-let* ((`(,_ ,op ,label ,reason ,title) (assoc command memzoi--previewable))
               (arg (memzoi--ask arg reason title))
               (parg (list :uri (plist-get arg :uri) :operation op)))
    (dolist (k '(:reason :title :body :content :scope :locator))
      (when (plist-get arg k) (setq parg (plist-put parg k (plist-get arg k)))))
    (when (plist-get arg :candidate_id)
      (setq parg (plist-put parg :candidateId (plist-get arg :candidate_id))))
    (let ((preview (let ((memzoi--reviewing t))
                     (memzoi--execute server "memzoi.preview" (vector parg) (concat label " preview")))))
      (when preview
        (if (y-or-n-p (memzoi--question label preview))
            (let* ((previewed (plist-get preview :previewed))
                   (sent (if (stringp previewed) (plist-put (copy-sequence arg) :previewed previewed) arg))
                   (result (memzoi--execute server command (vector sent) (downcase label))))
              (if (and (null result) (equal (plist-get memzoi-last-result :code) "preview_stale")
                       (y-or-n-p (format "Memzoi: %s.  Preview again? " (plist-get memzoi-last-result :error))))
                  (memzoi--review server command arg)
                result))
          (message "Memzoi: %s cancelled; nothing written" label)
          nil)))))

(defun memzoi--plist-without (plist key)
  "PLIST without KEY."
  (let (out)
    (while plist
      (unless (eq (car plist) key) (setq out (append out (list (car plist) (cadr plist)))))
      (setq plist (cddr plist)))
    out))

(defun memzoi--dispatch (server name arguments)
  "Run the server command NAME (a string) with ARGUMENTS (a vector) as a code action, lens or command asks.
`memzoi.review', `memzoi.reviewCandidate' and `memzoi.preview' are the review flow, as is every change that has
a preview while `memzoi-confirm-writes' is on; a resident reject asks its reason; the rest is sent as it is,
after asking a reason the command records."
  (let ((arg (and (> (length arguments) 0) (listp (aref arguments 0)) (aref arguments 0))))
    (cond
     ((equal name "memzoi.routing.preview")
      (memzoi-route))
     ((equal name "memzoi.review")
      (memzoi--review server "memzoi.apply" (list :uri (plist-get arg :uri))))
     ((equal name "memzoi.reviewCandidate")
      (memzoi--review server "memzoi.resident.approve"
                      (list :uri (plist-get arg :uri)
                            :candidate_id (or (plist-get arg :candidateId) (plist-get arg :candidate_id)))))
     ((equal name "memzoi.preview")
      (let ((cmd (car (seq-find (lambda (p) (equal (nth 1 p) (plist-get arg :operation))) memzoi--previewable))))
        (if cmd
            (memzoi--review server cmd (memzoi--plist-without arg :operation))
          (memzoi--execute server name arguments "preview"))))
     ((and memzoi-confirm-writes arg (assoc name memzoi--previewable))
      (memzoi--review server name arg))
     ((equal name "memzoi.resident.reject")
      (memzoi--execute server name (vector (memzoi--ask arg 'required nil)) "reject candidate"))
     (t (memzoi--execute server name (memzoi--with-reason name arguments))))))

(defun memzoi--with-reason (command arguments)
  "ARGUMENTS of COMMAND (from a code action) with what it needs beyond them, asked for when missing: the reason it
requires and, for supersede, an optional new title."
  (let* ((arg (and (> (length arguments) 0) (aref arguments 0)))
         (spec (cdr (memzoi--spec-of command))))
    (if (not (and (listp arg) (or (plist-get spec :reason) (plist-get spec :title))))
        arguments
      (vector (memzoi--ask arg (and (eq (plist-get spec :reason) 'required) 'required) (plist-get spec :title))))))

;; Code actions run server commands through eglot: eglot 1.9 (Debian 12) calls `eglot-execute-command'; eglot 1.15
;; and later call `eglot-execute' with the whole action.
(cl-defmethod eglot-execute-command ((server memzoi-eglot-server) command arguments)
  "Run the Memzoi COMMAND (a symbol) with ARGUMENTS on SERVER (`memzoi--dispatch')."
  (memzoi--dispatch server (format "%s" command) arguments))

(when (fboundp 'eglot-execute)
  (cl-defmethod eglot-execute ((server memzoi-eglot-server) action)
    "Run ACTION (a Command or a CodeAction) on SERVER (`memzoi--dispatch')."
    (let* ((edit (plist-get action :edit))
           (cmd (if (stringp (plist-get action :command)) action (plist-get action :command))))
      (when edit (eglot--apply-workspace-edit edit))
      (when cmd
        (memzoi--dispatch server (plist-get cmd :command) (or (plist-get cmd :arguments) []))))))

(defun memzoi--action-command (action)
  "The command name (a string) ACTION (a CodeAction or a Command) runs, or nil."
  (let ((c (plist-get action :command)))
    (if (stringp c) c (plist-get c :command))))

(defconst memzoi--safe-commands '("memzoi.review" "memzoi.reviewCandidate" "memzoi.preview")
  "Code actions that write nothing by themselves: offered first, the first of them as the default.")

(defun memzoi--review-first (args)
  "The arguments (ACTIONS SERVER . REST) of eglot's code-action menu with Memzoi's safe actions first and the
first of them the only preferred one (the menu's default, RET)."
  (let ((actions (car args)) (server (cadr args)))
    (if (not (cl-typep server 'memzoi-eglot-server))
        args
      (let* ((safe (seq-filter (lambda (a) (member (memzoi--action-command a) memzoi--safe-commands)) actions))
             (rest (seq-remove (lambda (a) (member (memzoi--action-command a) memzoi--safe-commands)) actions)))
        (if (null safe)
            args
          (cons (mapcar (lambda (a)
                          (append (list :isPreferred (if (eq a (car safe)) t :json-false))
                                  (memzoi--plist-without a :isPreferred)))
                        (append safe rest))
                (cdr args)))))))

(when (fboundp 'eglot--read-execute-code-action)
  (advice-add 'eglot--read-execute-code-action :filter-args #'memzoi--review-first))

(defun memzoi--changes (server)
  "The ledger's changes (newest first) as (LABEL . CHANGE) pairs for `completing-read'."
  (mapcar (lambda (c)
            (cons (format "%s  %s %s by %s%s  [%s]"
                          (or (plist-get c :applied_at) (plist-get c :created_at) "")
                          (plist-get c :operation) (plist-get c :status) (plist-get c :actor)
                          ;; the server's word: the ledger would undo it now (applied, files unchanged since)
                          (if (eq (plist-get c :undo_available) t) " (undo available)" "")
                          (plist-get c :change_id))
                  c))
          (append (jsonrpc-request server :workspace/executeCommand
                                   (list :command "memzoi.history" :arguments (vector (make-hash-table))))
                  nil)))

(defun memzoi-read-change (&optional prompt)
  "Choose a change of the ledger with `completing-read'; return its id."
  (let* ((changes (or (memzoi--changes (memzoi--server))
                      (user-error "Memzoi: the ledger has no changes yet")))
         (label (completing-read (or prompt "Change: ") changes nil t)))
    (plist-get (cdr (assoc label changes)) :change_id)))

(defun memzoi--read-proposal (server)
  "Choose a pending proposal (title, id, ready or blocked) from SERVER's listing; return its file name.
A command started outside a pending proposal asks which one, and never guesses."
  (let* ((rows (append (plist-get (jsonrpc-request server :workspace/executeCommand
                                                   (list :command "memzoi.proposals.list"
                                                         :arguments (vector (make-hash-table))))
                                  :proposals)
                       nil))
         (choices (or (mapcar (lambda (p)
                                (cons (format "%s (%s, %s)" (or (plist-get p :title) (plist-get p :id))
                                              (plist-get p :id) (if (eq (plist-get p :can_apply) t) "ready" "blocked"))
                                      p))
                              rows)
                      (user-error "Memzoi: no pending proposal")))
         (label (completing-read "Pending proposal: " choices nil t)))
    (eglot--uri-to-path (plist-get (cdr (assoc label choices)) :uri))))

(defun memzoi--confirm-undo (server change-id)
  "Ask before undoing CHANGE-ID, naming its operation, the files it restores and when it was made."
  (let* ((change (cdr (cl-find-if (lambda (c) (string-prefix-p change-id (plist-get (cdr c) :change_id)))
                                (memzoi--changes server))))
         (files (mapconcat (lambda (f) (string-remove-prefix ".memzoi/" (plist-get f :path)))
                           (and change (plist-get change :files)) ", ")))
    (unless (y-or-n-p (if change
                          (format "Undo %s of %s (%s)? " (plist-get change :operation) files
                                  (or (plist-get change :applied_at) (plist-get change :created_at) "?"))
                        (format "Undo change %s? " change-id)))
      (user-error "Memzoi: nothing undone"))))

(defun memzoi-run (name &optional reason query change-id)
  "Run the Memzoi command NAME (a key of `memzoi-commands') on this buffer.
REASON, QUERY and CHANGE-ID are asked for when the command needs them and they are nil."
  (let* ((spec (or (cdr (assq name memzoi-commands)) (error "Unknown Memzoi command %s" name)))
         (server (memzoi--server))
         (command (or (memzoi--resolve server (plist-get spec :server))
                      (user-error "Memzoi: this memzoi-lsp does not offer %s; update memzoi-lsp" name)))
         (target (plist-get spec :target))
         (arg nil))
    (let ((file (if (and (eq target 'proposal)
                         (not (and buffer-file-name
                                   (string-match-p "/\\.memzoi/proposals/pending/[^/]+\\.md\\'" buffer-file-name))))
                    (memzoi--read-proposal server) ; no target given: ask which one
                  buffer-file-name)))
      (when (and (memq target '(proposal record)) file (get-file-buffer file)
                 (buffer-modified-p (get-file-buffer file)))
        ;; Lifecycle commands are disk transactions: the server refuses files with unsaved changes.
        (user-error "Memzoi: save the buffer first; lifecycle commands work on the file on disk"))
      (when (memq target '(proposal record))
        (setq arg (plist-put arg :uri (eglot--path-to-uri file)))))
    (when (eq target 'change)
      (setq arg (plist-put arg :change_id (or change-id (memzoi-read-change "Undo change: "))))
      (when (and memzoi-confirm-writes (eq name 'undo))
        (memzoi--confirm-undo server (plist-get arg :change_id))))
    (if (and memzoi-confirm-writes (assoc command memzoi--previewable))
        ;; preview, then write: the review flow asks what is still missing, once
        (memzoi--review server command
                        (if (and reason (not (string-empty-p (string-trim reason))))
                            (plist-put arg :reason (string-trim reason))
                          arg))
      (memzoi--run-now server command spec name arg reason query))))

(defun memzoi--run-now (server command spec name arg reason query)
  "Send COMMAND (of SPEC, named NAME) to SERVER with ARG after asking the REASON, title or QUERY it still needs."
  (progn
    (pcase (plist-get spec :reason)
      ('required
       (setq arg (plist-put arg :reason (or (and reason (not (string-empty-p (string-trim reason))) (string-trim reason))
                                            (memzoi--read-reason t)))))
      ('optional
       (let ((r (if reason (string-trim reason) (memzoi--read-reason nil))))
         (when (and r (not (string-empty-p r))) (setq arg (plist-put arg :reason r))))))
    (when (plist-get spec :title)
      (let ((title (memzoi--read-title)))
        (when title (setq arg (plist-put arg :title title)))))
    (memzoi--execute server command
                     (if (plist-get spec :query)
                         (vector (or query (read-string "Search records: ")))
                       (vector (or arg (make-hash-table))))
                     (symbol-name name))))

(defun memzoi-apply () "Apply the pending proposal in this buffer." (interactive) (memzoi-run 'apply))
(defun memzoi-reject (reason) "Reject the pending proposal in this buffer, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'reject reason))
(defun memzoi-route-local () "Route the proposal in this buffer to local memory." (interactive) (memzoi-run 'route-local))
(defun memzoi-supersede (reason) "Propose superseding this record, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'supersede reason))
(defun memzoi-tombstone (reason) "Propose tombstoning this record, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'tombstone reason))
(defun memzoi-reattest () "Accept a hand edit of this record." (interactive) (memzoi-run 'reattest))
(defun memzoi-preview (operation)
  "Review OPERATION on this buffer's file: its planned files as a diff, then Apply or Cancel.
OPERATION is apply (a pending proposal), supersede, tombstone or reattest (a record); the same questions as
the change itself are asked, once (reason, title)."
  (interactive
   (list (if (and buffer-file-name (string-match-p "/proposals/pending/" buffer-file-name))
             "apply"
           (completing-read "Preview: " '("supersede" "tombstone" "reattest") nil t))))
  (when (buffer-modified-p)
    (user-error "Memzoi: save the buffer first; a preview plans from the file on disk"))
  (memzoi--dispatch (memzoi--server) "memzoi.preview"
                    (vector (list :uri (eglot--path-to-uri buffer-file-name) :operation operation))))
(defalias 'memzoi-review #'memzoi-preview)
(defun memzoi-undo (change-id) "Undo the change CHANGE-ID (chosen from the ledger's changes)."
       (interactive (list (memzoi-read-change "Undo change: "))) (memzoi-run 'undo nil nil change-id))
(defun memzoi-history ()
  "Choose a change of the ledger (time, operation, status, actor, undo availability); offer to undo it."
  (interactive)
  (let* ((server (memzoi--server))
         (changes (or (memzoi--changes server) (user-error "Memzoi: the ledger has no changes yet")))
         (label (completing-read "Memzoi history: " changes nil t))
         (change (cdr (assoc label changes))))
    (setq memzoi-last-result change)
    (when (eq (plist-get change :undo_available) t) ; memzoi-run asks, naming the change
      (memzoi-run 'undo nil nil (plist-get change :change_id)))
    change))
(defun memzoi-check-workspace () "Check every Memzoi file of the project." (interactive) (memzoi-run 'check-workspace))
(defun memzoi-search (query) "Search records for QUERY."
       (interactive (list (read-string "Search records: "))) (memzoi-run 'search nil query))

;;; Routing

(defconst memzoi-routing-buffer "*Memzoi routing*"
  "The read-only buffer where `memzoi-route' shows the outcome per candidate.")

(defun memzoi--routing-lines (preview)
  "One line per candidate of PREVIEW (the server's `memzoi.routing.preview' answer): index, destination, outcome
and the packet path or runtime route it would create, or the codes that block it."
  (mapcar (lambda (c)
            (format "[%s] %-12s %-15s %s" (plist-get c :index) (plist-get c :destination) (plist-get c :outcome)
                    (cond ((plist-get c :reasons) (mapconcat #'identity (plist-get c :reasons) ", "))
                          ((plist-get c :matches)
                           (mapconcat (lambda (m) (format "%s %s" (plist-get m :kind) (plist-get m :id)))
                                      (plist-get c :matches) ", "))
                          (t (or (plist-get c :path) (plist-get c :route) "")))))
          (append (plist-get preview :candidates) nil)))

(defun memzoi-route ()
  "Preview the routing of this session-end file or import manifest (per candidate: the packet or runtime row it
would create, or why it is blocked) in `memzoi-routing-buffer', then, on confirmation, apply it as one ledgered
change with the preview's fingerprint (:previewed): refused when the state moved since the preview, and a file
changed since (preview_stale) offers a new preview."
  (interactive)
  (when (buffer-modified-p)
    (user-error "Memzoi: save the buffer first; routing reads the file on disk"))
  (let* ((server (memzoi--server))
         (uri (eglot--path-to-uri buffer-file-name))
         (preview (condition-case err
                      (jsonrpc-request server :workspace/executeCommand
                                       (list :command "memzoi.routing.preview" :arguments (vector (list :uri uri))))
                    (jsonrpc-error (message "Memzoi: routing preview refused: %s" (memzoi--error-message err))
                                   nil))))
    (when preview
      (setq memzoi-last-result preview)
      (let ((lines (memzoi--routing-lines preview)))
        (with-current-buffer (get-buffer-create memzoi-routing-buffer)
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert (mapconcat #'identity lines "\n") "\n"))
          (special-mode))
        (display-buffer memzoi-routing-buffer)
        (if (not (y-or-n-p (format "Memzoi: apply the routing of %d candidate(s)%s? " (length lines)
                                   (if (eq (plist-get preview :blocked) t) " (some are blocked)" ""))))
            (message "Memzoi: routing cancelled; nothing written")
          (condition-case err
              (let ((result (jsonrpc-request
                             server :workspace/executeCommand
                             (list :command "memzoi.routing.apply"
                                   :arguments (vector (list :uri uri :plan_id (plist-get preview :plan_id)
                                                            :expected_version (plist-get preview :expected_version)
                                                            :previewed (plist-get preview :previewed)
                                                            :actor (plist-get preview :actor)))))))
                (setq memzoi-last-result result)
                (message "Memzoi: routed%s" (if (plist-get result :change_id)
                                                (format " as change %s" (plist-get result :change_id))
                                              ": nothing to write"))
                result)
            (jsonrpc-error
             (setq memzoi-last-result (list :error (memzoi--error-message err) :code (memzoi--error-code err)))
             (if (and (equal (memzoi--error-code err) "preview_stale") ; the file changed since the preview
                      (y-or-n-p (format "Memzoi: %s.  Preview again? " (memzoi--error-message err))))
                 (memzoi-route)
               (message "Memzoi: routing refused: %s" (memzoi--error-message err))
               nil))))))))
;;; Resident memory: the WorkStateProjection, reflection jobs, edit and approve, one-step removal (issue 34)

(defun memzoi--resident-state (server)
  "SERVER's WorkStateProjection of this buffer's project (`memzoi.resident.state')."
  (jsonrpc-request server :workspace/executeCommand
                   (list :command "memzoi.resident.state"
                         :arguments (vector (if (and buffer-file-name (memzoi-resident-file-p))
                                                (list :uri (eglot--path-to-uri buffer-file-name))
                                              (make-hash-table))))))

(defun memzoi--resident-lines (state)
  "The lines of the *Memzoi resident* view of STATE: files with their usage and entries, candidates (each naming
the reflection job that proposed it) and reflection jobs with their outcome."
  (let (lines)
    (dolist (f (append (plist-get state :files) nil))
      (push (format "%s %s %s" (plist-get f :scope) (plist-get f :path) (plist-get f :usage)) lines)
      (dolist (e (append (plist-get f :entries) nil)) (push (format "  § %s" e) lines)))
    (dolist (c (append (plist-get state :memory_candidates) nil))
      (push (format "%s %s %s %s %s: %s%s" (plist-get c :glyph) (plist-get c :status) (plist-get c :id)
                    (plist-get c :scope) (plist-get c :action)
                    (or (plist-get c :content) (plist-get c :locator) "")
                    (if (stringp (plist-get c :job)) (format " (job %s)" (plist-get c :job)) ""))
            lines))
    (dolist (j (append (plist-get state :reflection_jobs) nil))
      (let ((out (plist-get j :outcome)))
        (push (format "reflection %s %s %s message %s%s%s" (plist-get j :status) (plist-get j :id)
                      (plist-get j :trigger) (plist-get j :source_message_id)
                      (if (and out (> (length (plist-get out :candidates)) 0))
                          (concat " candidates: " (mapconcat #'identity (plist-get out :candidates) ", "))
                        "")
                      (if (stringp (plist-get j :error)) (format " (%s)" (plist-get j :error)) ""))
              lines)))
    (nreverse lines)))

(defun memzoi-resident ()
  "Show this project's resident memory in *Memzoi resident*: entries, candidates and reflection jobs."
  (interactive)
  (let* ((state (memzoi--resident-state (memzoi--server)))
         (lines (memzoi--resident-lines state)))
    (setq memzoi-last-result state)
    (with-current-buffer (get-buffer-create "*Memzoi resident*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (mapconcat #'identity lines "\n") "\n"))
      (special-mode))
    (display-buffer "*Memzoi resident*")
    lines))

(defun memzoi-resident-job (job-id)
  "Open the reflection job JOB-ID's request (exactly as sent) and outcome in *Memzoi job JOB-ID*."
  (interactive
   (list (let* ((jobs (append (plist-get (memzoi--resident-state (memzoi--server)) :reflection_jobs) nil))
                (ids (or (mapcar (lambda (j) (plist-get j :id)) jobs)
                         (user-error "Memzoi: no reflection jobs"))))
           (completing-read "Reflection job: " ids nil t))))
  (let* ((detail (memzoi--execute (memzoi--server) "memzoi.resident.job" (vector (list :job_id job-id))
                                  "reflection job"))
         (name (format "*Memzoi job %s*" job-id)))
    (when detail
      (with-current-buffer (get-buffer-create name)
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (or (plist-get detail :text) "")))
        (special-mode))
      (display-buffer name))
    detail))

(defun memzoi-resident-edit (candidate-id content)
  "Approve the resident candidate CANDIDATE-ID with edited CONTENT (both versions are kept), after its preview."
  (interactive
   (let* ((cands (seq-filter (lambda (c) (member (plist-get c :status) '("pending" "failed")))
                             (append (plist-get (memzoi--resident-state (memzoi--server)) :memory_candidates) nil)))
          (id (completing-read "Candidate: " (mapcar (lambda (c) (plist-get c :id)) cands) nil t))
          (cand (seq-find (lambda (c) (equal (plist-get c :id) id)) cands)))
     (list id (read-string "Edited content: " (plist-get cand :content)))))
  (let ((arg (list :candidate_id candidate-id :content content)))
    (when (and buffer-file-name (memzoi-resident-file-p))
      (setq arg (plist-put arg :uri (eglot--path-to-uri buffer-file-name))))
    (if memzoi-confirm-writes
        (memzoi--review (memzoi--server) "memzoi.resident.edit" arg)
      (memzoi--execute (memzoi--server) "memzoi.resident.edit" (vector arg) "approve edited"))))

(defun memzoi-resident-remove (locator)
  "Remove the resident entry LOCATOR selects (of this buffer's resident file, else the project's) as one audited
step, after its preview."
  (interactive (list (read-string "Remove the entry containing: ")))
  (let ((arg (list :locator locator)))
    (when (and buffer-file-name (memzoi-resident-file-p))
      (setq arg (plist-put arg :uri (eglot--path-to-uri buffer-file-name))))
    (if memzoi-confirm-writes
        (memzoi--review (memzoi--server) "memzoi.resident.remove" arg)
      (memzoi--execute (memzoi--server) "memzoi.resident.remove" (vector arg) "remove entry"))))

(provide 'memzoi)
;; Checkpoints and memory health (`memzoi-checkpoints', `memzoi-checkpoint-continue', `memzoi-checkpoint-close',
;; `memzoi-memory-health') live beside this file.
(require 'memzoi-checkpoints)
;;; memzoi.el ends here
