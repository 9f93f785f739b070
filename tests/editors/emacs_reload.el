;;; emacs_reload.el --- batch Emacs run of memzoi.el's `memzoi/changed' handler with no server  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_reload.el <project-root> <out.json>
;; The handler is given the contract's params as memzoi-lsp sends them after a change it wrote: a buffer opened on
;; a resident file that did not exist yet is reverted once the change creates it (Neovim's `:checktime' skipped
;; such a buffer, newuser3 D4), and a modified buffer is kept with one message.  Env and exit status: emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(let ((messages nil))
  (advice-add 'message :before (lambda (fmt &rest args) (when fmt (push (apply #'format fmt args) messages))))
  (memzoi-test-run
   1
   (lambda (args)
     (let* ((rules (expand-file-name ".zuno/RULES.md" (nth 0 args)))
            (touched (vector (list :uri (eglot--path-to-uri rules) :deleted :json-false)))
            (buf (progn (make-directory (file-name-directory rules) t) (find-file-noselect rules))))
       (with-temp-file rules (insert "- Always run pytest -q before committing.\n"))
       (memzoi-test-put :reverted (length (memzoi--changed touched)))
       (memzoi-test-put :created (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))
       (memzoi-test-put :created_modified (buffer-modified-p buf))
       (with-current-buffer buf (goto-char (point-max)) (insert "typed by the user\n"))
       (with-temp-file rules (insert "- Changed on disk.\n"))
       (setq messages nil)
       (memzoi-test-put :kept_reverted (length (memzoi--changed touched)))
       (memzoi-test-put :kept (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))
       (memzoi-test-put :messages (vconcat (reverse messages)))
       (with-current-buffer buf (set-buffer-modified-p nil))))))
