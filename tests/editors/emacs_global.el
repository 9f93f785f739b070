;;; emacs_global.el --- batch Emacs run of which project the global resident file belongs to, no server  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_global.el <project-root> <elsewhere> <out.json>
;; ZUNO_CONFIG_DIR holds memory/MEMORY.md.  The global file is used from inside a project (the command line's
;; rule): the project of the file this Emacs worked on before, else of the folder Emacs was started in; outside
;; every project, none (Zuno's config folder was taken as the project, newuser5 D4).  Env and exit status:
;; emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(memzoi-test-run
 2
 (lambda (args)
   (let* ((root (file-name-as-directory (nth 0 args)))
          (elsewhere (file-name-as-directory (nth 1 args)))
          (global (memzoi--global-resident))
          (project-of (lambda () (with-current-buffer (find-file-noselect global)
                                   (prog1 (cdr (memzoi--project-find default-directory))
                                     (kill-buffer))))))
     (make-directory (file-name-directory global) t)
     (with-temp-file global (insert "The user works in UTC."))
     ;; Worked on a file of the project, then visited the global file.
     (find-file (expand-file-name "src/main.c" root))
     (memzoi-test-put :after_a_project_file (funcall project-of))
     (kill-buffer (get-file-buffer (expand-file-name "src/main.c" root)))
     ;; Started in the project, no file of it visited.
     (let ((command-line-default-directory root))
       (memzoi-test-put :started_in_the_project (funcall project-of)))
     ;; Outside every project: no project at all.
     (let ((command-line-default-directory elsewhere))
       (memzoi-test-put :outside (or (funcall project-of) :json-false))))))
