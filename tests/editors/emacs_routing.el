;;; emacs_routing.el --- batch Emacs + eglot run of `memzoi-route' on a session-end file  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_routing.el <session.yml> <out.json>
;; Env and exit status: emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(let ((answer nil) (questions nil))
  (advice-add 'y-or-n-p :override
              (lambda (prompt)
                (push (list :prompt prompt
                            :shown (let ((b (get-buffer "*Memzoi routing*")))
                                     (and b (with-current-buffer b (buffer-string)))))
                      questions)
                answer))
  (memzoi-test-run
   1
   (lambda (args)
     (let ((file (nth 0 args)))
       (find-file file)
       (memzoi-test-put :mode (symbol-name major-mode))
       (memzoi-test-connect file "eglot to manage the session-end file")
       (memzoi-test-put :diagnostics (memzoi-test-diagnostics "a diagnostic on the session-end file"))
       ;; The preview, answered no: nothing is written.
       (setq answer nil)
       (memzoi-route)
       (memzoi-test-put :cancelled_result memzoi-last-result)
       ;; Fix the unsafe candidate, save, and route again, answering yes.
       (goto-char (point-min))
       (while (search-forward "sensitivity: unknown" nil t) (replace-match "sensitivity: repo-safe"))
       (save-buffer)
       (setq answer t)
       (memzoi-route)
       (memzoi-test-put :applied memzoi-last-result)
       (memzoi-test-put :questions (vconcat (reverse questions)))))))
