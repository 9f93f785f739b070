;;; emacs_config.el --- batch Emacs + eglot run on a project's .memzoi/config.toml  -*- lexical-binding: t; -*-
;; Usage: emacs --batch -q -l emacs_config.el <config.toml> <out.json>
;; The file opens in `memzoi-config-mode', eglot manages it and flymake shows the server's findings (those `memzoi
;; check .memzoi/config.toml' reports).  Env and exit status: emacs_lib.el.

(load (expand-file-name "emacs_lib" (file-name-directory load-file-name)) nil t)
(memzoi-test-run
 1
 (lambda (args)
   (let ((config (nth 0 args)))
     (find-file config)
     (memzoi-test-put :mode (symbol-name major-mode))
     (memzoi-test-connect config "eglot to manage .memzoi/config.toml")
     (memzoi-test-put :diagnostics (memzoi-test-diagnostics "a diagnostic on .memzoi/config.toml")))))
