;;; emacs_lib.el --- the shared driver of the batch Emacs + eglot tests (emacs_*.el)  -*- lexical-binding: t; -*-
;; A script loads it with (load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t), then
;; runs its steps inside `memzoi-test-run'.  The report is a plist written as JSON to the output file; a failed step
;; (a timeout, any error) ends the run with exit status 2 and the report's `error' saying what.
;; Env: MEMZOI_LSP_CMD (the memzoi-lsp program), MEMZOI_EMACS_DIR (editors/emacs).

(require 'json)
(require 'cl-lib)

(defvar memzoi-test-report nil "The report (a plist), written as JSON by `memzoi-test-finish'.")
(defvar memzoi-test-out nil "Where the report goes.")

(defun memzoi-test-put (key value)
  "Set KEY to VALUE in the report."
  (setq memzoi-test-report (plist-put memzoi-test-report key value)))

(defun memzoi-test-finish (rc)
  "Write the report and exit with status RC."
  (with-temp-file memzoi-test-out (insert (json-encode memzoi-test-report)))
  ;; output a server sends while Emacs exits must not reach a filter that replies on a closing pipe
  (dolist (p (process-list)) (set-process-filter p #'ignore) (set-process-sentinel p #'ignore))
  (kill-emacs rc))

(defun memzoi-test-fail (message)
  "End the run: the report's error is MESSAGE, exit status 2."
  (memzoi-test-put :error message)
  (memzoi-test-finish 2))

(defun memzoi-test-wait (pred what &optional seconds)
  "Wait until PRED holds (at most SECONDS, 60 by default), reading process output; else fail naming WHAT."
  (let ((end (+ (float-time) (or seconds 60))))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (or (funcall pred) (memzoi-test-fail (format "timed out waiting for %s" what)))))

(defun memzoi-test-text (buffer-name)
  "The text of the buffer named BUFFER-NAME, without properties."
  (with-current-buffer buffer-name (buffer-substring-no-properties (point-min) (point-max))))

(defun memzoi-test-load ()
  "Load editors/emacs (memzoi.el) the way a user does, with the server command from MEMZOI_LSP_CMD."
  (add-to-list 'load-path (getenv "MEMZOI_EMACS_DIR"))
  (require 'memzoi)
  (setq memzoi-server-command (list (getenv "MEMZOI_LSP_CMD"))))

(defun memzoi-test-connect (file what)
  "Visit FILE and wait until eglot manages it (WHAT names the wait in a failure)."
  (find-file file)
  (unless (eglot-current-server) (apply #'eglot (eglot--guess-contact)))
  (memzoi-test-wait (lambda () (and (eglot-current-server)
                                    (progn (eglot--maybe-activate-editing-mode) eglot--managed-mode)))
                    what))

(defun memzoi-test-diagnostics (what)
  "Start flymake once (batch mode has no command loop to start it) and wait for a diagnostic of this buffer;
returns them as (:text :line) plists."
  (flymake-start nil t)
  (memzoi-test-wait (lambda () (flymake-diagnostics)) what)
  (vconcat (mapcar (lambda (d) (list :text (flymake-diagnostic-text d)
                                     :line (line-number-at-pos (flymake-diagnostic-beg d))))
                   (flymake-diagnostics))))

(defun memzoi-test-run (out steps)
  "Take the command-line arguments (returned to STEPS as a list), load memzoi, run STEPS and exit 0; any error ends
the run with status 2 and the error in the report written to OUT's argument index (OUT: the index of the output
file among the arguments)."
  (let ((args command-line-args-left))
    (setq command-line-args-left nil)
    (setq memzoi-test-out (nth out args))
    (condition-case err
        (progn
          (memzoi-test-load)
          (funcall steps args)
          (memzoi-test-finish 0))
      (error (memzoi-test-fail (format "%S" err))))))

(provide 'emacs_lib)
;;; emacs_lib.el ends here
