;;; emacs_e2e.el --- batch Emacs + eglot run of editors/emacs/memzoi.el against memzoi-lsp  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -Q -l emacs_e2e.el <workspace-root> <out.json>
;; Env: MEMZOI_LSP_CMD, MEMZOI_EMACS_DIR.  Writes a JSON report; exits 2 on a failed step.

(require (quote json))
(require (quote cl-lib))
(let* ((args command-line-args-left)
       (root (file-name-as-directory (nth 0 args)))
       (out (nth 1 args))
       (report (list))
       (deadline-s 60))
  (setq command-line-args-left nil)
  (cl-labels ((put (k v) (setq report (plist-put report k v)))
              (finish (rc)
                (with-temp-file out (insert (json-encode report)))
                (kill-emacs rc))
              (fail (msg)
                (put :error msg)
                (let ((s (ignore-errors (eglot-current-server))))
                  (when (and s (getenv "MEMZOI_EVENTS"))
                    (with-current-buffer (jsonrpc-events-buffer s)
                      (write-region (point-min) (point-max) (getenv "MEMZOI_EVENTS")))))
                (finish 2))
              (wait (pred what)
                (let ((end (+ (float-time) deadline-s)))
                  (while (and (not (funcall pred)) (< (float-time) end))
                    (accept-process-output nil 0.05))
                  (or (funcall pred) (fail (format "timed out waiting for %s" what)))))
              (code-action (title answers &optional key)
                ;; eglot-code-actions at point, the menu answered with TITLE and each read-string with the next of
                ;; ANSWERS; the menu and the prompts are recorded under KEY.
                (let ((menu nil) (prompts nil))
                  (cl-letf (((symbol-function 'completing-read)
                             (lambda (_prompt coll &rest _) (setq menu (mapcar #'car coll)) title))
                            ((symbol-function 'read-string)
                             (lambda (prompt &rest _) (push prompt prompts) (pop answers))))
                    (setq memzoi-last-result nil)
                    (goto-char (point-min))
                    (let ((last-nonmenu-event ?\r))
                      (eglot-code-actions (point) nil nil t)))
                  (when key
                    (put (intern (format "%s_menu" key)) (vconcat menu))
                    (put (intern (format "%s_prompts" key)) (vconcat (reverse prompts)))))))
    (condition-case err
        (progn
          (add-to-list 'load-path (getenv "MEMZOI_EMACS_DIR"))
          (require 'memzoi)
          (setq memzoi-server-command (list (getenv "MEMZOI_LSP_CMD")))
          (put :emacs emacs-version)
          ;; 1. A Markdown file outside .memzoi is not in memzoi-mode.
          (find-file (expand-file-name "NOTES.md" root))
          (put :outside_mode (symbol-name major-mode))
          ;; 2. The planted-secret record: memzoi-mode, eglot connects, flymake gets the credential finding.
          (find-file (expand-file-name ".memzoi/records/deploy-token-rotation.md" root))
          (put :mode (symbol-name major-mode))
          ;; eglot-ensure connects from post-command-hook, which never runs in batch: connect directly.
          (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
          ;; Managed mode (didOpen) starts when the connection completes; make sure of it before going on.
          (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                "eglot to connect and manage the buffer")
          (let ((server (eglot-current-server)))
            (put :project_root (project-root (eglot--project server)))
            (put :server_commands (plist-get (plist-get (eglot--capabilities server) :executeCommandProvider) :commands))
            ;; flymake defers its first run to the command loop, which batch mode lacks: start it once here
            ;; (eglot's backend then reports what the server published, now or when it arrives).
            (flymake-start nil t)
            (wait (lambda ()
                    (seq-some (lambda (d) (string-match-p "GitHub token" (flymake-diagnostic-text d)))
                              (flymake-diagnostics)))
                  "the credential diagnostic")
            (put :diagnostics
                 (vconcat (mapcar (lambda (d)
                                    (list :text (flymake-diagnostic-text d)
                                          :type (symbol-name (flymake-diagnostic-type d))
                                          :line (line-number-at-pos (flymake-diagnostic-beg d))
                                          :beg_col (save-excursion (goto-char (flymake-diagnostic-beg d)) (current-column))
                                          :end_col (save-excursion (goto-char (flymake-diagnostic-end d)) (current-column))))
                                  (flymake-diagnostics))))
            ;; 3. Hover on the id's value: provenance.
            (goto-char (point-min)) (forward-line 1) (forward-char 6)
            (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
              (put :hover (plist-get (plist-get hover :contents) :value))
              (put :hover_kind (plist-get (plist-get hover :contents) :kind))
              (put :markdown_mode (fboundp 'gfm-view-mode)))
            ;; 4. A command through workspace/executeCommand: apply when offered, else check the workspace.
            (find-file (expand-file-name ".memzoi/proposals/pending/mem_2026_07_06_auth_001.md" root))
            (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
            (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                  "eglot on the proposal")
            (put :same_server (eq (eglot-current-server) server))
            ;; 4a. Reject… from eglot-code-actions: the menu is answered, then the reason prompt.
            (let ((pending buffer-file-name) (menu nil) (prompts nil))
              (cl-letf (((symbol-function 'completing-read)
                         (lambda (_prompt coll &rest _)
                           (setq menu (mapcar #'car coll))
                           "Reject proposal…"))
                        ((symbol-function 'read-string)
                         (lambda (prompt &rest _) (push prompt prompts) "duplicate of an existing record")))
                (setq memzoi-last-result nil)
                ;; A keyboard event (not a mouse one): eglot then offers the menu with completing-read.
                (let ((last-nonmenu-event ?\r))
                  (eglot-code-actions (point) nil nil t)))
              (put :code_action_menu (vconcat menu))
              (put :reject_prompts (vconcat prompts))
              (put :reject_result memzoi-last-result)
              (put :rejected_moved (not (file-exists-p pending)))
              ;; 4b. The history with completing-read; the chosen applied change is undone (y-or-n-p answered).
              (cl-letf (((symbol-function 'completing-read)
                         (lambda (_prompt coll &rest _)
                           (put :history_labels (vconcat (mapcar #'car coll)))
                           (car (car coll))))
                        ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
                (setq memzoi-last-result nil)
                (memzoi-history))
              (put :undo_result memzoi-last-result)
              (put :proposal_restored (file-exists-p pending))
              (find-file pending)
              (revert-buffer t t t)
              (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
              (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                    "eglot on the restored proposal")
              ;; 4c. Preview: apply proposal from eglot-code-actions: a read-only diff buffer, nothing written.
              (code-action "Preview: apply proposal" nil)
              (let ((buf (get-buffer memzoi-preview-buffer)))
                (put :preview_buffer (and buf (with-current-buffer buf
                                                (list :mode (symbol-name major-mode) :read_only buffer-read-only
                                                      :text (buffer-string))))))
              (put :preview_wrote_nothing (and (file-exists-p pending)
                                               (not (file-exists-p (expand-file-name
                                                                    ".memzoi/records/protected-routes-must-validate-sessions-server-side.md" root)))))
              (put :preview_echo (current-message)))
            (if (memzoi--resolve server '("memzoi.apply"))
                (progn (put :lifecycle "apply")
                       (put :lifecycle_result (condition-case e (memzoi-apply) (error (list :error (format "%S" e)))))
                       (put :applied_result memzoi-last-result))
              (put :lifecycle "check")
              (put :lifecycle_result (condition-case e (memzoi-check-workspace) (error (list :error (format "%S" e))))))
            (when (getenv "MEMZOI_EVENTS")
              (with-current-buffer (jsonrpc-events-buffer server)
                (write-region (point-min) (point-max) (getenv "MEMZOI_EVENTS"))))
            ;; Record what happened on disk before leaving (kill-emacs ends the server with its pipe).
            (put :record_exists (file-exists-p (expand-file-name
                                                ".memzoi/records/protected-routes-must-validate-sessions-server-side.md" root)))
            (put :proposal_pending (file-exists-p (expand-file-name
                                                   ".memzoi/proposals/pending/mem_2026_07_06_auth_001.md" root)))
            ;; 5. Supersede… on a clean record from eglot-code-actions: the reason, then the new title; its Preview
            ;; first (the same questions, shown as a diff).
            (find-file (expand-file-name ".memzoi/records/prefer-source-files-below-1000-lines.md" root))
            (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
            (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                  "eglot on a record")
            (code-action "Preview: supersede record…" '("files grew" "Prefer source files below 800 lines") :supersede_preview)
            (put :supersede_preview_text (with-current-buffer memzoi-preview-buffer (buffer-string)))
            (code-action "Supersede record…" '("files grew" "Prefer source files below 800 lines") :supersede)
            (put :supersede_result memzoi-last-result))
          (finish 0))
      (error (fail (format "%S" err))))))
;;; emacs_e2e.el ends here
