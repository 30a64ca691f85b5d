"""`python -m pts serve`: the lab dashboard over stored run folders (issue 22), read-only.

Rooms, lowest first: `safe.py` (which files may be served), `index.py` (the run folders under
the given folders, kept by mtime/size; every run read with pts.stored.data.load_run, the
report's one loader), `state.py` (running / finished / interrupted / resumable, and the live
state of a run in flight), `live.py` (one ledger poll per watched run, shared by its
server-sent-event clients), `metrics.py` (/metrics), `app.py` (`create_app(folders)`: the
routes and templates), `cli.py` (the command).
"""
