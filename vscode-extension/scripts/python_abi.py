"""Print the ABI of the running Python as one JSON object: what decides whether the compiled packages bundled in the
.vsix (pydantic-core, blake3, PyYAML, regex, watchfiles) can be imported by it.

scripts/bundle_server.mjs runs it with the build interpreter and writes bundled/python-abi.json, and ships it as
bundled/python_abi.py; the extension runs that copy (python -I) with the interpreter it chose and compares the two
(src/logic/pythonCheck.ts). Standard library only; works on any Python 3.
"""

import json
import platform
import sys
import sysconfig

print(json.dumps({
    "implementation": sys.implementation.name,
    "version": "%d.%d" % sys.version_info[:2],
    # The suffix of compiled extension modules: '.cpython-311-x86_64-linux-gnu.so', '.cp311-win_amd64.pyd', …
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "machine": platform.machine(),
    "platform": sys.platform,
}))
