;;; emacs_large.el --- the file given on Emacs' command line, in a large workspace, gets didOpen and diagnostics  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_large.el FILE --eval '(memzoi-large-wait "OUT.json")'
;; Loaded BEFORE FILE is visited, as a user's init file is: memzoi-mode and its connection come from the visit
;; itself; nothing here connects eglot.  Env: MEMZOI_LSP_CMD, MEMZOI_EMACS_DIR.

(require 'cl-lib)
(require 'json)
(add-to-list 'load-path (getenv "MEMZOI_EMACS_DIR"))
(require 'memzoi)
(setq memzoi-server-command (list (getenv "MEMZOI_LSP_CMD")))

(defvar memzoi-large-t0 (float-time) "When the file was about to be visited.")
(defvar memzoi-large-did-open nil "Seconds from the visit to the buffer's didOpen.")
(advice-add 'eglot--signal-textDocument/didOpen :before
            (lambda (&rest _) (unless memzoi-large-did-open
                                (setq memzoi-large-did-open (- (float-time) memzoi-large-t0)))))

(defvar memzoi-large-published nil "Seconds from the visit to the first publishDiagnostics of the buffer's file.")
(defvar memzoi-large-codes nil "The codes of that publication.")
(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  "Note the first publication for a `memzoi-mode' buffer's file (its findings may be none)."
  (let ((buf (find-buffer-visiting (eglot--uri-to-path uri))))
    (when (and buf (not memzoi-large-published) (with-current-buffer buf (derived-mode-p 'memzoi-mode)))
      (setq memzoi-large-published (- (float-time) memzoi-large-t0)
            memzoi-large-codes (mapcar (lambda (d) (plist-get d :code)) diagnostics)))))

(defun memzoi-large-wait (out)
  "Wait (at most 300 s) for the command-line file's first diagnostics; write what happened to OUT (JSON)."
  (let* ((buf (seq-find (lambda (b) (with-current-buffer b (derived-mode-p 'memzoi-mode))) (buffer-list)))
         (end (+ (float-time) (string-to-number (or (getenv "MEMZOI_LARGE_LIMIT") "300"))))
         (report (list :mode (and buf (with-current-buffer buf (symbol-name major-mode))))))
    (when buf
      (with-current-buffer buf
        (while (and (not memzoi-large-published) (< (float-time) end))
          (accept-process-output nil 0.05))
        (setq report (append report
                             (list :managed (and eglot--managed-mode t)
                                   :did_open_s memzoi-large-did-open
                                   :first_diagnostic_s memzoi-large-published
                                   :codes (vconcat memzoi-large-codes)
                                   :file buffer-file-name)))))
    (with-temp-file out (insert (json-encode report)))
    (dolist (p (process-list)) (set-process-filter p #'ignore) (set-process-sentinel p #'ignore))
    (kill-emacs 0)))
;;; emacs_large.el ends here
