;;; memzoi.el --- Memzoi records and proposals with eglot and memzoi-lsp  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Recommended: markdown-mode
;; Keywords: tools, languages
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Markdown files inside a `.memzoi/' directory open in `memzoi-mode' (derived from `markdown-mode' when it is
;; installed, else `text-mode'), which eglot serves with memzoi-lsp.  Other Markdown files are untouched.
;; Recommended: the `markdown-mode' package (highlighting, and Markdown hovers).  Without it eglot asks for
;; plaintext hovers, which the server then sends.
;; Commands: `memzoi-apply', `memzoi-reject', `memzoi-route-local', `memzoi-supersede', `memzoi-tombstone',
;; `memzoi-reattest', `memzoi-preview', `memzoi-undo', `memzoi-history', `memzoi-check-workspace', `memzoi-search'.
;; Those that record a reason (reject, supersede, tombstone) ask for one in the minibuffer, also when they are
;; picked from `eglot-code-actions'; supersede then asks for the replacement's title (empty keeps the record's).
;; Previews (`memzoi-preview', the Preview code actions) show the planned files as a diff in a read-only buffer.
;; `memzoi-history' and `memzoi-undo' complete over the ledger's changes.
;;
;; Setup (see README.md):
;;   (add-to-list 'load-path "/path/to/memzoi-lsp/editors/emacs")
;;   (require 'memzoi)
;;   (setq memzoi-server-command '("/path/to/memzoi-lsp/.venv/bin/memzoi-lsp"))  ; when not on PATH

;;; Code:

(require 'cl-lib)
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

(add-to-list 'eglot-server-programs (cons 'memzoi-mode #'memzoi--server-program))

(defun memzoi-root (&optional file)
  "The directory holding the `.memzoi' tree that contains FILE (default: this buffer's file), or nil."
  (when-let* ((f (or file buffer-file-name))
              (dir (locate-dominating-file f ".memzoi")))
    (and (string-match-p "/\\.memzoi/" (expand-file-name f))
         (expand-file-name dir))))

(defun memzoi--project-find (dir)
  "Make the directory holding `.memzoi' the project root of files under it (for eglot), from DIR."
  (when-let* ((root (and (string-match-p "/\\.memzoi\\(/\\|\\'\\)" (expand-file-name dir))
                         (locate-dominating-file dir ".memzoi"))))
    (cons 'memzoi (expand-file-name root))))

(cl-defmethod project-root ((project (head memzoi)))
  "The root of a Memzoi PROJECT: the directory holding `.memzoi'."
  (cdr project))

(add-hook 'project-find-functions #'memzoi--project-find)

;;;###autoload
(add-hook 'memzoi-mode-hook #'eglot-ensure)

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

(defun memzoi--describe (result)
  "A one-line summary of RESULT (the CLI's --json shapes)."
  (cond ((and (listp result) (plist-get result :change_id))
         (format "change %s %s" (plist-get result :change_id) (or (plist-get result :status) "")))
        ((and (listp result) (plist-get result :error))
         (format "refused: %s" (plist-get (plist-get result :error) :message)))
        (t (format "%S" result))))

(defun memzoi--error-message (err)
  "The server's message of the JSON-RPC error ERR (a refusal), else ERR printed."
  (or (alist-get 'jsonrpc-error-message (cdr-safe err)) (format "%S" err)))

(defun memzoi--refresh-buffers ()
  "Revert unmodified buffers whose files a command changed on disk."
  (dolist (b (buffer-list))
    (with-current-buffer b
      (when (and buffer-file-name (file-exists-p buffer-file-name)
                 (not (buffer-modified-p)) (not (verify-visited-file-modtime b)))
        (revert-buffer t t t)))))

(defun memzoi--execute (server command arguments &optional name)
  "Send COMMAND with ARGUMENTS to SERVER; report the result or the refusal once.
A preview's planned files are shown as a diff (`memzoi--show-preview').
Returns the result, or nil after a refusal (a JSON-RPC error response)."""
  (condition-case err
      (let ((result (jsonrpc-request server :workspace/executeCommand
                                     (list :command command :arguments arguments))))
        (setq memzoi-last-result result)
        (if (equal command "memzoi.preview")
            (progn (memzoi--show-preview result)
                   (message "Memzoi preview: %d file(s) in %s; nothing written"
                            (length (plist-get result :files)) memzoi-preview-buffer))
          (message "Memzoi %s: %s" (or name command) (memzoi--describe result))
          (memzoi--refresh-buffers))
        result)
    (jsonrpc-error
     (setq memzoi-last-result (list :error (memzoi--error-message err)))
     (message "Memzoi %s refused: %s" (or name command) (memzoi--error-message err))
     nil)))

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
  "Read a new title in the minibuffer; nil (empty) keeps the record's."
  (let ((title (string-trim (read-string "New title (empty keeps the record's): "))))
    (unless (string-empty-p title) title)))

(defun memzoi--with-reason (command arguments)
  "ARGUMENTS of COMMAND (from a code action) with what it needs beyond them, asked for when missing: the reason it
requires and, for supersede, an optional new title.  A preview (`memzoi.preview') asks what the previewed change
would."
  (let* ((arg (and (> (length arguments) 0) (aref arguments 0)))
         (op (and (equal command "memzoi.preview") (listp arg) (plist-get arg :operation)))
         (spec (cdr (memzoi--spec-of (if op (concat "memzoi." op) command)))))
    (if (not (and (listp arg) (or (plist-get spec :reason) (plist-get spec :title))))
        arguments
      (let ((arg (copy-sequence arg)))
        (when (and (eq (plist-get spec :reason) 'required) (not (plist-get arg :reason)))
          (setq arg (plist-put arg :reason (memzoi--read-reason t))))
        (when (and (plist-get spec :title) (not (plist-get arg :title)))
          (let ((title (memzoi--read-title)))
            (when title (setq arg (plist-put arg :title title)))))
        (vector arg)))))

;; Code actions run server commands through eglot; those that record a reason ask for it first (a server without
;; one refuses), and every outcome is reported once.  eglot 1.9 (Debian 12) calls `eglot-execute-command';
;; eglot 1.15 and later call `eglot-execute' with the whole action.
(cl-defmethod eglot-execute-command ((server memzoi-eglot-server) command arguments)
  "Run the Memzoi COMMAND (a symbol) with ARGUMENTS on SERVER, asking for a reason when it needs one."
  (let ((name (format "%s" command)))
    (memzoi--execute server name (memzoi--with-reason name arguments))))

(when (fboundp 'eglot-execute)
  (cl-defmethod eglot-execute ((server memzoi-eglot-server) action)
    "Run ACTION (a Command or a CodeAction) on SERVER, asking for a reason when its command needs one."
    (let* ((edit (plist-get action :edit))
           (cmd (if (stringp (plist-get action :command)) action (plist-get action :command))))
      (when edit (eglot--apply-workspace-edit edit))
      (when cmd
        (let ((name (plist-get cmd :command)))
          (memzoi--execute server name (memzoi--with-reason name (or (plist-get cmd :arguments) []))))))))

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

(defun memzoi-run (name &optional reason query change-id)
  "Run the Memzoi command NAME (a key of `memzoi-commands') on this buffer.
REASON, QUERY and CHANGE-ID are asked for when the command needs them and they are nil."
  (let* ((spec (or (cdr (assq name memzoi-commands)) (error "Unknown Memzoi command %s" name)))
         (server (memzoi--server))
         (command (or (memzoi--resolve server (plist-get spec :server))
                      (user-error "Memzoi: this memzoi-lsp does not offer %s; update memzoi-lsp" name)))
         (target (plist-get spec :target))
         (arg nil))
    (when (eq target 'proposal)
      (unless (and buffer-file-name (string-match-p "/\\.memzoi/proposals/pending/[^/]+\\.md\\'" buffer-file-name))
        (user-error "Memzoi: %s works on a pending proposal (.memzoi/proposals/pending/*.md)" name)))
    (when (and (memq target '(proposal record)) (buffer-modified-p))
      ;; Lifecycle commands are disk transactions: the server refuses files with unsaved changes.
      (user-error "Memzoi: save the buffer first; lifecycle commands work on the file on disk"))
    (when (memq target '(proposal record))
      (setq arg (plist-put arg :uri (eglot--path-to-uri buffer-file-name))))
    (when (eq target 'change)
      (setq arg (plist-put arg :change_id (or change-id (memzoi-read-change "Undo change: ")))))
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
  "Show the planned files of OPERATION on this buffer's file as a diff; nothing is written.
OPERATION is apply (a pending proposal), supersede or tombstone (a record); the
same questions as the change itself are asked (reason, title)."
  (interactive
   (list (if (and buffer-file-name (string-match-p "/proposals/pending/" buffer-file-name))
             "apply"
           (completing-read "Preview: " '("supersede" "tombstone") nil t))))
  (when (buffer-modified-p)
    (user-error "Memzoi: save the buffer first; a preview plans from the file on disk"))
  (let ((server (memzoi--server)))
    (memzoi--execute server "memzoi.preview"
                     (memzoi--with-reason "memzoi.preview"
                                          (vector (list :uri (eglot--path-to-uri buffer-file-name)
                                                        :operation operation)))
                     "preview")))
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
    (when (and (eq (plist-get change :undo_available) t)
               (y-or-n-p (format "Undo change %s? " (plist-get change :change_id))))
      (memzoi-run 'undo nil nil (plist-get change :change_id)))
    change))
(defun memzoi-check-workspace () "Check every Memzoi file of the project." (interactive) (memzoi-run 'check-workspace))
(defun memzoi-search (query) "Search records for QUERY."
       (interactive (list (read-string "Search records: "))) (memzoi-run 'search nil query))

(provide 'memzoi)
;;; memzoi.el ends here
