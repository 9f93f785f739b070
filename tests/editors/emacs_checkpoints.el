;;; emacs_checkpoints.el --- batch Emacs + eglot run of memzoi-checkpoints.el against memzoi-lsp  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_checkpoints.el <record-file> <checkpoint-id> <out.json>
;; Env and exit status: emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(let ((prompts nil))
  ;; The reviewer answers Apply to the preview's question; the question is recorded.
  (advice-add 'y-or-n-p :override (lambda (prompt) (push prompt prompts) t))
  (memzoi-test-run
   2
   (lambda (args)
     (let ((record (nth 0 args)) (cid (nth 1 args)))
       (memzoi-test-connect record "eglot to connect")
       (memzoi-checkpoints)
       (memzoi-test-put :listed (memzoi-test-text "*Memzoi checkpoints*"))
       (memzoi-test-put :continued (memzoi-checkpoint-continue cid))
       (memzoi-test-put :closed (memzoi-checkpoint-close cid))
       (memzoi-checkpoints)
       (memzoi-test-put :relisted (memzoi-test-text "*Memzoi checkpoints*"))
       (memzoi-test-put :refused (progn (memzoi-checkpoint-continue cid) memzoi-last-result))
       (memzoi-memory-health)
       (memzoi-test-put :health (memzoi-test-text "*Memzoi health*"))
       (with-current-buffer "*Memzoi health*"
         (goto-char (point-min))
         (let ((button (next-button (point))))
           (memzoi-test-put :first_button_file (and button (button-get button 'memzoi-file)))
           (when button (button-activate button))
           (memzoi-test-put :opened_buffer (buffer-file-name))))
       (memzoi-test-put :prompts (vconcat (reverse prompts)))))))
