;;; emacs_reflection.el --- batch Emacs + eglot run of the resident views of issue 34  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_reflection.el <RULES.md> <job-id> <candidate-id> <out.json>
;; Env and exit status: emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(let ((questions nil))
  ;; the review flow's Apply question: answered yes, recorded with the diff shown at that moment
  (advice-add 'y-or-n-p :override
              (lambda (prompt)
                (push (list :prompt prompt
                            :diff (let ((b (get-buffer "*Memzoi preview*")))
                                    (and b (with-current-buffer b (buffer-string)))))
                      questions)
                t))
  (memzoi-test-run
   3
   (lambda (args)
     (let ((rules (nth 0 args)) (job-id (nth 1 args)) (cand-id (nth 2 args)))
       (setq memzoi-confirm-writes t)
       (memzoi-test-connect rules "eglot on the resident file")
       (memzoi-test-put :view (vconcat (memzoi-resident)))
       (let ((detail (memzoi-resident-job job-id)))
         (memzoi-test-put :job_status (plist-get (plist-get detail :job) :status))
         (memzoi-test-put :job_buffer (with-current-buffer (format "*Memzoi job %s*" job-id) (buffer-string))))
       (set-buffer (find-buffer-visiting rules))
       (let ((edited (memzoi-resident-edit cand-id "Run make lint and make test before pushing.")))
         (memzoi-test-put :edited_status (plist-get edited :status))
         (memzoi-test-put :edited_original (plist-get edited :original_content)))
       (set-buffer (find-buffer-visiting rules))
       (let ((removed (memzoi-resident-remove "tabs")))
         (memzoi-test-put :removed_status (plist-get removed :status))
         (memzoi-test-put :removed_action (plist-get removed :action)))
       (memzoi-test-put :questions (vconcat (reverse questions)))))))
