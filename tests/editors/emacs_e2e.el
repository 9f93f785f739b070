;;; emacs_e2e.el --- batch Emacs + eglot run of editors/emacs/memzoi.el against memzoi-lsp  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -Q -l emacs_e2e.el <workspace-root> <out.json>
;; Env: MEMZOI_LSP_CMD, MEMZOI_EMACS_DIR.  Writes a JSON report; exits 2 on a failed step.

(require (quote json))
(require (quote cl-lib))
(let* ((args command-line-args-left)
       (root (file-name-as-directory (nth 0 args)))
       (out (nth 1 args))
       (report (list))
       (deadline-s 60)
       ;; the review flow's Apply question: answered with `answer', recorded with the diff shown at that moment
       (answer nil) (questions nil) (messages nil)
       ;; `review-hook' runs once at the next Apply question (another writer edits a file while the diff shows);
       ;; a stale refusal's "Preview again?" is recorded and answered no
       (review-hook nil) (stale-questions nil))
  (setq command-line-args-left nil)
  (advice-add 'y-or-n-p :override
              (lambda (prompt)
                (push (list :prompt prompt
                            :diff (let ((b (get-buffer "*Memzoi preview*")))
                                    (and b (with-current-buffer b (buffer-string)))))
                      questions)
                (cond ((string-match-p "Preview again" prompt) (push prompt stale-questions) nil)
                      (t (when review-hook (funcall review-hook) (setq review-hook nil)) answer))))
  ;; every message of the run, as the user reads it in the echo area
  (advice-add 'message :before
              (lambda (fmt &rest args)
                (when (and fmt (string-prefix-p "Memzoi" fmt))
                  (push (apply #'format-message fmt args) messages))))
  (cl-labels ((put (k v) (setq report (plist-put report k v)))
              (finish (rc)
                (with-temp-file out (insert (json-encode report)))
                ;; a server may still be talking (a second project's configuration request): its output, read
                ;; while Emacs exits, must not reach a filter that replies on a pipe being closed
                (dolist (p (process-list)) (set-process-filter p #'ignore) (set-process-sentinel p #'ignore))
                (kill-emacs rc))
              (fail (msg)
                (put :error msg)
                (let ((s (ignore-errors (eglot-current-server))))
                  (when (and s (getenv "MEMZOI_EVENTS"))
                    (with-current-buffer (jsonrpc-events-buffer s)
                      (write-region (point-min) (point-max) (getenv "MEMZOI_EVENTS")))))
                (finish 2))
              (connect (what)
                (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
                (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                      what))
              (text-of (buf) (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))
              (disk-of (file) (and (file-exists-p file)
                                   (with-temp-buffer (insert-file-contents file) (buffer-string))))
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
                             (lambda (_prompt coll &rest _)
                               (setq menu (mapcar #'car coll))
                               (or (seq-find (lambda (m) (string-prefix-p title m)) menu) title)))
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
                        ((symbol-function 'y-or-n-p) (lambda (prompt &rest _) (put :undo_question prompt) t)))
                (setq memzoi-last-result nil)
                (memzoi-history))
              (put :undo_result memzoi-last-result)
              (put :proposal_restored (file-exists-p pending))
              (find-file pending)
              (revert-buffer t t t)
              (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
              (wait (lambda () (and (eglot-current-server) (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                    "eglot on the restored proposal")
              ;; 4c. Preview: apply proposal from eglot-code-actions: a read-only diff buffer, nothing written
              ;; (the review flow's question answered Cancel).
              (setq answer nil questions nil)
              (code-action "Preview: apply proposal" nil :preview)
              (put :preview_questions (vconcat (mapcar (lambda (q) (plist-get q :prompt)) questions)))
              ;; memzoi.review, the Review proposal… action of the contract (handled here, never sent): the same
              ;; flow, answered Cancel
              (setq answer nil questions nil)
              (memzoi--dispatch server "memzoi.review" (vector (list :uri (eglot--path-to-uri pending))))
              (put :review_command_questions (vconcat (mapcar (lambda (q) (plist-get q :prompt)) questions)))
              (put :review_command_diff (plist-get (car questions) :diff))
              (put :review_command_wrote_nothing (file-exists-p pending))
              (let ((buf (get-buffer memzoi-preview-buffer)))
                (put :preview_buffer (and buf (with-current-buffer buf
                                                (list :mode (symbol-name major-mode) :read_only buffer-read-only
                                                      :text (buffer-string))))))
              (put :preview_wrote_nothing (and (file-exists-p pending)
                                               (not (file-exists-p (expand-file-name
                                                                    ".memzoi/records/protected-routes-must-validate-sessions-server-side.md" root)))))
              (put :preview_echo (current-message))
              ;; 4d. M-x memzoi-apply from a record's buffer (no target): the pending proposals are offered, the
              ;; chosen one is reviewed, Cancel writes nothing.
              (find-file (expand-file-name ".memzoi/records/prefer-source-files-below-1000-lines.md" root))
              (setq answer nil questions nil)
              (cl-letf (((symbol-function 'completing-read)
                         (lambda (prompt coll &rest _)
                           (put :picker_prompt prompt)
                           (put :picker_labels (vconcat (mapcar #'car coll)))
                           (seq-find (lambda (l) (string-prefix-p "Protected routes" l)) (mapcar #'car coll))))
                        ((symbol-function 'read-string) (lambda (&rest _) "")))
                (put :picked_result (condition-case e (memzoi-apply) (error (list :error (format "%S" e))))))
              (put :picked_questions (vconcat (mapcar (lambda (q) (plist-get q :prompt)) questions)))
              (put :picked_wrote_nothing (file-exists-p pending))
              (find-file pending))
            (if (memzoi--resolve server '("memzoi.apply"))
                ;; M-x memzoi-apply: preview, then Apply, in one flow (nothing asked twice)
                (progn (put :lifecycle "apply")
                       (setq answer t questions nil)
                       (cl-letf (((symbol-function 'read-string)
                                  (lambda (prompt &rest _) (put :apply_asked prompt) "")))
                         (put :lifecycle_result (condition-case e (memzoi-apply) (error (list :error (format "%S" e))))))
                       (put :apply_questions (vconcat (reverse questions)))
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
            (setq answer nil questions nil)
            (code-action "Preview: supersede record…" '("files grew" "Prefer source files below 800 lines") :supersede_preview)
            (put :supersede_preview_questions (length questions))
            (put :supersede_preview_text (with-current-buffer memzoi-preview-buffer (buffer-string)))
            (setq answer t questions nil)
            (code-action "Supersede record…" '("files grew" "Prefer source files below 800 lines") :supersede)
            (put :supersede_questions (length questions))
            (put :supersede_result memzoi-last-result)
            ;; 6. Hidden-buffer revert after apply: the superseded record's buffer is not shown while its supersede
            ;; packet is applied (review flow, Apply); it then holds the new disk text.
            (let* ((record-buf (current-buffer))
                   (record-file buffer-file-name)
                   (old (text-of record-buf))
                   (packet (seq-find (lambda (f) (equal (plist-get f :before) "absent"))
                                     (append (plist-get memzoi-last-result :files) nil))))
              (find-file (expand-file-name (plist-get packet :path) root))
              (connect "eglot on the supersede packet")
              ;; 6a. A stale verdict is refused: the record is edited on disk while the diff is shown; Apply sends
              ;; the preview's fingerprint, the server refuses (preview_stale), nothing is written, a new preview
              ;; is offered (answered no); then the record's bytes are put back.
              (let ((original (with-temp-buffer (set-buffer-multibyte nil)
                                                (insert-file-contents-literally record-file) (buffer-string))))
                (setq answer t questions nil stale-questions nil
                      review-hook (lambda () (write-region "A line added by hand while the diff was open.\n" nil
                                                           record-file t 'silent)))
                (put :stale_apply_result (condition-case e (memzoi-apply) (error (list :error (format "%S" e)))))
                (put :stale_apply (list :code (plist-get memzoi-last-result :code)
                                        :error (plist-get memzoi-last-result :error)
                                        :again (car stale-questions)
                                        :edit_kept (and (string-match-p "added by hand" (disk-of record-file)) t)
                                        :packet_kept (file-exists-p (expand-file-name (plist-get packet :path) root))))
                ;; put back through a copy: writing a visited file whose buffer is behind it asks the user
                (let ((tmp (make-temp-file "memzoi-original"))
                      (coding-system-for-write 'no-conversion))
                  (write-region original nil tmp nil 'silent)
                  (copy-file tmp record-file t)
                  (delete-file tmp))
                ;; the record's buffer holds these very bytes: in step with the file again, as a revert would leave it
                (with-current-buffer record-buf (set-visited-file-modtime)))
              (setq answer t questions nil)
              (put :supersede_apply_result (condition-case e (memzoi-apply) (error (list :error (format "%S" e)))))
              (put :supersede_apply_questions (length questions))
              (put :hidden_reload (list :shown (and (get-buffer-window record-buf) t)
                                        :changed_on_disk (not (equal (disk-of record-file) old))
                                        :buffer_is_disk (equal (text-of record-buf) (disk-of record-file))
                                        :superseded (and (string-match-p "status: superseded" (text-of record-buf)) t))))
            ;; 7. A packet with an error finding, rejected by its uri from another buffer (as a lens or list does):
            ;; the reason is asked, and its diagnostics are cleared once the file is gone.
            (let* ((bad (expand-file-name ".memzoi/proposals/pending/mem_bad_lane.md" root))
                   (bad-buf (find-file bad)))
              (connect "eglot on the bad packet")
              (flymake-start nil t)
              (wait (lambda () (with-current-buffer bad-buf (flymake-diagnostics))) "diagnostics of the bad packet")
              (let ((before (length (with-current-buffer bad-buf (flymake-diagnostics))))
                    (prompts nil))
                (find-file (expand-file-name "NOTES.md" root))
                (cl-letf (((symbol-function 'read-string)
                           (lambda (prompt &rest _) (push prompt prompts) "lane is not one of Memzoi's")))
                  (memzoi--dispatch server "memzoi.reject" (vector (list :uri (eglot--path-to-uri bad)))))
                (wait (lambda () (null (with-current-buffer bad-buf (flymake-diagnostics)))) "the deleted file's diagnostics to go")
                (put :deleted_diagnostics (list :before before :after (length (with-current-buffer bad-buf (flymake-diagnostics)))
                                                :prompts (vconcat prompts) :file_gone (not (file-exists-p bad))
                                                :status (plist-get memzoi-last-result :status)))))
            ;; 8. memzoi/changed as the server sends it: a rewritten file is reverted, a modified buffer kept.
            (let* ((notes (expand-file-name "NOTES.md" root))
                   (mod (expand-file-name "modified.md" root))
                   (notes-buf (find-file-noselect notes))
                   (mod-buf (progn (with-temp-file mod (insert "disk\n")) (find-file-noselect mod))))
              (with-current-buffer mod-buf (erase-buffer) (insert "typed by the user"))
              (with-temp-file notes (insert "# Notes\n\nRewritten on disk.\n"))
              (with-temp-file mod (insert "disk changed\n"))
              (eglot-handle-notification server 'memzoi/changed :changeId "chg_test" :operation "apply"
                                         :message "Applied"
                                         :touched (vector (list :uri (eglot--path-to-uri notes) :deleted :json-false)
                                                          (list :uri (eglot--path-to-uri mod) :deleted :json-false)))
              (put :changed_handler (list :notes_reloaded (equal (text-of notes-buf) "# Notes\n\nRewritten on disk.\n")
                                          :modified_kept (equal (text-of mod-buf) "typed by the user")))
              (with-current-buffer mod-buf (set-buffer-modified-p nil))
              (kill-buffer mod-buf))
            ;; 9. Zuno's resident file: memzoi-mode, eglot attached, its cap-usage finding; Reject candidate… asks a
            ;; reason; Approve reverts the buffer.
            (let ((reject-id (getenv "MEMZOI_RESIDENT_REJECT_ID"))
                  (approve-id (getenv "MEMZOI_RESIDENT_ID"))
                  (rules (expand-file-name ".zuno/RULES.md" root)))
              (when approve-id
                (find-file rules)
                (put :resident_mode (symbol-name major-mode))
                (connect "eglot on .zuno/RULES.md")
                (put :resident_root (project-root (eglot--project (eglot-current-server))))
                (put :resident_same_server (eq (eglot-current-server) server))
                (flymake-start nil t)
                (wait (lambda () (seq-some (lambda (d) (string-match-p "resident_cap_usage" (flymake-diagnostic-text d)))
                                           (flymake-diagnostics)))
                      "the resident cap-usage diagnostic")
                (put :resident_diagnostics (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
                (code-action (format "Reject candidate %s" (substring reject-id 0 12)) '("not house style") :resident_reject)
                (put :resident_reject_result memzoi-last-result)
                (let ((memzoi-confirm-writes
                       (condition-case nil
                           (progn (jsonrpc-request server :workspace/executeCommand
                                                   (list :command "memzoi.preview"
                                                         :arguments (vector (list :uri (eglot--path-to-uri rules)
                                                                                  :operation "approve" :candidateId approve-id))))
                                  t)
                         (error nil))))
                  (put :resident_preview_supported memzoi-confirm-writes)
                  (setq answer t)
                  (code-action (format "Approve candidate %s" (substring approve-id 0 12)) nil :resident_approve))
                (put :resident_approve_result memzoi-last-result)
                (put :resident_buffer (text-of (current-buffer)))
                (put :resident_disk (disk-of rules))))
            ;; 9b. Zuno's global resident file ($ZUNO_CONFIG_DIR/memory/MEMORY.md) opens in memzoi-mode and attaches.
            (let ((global (expand-file-name "memory/MEMORY.md" (getenv "ZUNO_CONFIG_DIR"))))
              (when (file-exists-p global)
                (find-file global)
                (put :global_mode (symbol-name major-mode))
                (connect "eglot on the global MEMORY.md")
                (put :global_managed (and eglot--managed-mode t))))
            ;; 10. M-x memzoi-reattest of a hand-edited attested record: the optional reason asked once, the diff of
            ;; the attested revision and the current text, then Apply (where the server previews reattest).
            (let* ((hand (expand-file-name ".memzoi/records/hand-edited-rule.md" root))
                   (before (disk-of hand))
                   (prompts nil))
              (find-file hand)
              (connect "eglot on the hand-edited record")
              (let ((supported (condition-case nil
                                   (progn (jsonrpc-request server :workspace/executeCommand
                                                           (list :command "memzoi.preview"
                                                                 :arguments (vector (list :uri (eglot--path-to-uri hand)
                                                                                          :operation "reattest"))))
                                          t)
                                 (error nil))))
                (setq answer t questions nil memzoi-last-result nil)
                (cl-letf (((symbol-function 'read-string)
                           (lambda (prompt &rest _) (push prompt prompts) "typo fixed")))
                  (condition-case e (memzoi-reattest) (error (put :reattest_error (format "%S" e)))))
                (put :reattest (list :supported supported :prompts (vconcat (reverse prompts))
                                     :questions (length questions) :diff (plist-get (car questions) :diff)
                                     :written (not (equal (disk-of hand) before))
                                     :status (and (listp memzoi-last-result) (plist-get memzoi-last-result :status))))))
            (put :messages (vconcat (reverse messages))))
          (finish 0))
      (error (fail (format "%S" err))))))
;;; emacs_e2e.el ends here
