;;; memzoi-checkpoints.el --- Memzoi session checkpoints and memory health  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Loaded by memzoi.el.  The server decides everything (memzoi.checkpoints.*, memzoi.memoryHealth); this renders.
;; `memzoi-checkpoints' lists the project's session checkpoints in `*Memzoi checkpoints*' (open ones first, with
;; the actions each accepts now; a checkpoint is a runtime row, never repository truth).
;; `memzoi-checkpoint-continue' and `memzoi-checkpoint-close' preview the change first (nothing written), ask
;; Apply? with the preview's summary when `memzoi-confirm-writes' is on, then apply it with the previewed version
;; (refused when the checkpoint changed since).  `memzoi-memory-health' shows the maintenance plan's duplicates,
;; contradictions and expiring records in `*Memzoi health*', each record a button that opens its file.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'seq)

(declare-function memzoi--server "memzoi")
(declare-function memzoi--error-message "memzoi")
(defvar memzoi-confirm-writes)
(defvar memzoi-last-result)

(defun memzoi--checkpoint-request (command arg)
  "Send COMMAND with the plist ARG to the server; the result, or nil after a refusal (reported once)."
  (condition-case err
      (let ((result (jsonrpc-request (memzoi--server) :workspace/executeCommand
                                     (list :command command :arguments (vector (or arg (make-hash-table)))))))
        (setq memzoi-last-result result)
        result)
    (jsonrpc-error
     (setq memzoi-last-result (list :error (memzoi--error-message err)))
     (message "Memzoi: %s refused: %s" command (memzoi--error-message err))
     nil)))

(defun memzoi--checkpoint-line (c)
  "One line for the checkpoint plist C."
  (let ((acts (append (plist-get c :actions) nil)))
    (format "%s checkpoint %s v%s (actions: %s): %s: %s [boundary %s; provenance %s]"
            (plist-get c :status) (plist-get c :id) (plist-get c :version)
            (if acts (string-join acts ", ") "none")
            (replace-regexp-in-string "\n" " " (or (plist-get c :task) ""))
            (replace-regexp-in-string "\n" " " (or (plist-get c :title) ""))
            (or (plist-get (plist-get c :retention_decision) :effective_boundary) "?")
            (or (plist-get c :provenance) "runtime"))))

(defun memzoi-checkpoints ()
  "List the session checkpoints of the project in `*Memzoi checkpoints*'; return the server's listing."
  (interactive)
  (let ((result (memzoi--checkpoint-request "memzoi.checkpoints.list" (list))))
    (when result
      (with-current-buffer (get-buffer-create "*Memzoi checkpoints*")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (seq-doseq (project (plist-get result :projects))
            (seq-doseq (c (plist-get project :checkpoints))
              (insert (memzoi--checkpoint-line c) "\n")))
          (special-mode)))
      (unless noninteractive (display-buffer "*Memzoi checkpoints*"))
      (message "Memzoi: %d checkpoint(s)"
               (apply #'+ (mapcar (lambda (p) (length (plist-get p :checkpoints)))
                                  (append (plist-get result :projects) nil)))))
    result))

(defun memzoi--read-checkpoint (verb)
  "Ask for a checkpoint that accepts VERB (a string) now, completing over the listing."
  (let* ((listing (memzoi--checkpoint-request "memzoi.checkpoints.list" (list)))
         (ids (cl-loop for p across (plist-get listing :projects)
                       append (cl-loop for c across (plist-get p :checkpoints)
                                       when (member verb (append (plist-get c :actions) nil))
                                       collect (plist-get c :id)))))
    (completing-read (format "Memzoi: %s checkpoint: " verb) ids nil t)))

(defun memzoi--checkpoint-transition (verb id)
  "Preview VERB (\"continue\" or \"close\") of checkpoint ID, confirm, apply with the previewed version."
  (let ((pre (memzoi--checkpoint-request "memzoi.checkpoints.preview" (list :checkpoint_id id :operation verb))))
    (when pre
      (if (and memzoi-confirm-writes (not (y-or-n-p (format "%s.  Apply? " (plist-get pre :summary)))))
          (progn (message "Memzoi: checkpoint %s cancelled; nothing written" verb) nil)
        (let ((done (memzoi--checkpoint-request
                     "memzoi.checkpoints.apply"
                     (list :checkpoint_id id :operation verb :expected_version (plist-get pre :expected_version)))))
          (when done
            (message "Memzoi: checkpoint %s: %s (version %s)" verb id
                     (plist-get (plist-get done :checkpoint) :version)))
          done)))))

(defun memzoi-checkpoint-continue (id)
  "Continue the open, current checkpoint ID (previewed first)."
  (interactive (list (memzoi--read-checkpoint "continue")))
  (memzoi--checkpoint-transition "continue" id))

(defun memzoi-checkpoint-close (id)
  "Close the checkpoint ID (terminal; previewed first)."
  (interactive (list (memzoi--read-checkpoint "close")))
  (memzoi--checkpoint-transition "close" id))

(defconst memzoi--health-kinds
  '((:duplicates . "exact duplicate") (:contradictions . "contradiction (no winner chosen)")
    (:expiring . "expiring") (:expired . "expired") (:stale . "stale"))
  "The Memory health groups, in the order shown, with their labels.")

(defun memzoi-memory-health ()
  "Show the repository maintenance plan as `*Memzoi health*': each record a button opening its file."
  (interactive)
  (let ((result (memzoi--checkpoint-request "memzoi.memoryHealth" (list))))
    (when result
      (with-current-buffer (get-buffer-create "*Memzoi health*")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (seq-doseq (project (plist-get result :projects))
            (pcase-dolist (`(,key . ,label) memzoi--health-kinds)
              (seq-doseq (f (plist-get project key))
                (let ((ids (append (plist-get f :record_ids) nil)))
                  (dolist (rid ids)
                    (let ((file (expand-file-name (or (plist-get (plist-get f :records) (intern (concat ":" rid))) "")
                                                  (plist-get project :root))))
                      (insert label ": ")
                      (insert-text-button rid 'action (lambda (_) (find-file file)) 'memzoi-file file)
                      (insert (format " [%s]\n" (string-join ids ", ")))))))))
          (special-mode)))
      (unless noninteractive (display-buffer "*Memzoi health*")))
    result))

(provide 'memzoi-checkpoints)
;;; memzoi-checkpoints.el ends here
