;;; memzoi.el --- Memzoi records and proposals with eglot and memzoi-lsp  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Markdown files inside a `.memzoi/' directory open in `memzoi-mode' (derived from `markdown-mode' when it is
;; installed, else `text-mode'), which eglot serves with memzoi-lsp.  Other Markdown files are untouched.
;; Commands: `memzoi-apply', `memzoi-reject', `memzoi-route-local', `memzoi-supersede', `memzoi-tombstone',
;; `memzoi-reattest', `memzoi-undo', `memzoi-history', `memzoi-check-workspace', `memzoi-search'.
;; Those that record a reason (reject, supersede, tombstone) ask for one in the minibuffer.
;;
;; Setup (see README.md):
;;   (add-to-list 'load-path "/path/to/memzoi-lsp/editors/emacs")
;;   (require 'memzoi)
;;   (setq memzoi-server-command '("/path/to/memzoi-lsp/.venv/bin/memzoi-lsp"))  ; when not on PATH

;;; Code:

(require 'cl-lib)
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
    (supersede  :server ("memzoi.supersede") :target record :reason required)
    (tombstone  :server ("memzoi.tombstone") :target record :reason required)
    (reattest   :server ("memzoi.reattest") :target record :reason optional)
    (undo       :server ("memzoi.undo") :target change)
    (history    :server ("memzoi.history") :target file)
    (check-workspace :server ("memzoi.checkWorkspace") :target none)
    (search     :server ("memzoi.search") :target none :query t))
  "Commands: name, server commands (the first one the server offers is used), target, reason, query.
Kept in step with vscode-extension/src/logic/commands.ts.")

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
    (when (and (memq target '(proposal record file)) (buffer-modified-p))
      ;; Lifecycle commands are disk transactions: the server refuses files with unsaved changes.
      (user-error "Memzoi: save the buffer first; lifecycle commands work on the file on disk"))
    (when (memq target '(proposal record file))
      (setq arg (plist-put arg :uri (eglot--path-to-uri buffer-file-name))))
    (when (eq target 'change)
      (setq arg (plist-put arg :change_id (or change-id (read-string "Change id: ")))))
    (pcase (plist-get spec :reason)
      ('required
       (let ((r (string-trim (or reason (read-string "Reason (required): ")))))
         (when (string-empty-p r) (user-error "Memzoi: %s needs a reason; it is recorded with the change" name))
         (setq arg (plist-put arg :reason r))))
      ('optional
       (let ((r (string-trim (or reason (read-string "Reason (optional): ")))))
         (unless (string-empty-p r) (setq arg (plist-put arg :reason r))))))
    (let* ((arguments (if (plist-get spec :query)
                          (vector (or query (read-string "Search records: ")))
                        (vector (or arg (make-hash-table)))))
           (result (jsonrpc-request server :workspace/executeCommand
                                    (list :command command :arguments arguments))))
      (setq memzoi-last-result result)
      (message "Memzoi %s: %s" name (memzoi--describe result))
      ;; The command may have moved or written files: refresh unmodified buffers from disk.
      (dolist (b (buffer-list))
        (with-current-buffer b
          (when (and buffer-file-name (file-exists-p buffer-file-name)
                     (not (buffer-modified-p)) (not (verify-visited-file-modtime b)))
            (revert-buffer t t t))))
      result)))

(defun memzoi-apply () "Apply the pending proposal in this buffer." (interactive) (memzoi-run 'apply))
(defun memzoi-reject (reason) "Reject the pending proposal in this buffer, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'reject reason))
(defun memzoi-route-local () "Route the proposal in this buffer to local memory." (interactive) (memzoi-run 'route-local))
(defun memzoi-supersede (reason) "Propose superseding this record, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'supersede reason))
(defun memzoi-tombstone (reason) "Propose tombstoning this record, with REASON."
       (interactive (list (read-string "Reason (required): "))) (memzoi-run 'tombstone reason))
(defun memzoi-reattest () "Accept a hand edit of this record." (interactive) (memzoi-run 'reattest))
(defun memzoi-undo (change-id) "Undo the change CHANGE-ID."
       (interactive (list (read-string "Change id: "))) (memzoi-run 'undo nil nil change-id))
(defun memzoi-history () "Show the change history of this file." (interactive) (memzoi-run 'history))
(defun memzoi-check-workspace () "Check every Memzoi file of the project." (interactive) (memzoi-run 'check-workspace))
(defun memzoi-search (query) "Search records for QUERY."
       (interactive (list (read-string "Search records: "))) (memzoi-run 'search nil query))

(provide 'memzoi)
;;; memzoi.el ends here
