"""JupyterLab server for the Galata UI tests (started by playwright.config.js).

Never use this configuration elsewhere: it disables authentication and exposes JupyterLab's internals to
the page. It listens on loopback only, on the port Playwright picked.
"""

import os

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 - `c` is the config object Jupyter injects

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
c.ServerApp.port = int(os.environ["TRACEGRAD_GALATA_PORT"])  # noqa: F821
c.ServerApp.port_retries = 0  # noqa: F821 - fail loudly instead of silently moving to another port
c.ServerApp.allow_root = True  # noqa: F821 - CI containers run as root
c.ServerApp.open_browser = False  # noqa: F821
c.LabApp.news_url = None  # noqa: F821 - no network access from the tests
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"  # noqa: F821
