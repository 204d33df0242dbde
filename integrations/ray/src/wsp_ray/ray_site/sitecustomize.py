"""Makes Ray importable in a wsp environment's interpreter, after the environment's own packages.

wsp-ray puts this directory on a Ray worker's PYTHONPATH. At startup it appends the site
directories of the Python that runs Ray (named in WSP_RAY_SITE_DIRS) to sys.path, behind the
environment's site-packages, so the environment's packages win and Ray is never installed
into it. Nothing happens on an interpreter of another X.Y than Ray's (WSP_RAY_PYTHON).
"""

import os
import site
import sys


def _add_ray_site_dirs():
    wanted = os.environ.get("WSP_RAY_PYTHON", "")
    if wanted != "%d.%d" % sys.version_info[:2]:
        return
    for directory in os.environ.get("WSP_RAY_SITE_DIRS", "").split(os.pathsep):
        if directory and directory not in sys.path:
            site.addsitedir(directory)


_add_ray_site_dirs()
del _add_ray_site_dirs
